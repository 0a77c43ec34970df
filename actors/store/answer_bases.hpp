// The parameters a shard's last answers carried, as they went on the wire,
// so that the answer to a replica holding one of them can travel coded
// against it (messages/answer_delta.hpp).
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <vector>

#include "messages/protocol.hpp"

namespace troupe::detail {

/// Keeps the values of the last few versions a shard answered with and the
/// last code made from them, which every answer of the same two versions
/// shares (a sync round codes once for all its replicas).
class answer_bases {
public:
  /// Keeps the values of `answer` (host floats, rounded to the wire's codec,
  /// at `answer.version`) as a base once some push has asked for a coded
  /// answer, and codes them against version `base` when that is kept: when
  /// the code is smaller the answer carries it instead of its values.
  void code(params_msg& answer, std::optional<uint64_t> base);

private:
  struct kept_version {
    uint64_t version = 0;
    std::shared_ptr<const std::vector<float>> values;
  };
  struct kept_code {
    uint64_t base = 0;
    uint64_t version = 0;
    std::optional<answer_delta> delta; // nothing: the code was not smaller
  };

  const kept_version* find(uint64_t version) const;
  void keep(const params_msg& answer);

  // Newest last: a sync round's base is the version before, a delayed
  // policy's answers lag a few.
  static constexpr size_t kept_versions = 3;
  std::deque<kept_version> versions_;
  std::optional<kept_code> last_code_;
  bool asked_ = false; // a push has asked for a coded answer
};

} // namespace troupe::detail
