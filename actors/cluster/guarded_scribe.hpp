// CAF 0.17 connections that check every BASP header before the BASP broker
// reads it (basp_header_check.hpp), size payload buffers only within a shared
// budget, and close when a peer stalls (connection_guard.hpp). Internal to
// frame_guard.cpp: it includes CAF's I/O implementation headers.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include <caf/io/network/default_multiplexer.hpp>
#include <caf/io/network/doorman_impl.hpp>
#include <caf/io/network/scribe_impl.hpp>

#include "actors/cluster/basp_header_check.hpp"
#include "actors/cluster/connection_guard.hpp"

namespace troupe::detail {

/// A TCP connection whose bytes pass a BASP header check on their way to
/// CAF. It reads headers itself, a few bytes at a time if they come so, and
/// hands each header and payload to the broker only once it has passed;
/// a payload is read into a buffer of its announced size when the guard's
/// budget has room, else in pieces as its bytes arrive.
class guarded_scribe final : public caf::io::network::scribe_impl, public watched_connection {
public:
  /// `counted`: the connection was admitted as unverified (admit_unverified)
  /// and uncounts itself once its peer's handshake passed or it closes.
  guarded_scribe(caf::io::network::default_multiplexer& mx, caf::io::network::native_socket fd,
                 std::shared_ptr<connection_guard> guard, connection_end end, bool counted);
  ~guarded_scribe() override;

  void configure_read(caf::io::receive_policy::config config) override;
  bool consume(caf::execution_unit* ctx, const void* buf, size_t num_bytes) override;

  std::string stalled(int64_t now_ns) const override;
  void refuse(const std::string& why) override;

private:
  enum class reading { header, payload, payload_in_pieces, refused };

  bool on_header_bytes(caf::execution_unit* ctx, const char* bytes, size_t count);
  bool on_payload(caf::execution_unit* ctx, size_t count);
  bool on_payload_piece(caf::execution_unit* ctx, const char* bytes, size_t count);
  void payload_done();
  bool forward(caf::execution_unit* ctx, size_t count);
  void read_next();

  std::shared_ptr<connection_guard> guard_;
  const connection_end end_;
  const std::string peer_;
  bool counted_;
  reading reading_ = reading::header;
  bool forwarding_ = false;
  bool handshake_done_ = false;
  unsigned char header_bytes_[basp_header_size] = {};
  size_t header_have_ = 0;
  basp_header header_;
  uint64_t reserved_ = 0;
  std::vector<char> pieces_;
  std::atomic<int64_t> header_started_ns_{0};
  std::atomic<int64_t> payload_started_ns_{0};
  std::atomic<uint32_t> payload_bytes_{0};
  std::atomic<int64_t> unverified_since_ns_;
  std::atomic<bool> refused_{false};
};

/// A listening socket whose accepted connections are guarded_scribes, and
/// which closes a new connection at once while the guard's max_unverified
/// connections have not completed a handshake.
class guarded_doorman final : public caf::io::network::doorman_impl {
public:
  guarded_doorman(caf::io::network::default_multiplexer& mx, caf::io::network::native_socket fd,
                  std::shared_ptr<connection_guard> guard);

  bool new_connection() override;

private:
  std::shared_ptr<connection_guard> guard_;
};

/// Returns "HOST:PORT" of the peer of socket `fd` ("unknown peer" if none).
std::string peer_of(caf::io::network::native_socket fd);

} // namespace troupe::detail
