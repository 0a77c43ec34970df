// The wire's lossless codings between a replica and the shards it reaches
// through the network: answers coded against the version the replica holds
// (answer_delta.hpp) and pushes whose zeros travel as a mask (zero_mask.hpp).
// What a replica uses, and what they did in an epoch.
#pragma once

#include <cstdint>

#include <caf/meta/type_name.hpp>

namespace troupe::detail {

/// Says which codings a replica uses with shards it reaches through the network.
struct wire_coding {
  bool coded_answers = true; // ask for answers coded against its version; off: --whole-answers
  bool masked_pushes = true; // push gradients with their zeros as a mask; off: --whole-pushes
  bool pushes_ahead = false; // send a slice once the model wrote it: --pushes-ahead
};

/// Counts what the codings did: each kind's messages, the bytes they took
/// coded, and the bytes their values would have taken whole.
struct coded_traffic {
  uint64_t answers = 0;
  uint64_t answer_bytes = 0;
  uint64_t answer_whole_bytes = 0;
  uint64_t pushes = 0;
  uint64_t push_bytes = 0;
  uint64_t push_whole_bytes = 0;
  uint64_t pushes_ahead = 0; // slices sent while the model computed on

  coded_traffic& operator+=(const coded_traffic& other) {
    answers += other.answers;
    answer_bytes += other.answer_bytes;
    answer_whole_bytes += other.answer_whole_bytes;
    pushes += other.pushes;
    push_bytes += other.push_bytes;
    push_whole_bytes += other.push_whole_bytes;
    pushes_ahead += other.pushes_ahead;
    return *this;
  }
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, wire_coding& x) {
  return f(caf::meta::type_name("wire_coding"), x.coded_answers, x.masked_pushes,
           x.pushes_ahead);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, coded_traffic& x) {
  return f(caf::meta::type_name("coded_traffic"), x.answers, x.answer_bytes,
           x.answer_whole_bytes, x.pushes, x.push_bytes, x.push_whole_bytes,
           x.pushes_ahead);
}

} // namespace troupe::detail
