// The guarded connection: BASP's reads pass through a header check first.
#include "actors/cluster/guarded_scribe.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstdio>

#include <caf/io/abstract_broker.hpp>
#include <caf/io/receive_policy.hpp>

namespace troupe::detail {

namespace {

using caf::io::receive_policy;

// Payloads read in pieces (the budget was spent) come this many bytes at a time.
constexpr size_t piece_size = size_t{64} << 10;

// The slowest a payload may come in, beyond the stall bound: CAF itself drops
// a connection that completes no frame within its connection timeout.
constexpr int64_t slowest_bytes_per_second = int64_t{1} << 20;

bool is_handshake(uint8_t operation) {
  return operation <= static_cast<uint8_t>(basp_operation::client_handshake);
}

} // namespace

std::string peer_of(caf::io::network::native_socket fd) {
  sockaddr_storage address{};
  socklen_t size = sizeof(address);
  if (getpeername(fd, reinterpret_cast<sockaddr*>(&address), &size) != 0)
    return "unknown peer";
  char host[INET6_ADDRSTRLEN] = {};
  uint16_t port = 0;
  if (address.ss_family == AF_INET) {
    const auto* v4 = reinterpret_cast<const sockaddr_in*>(&address);
    inet_ntop(AF_INET, &v4->sin_addr, host, sizeof(host));
    port = ntohs(v4->sin_port);
  } else if (address.ss_family == AF_INET6) {
    const auto* v6 = reinterpret_cast<const sockaddr_in6*>(&address);
    inet_ntop(AF_INET6, &v6->sin6_addr, host, sizeof(host));
    port = ntohs(v6->sin6_port);
  }
  return std::string{host} + ":" + std::to_string(port);
}

guarded_scribe::guarded_scribe(caf::io::network::default_multiplexer& mx,
                               caf::io::network::native_socket fd,
                               std::shared_ptr<connection_guard> guard, connection_end end,
                               bool counted)
  : scribe_impl(mx, fd), guard_(std::move(guard)), end_(end), peer_(peer_of(fd)),
    counted_(counted), unverified_since_ns_(guard_clock_ns()) {
  guard_->add(this);
}

guarded_scribe::~guarded_scribe() {
  guard_->remove(this);
  if (reserved_ > 0)
    guard_->release(reserved_);
  if (counted_)
    guard_->unverified_done();
}

void guarded_scribe::configure_read(receive_policy::config) {
  // The BASP broker asks for a header or for the payload its header
  // announced; this scribe follows the same frames itself and reads them
  // its own way. Asked while it hands a frame over, it applies its own
  // next read once the broker returns.
  if (!forwarding_)
    read_next();
}

bool guarded_scribe::consume(caf::execution_unit* ctx, const void* buf, size_t num_bytes) {
  if (refused_.load())
    reading_ = reading::refused;
  const auto* bytes = static_cast<const char*>(buf);
  switch (reading_) {
    case reading::header:
      return on_header_bytes(ctx, bytes, num_bytes);
    case reading::payload:
      return on_payload(ctx, num_bytes);
    case reading::payload_in_pieces:
      return on_payload_piece(ctx, bytes, num_bytes);
    case reading::refused:
      break; // the socket is shut down: the end of the stream follows
  }
  read_next();
  return true;
}

bool guarded_scribe::on_header_bytes(caf::execution_unit* ctx, const char* bytes, size_t count) {
  count = std::min(count, basp_header_size - header_have_);
  std::copy(bytes, bytes + count, header_bytes_ + header_have_);
  header_have_ += count;
  if (header_have_ < basp_header_size) {
    if (header_started_ns_.load() == 0)
      header_started_ns_.store(guard_clock_ns());
    read_next();
    return true;
  }
  header_have_ = 0;
  header_started_ns_.store(0);
  header_ = read_basp_header(header_bytes_);
  const auto& frames = guard_->settings().frames;
  auto why = refuse_basp_header(header_, end_, handshake_done_, frames);
  if (!why.empty()) {
    refuse(why);
    reading_ = reading::refused;
    read_next();
    return true;
  }
  if (header_.payload_len == 0) {
    reading_ = reading::header;
  } else if (guard_->reserve(header_.payload_len)) {
    reserved_ = header_.payload_len;
    reading_ = reading::payload;
  } else {
    pieces_.clear();
    reading_ = reading::payload_in_pieces;
  }
  if (header_.payload_len > 0) {
    payload_bytes_.store(header_.payload_len);
    payload_started_ns_.store(guard_clock_ns());
  }
  rd_buf().assign(header_bytes_, header_bytes_ + basp_header_size);
  const bool attached = forward(ctx, basp_header_size);
  read_next();
  return attached;
}

bool guarded_scribe::on_payload(caf::execution_unit* ctx, size_t count) {
  const bool attached = forward(ctx, count);
  guard_->release(reserved_);
  reserved_ = 0;
  payload_done();
  read_next();
  return attached;
}

bool guarded_scribe::on_payload_piece(caf::execution_unit* ctx, const char* bytes,
                                      size_t count) {
  pieces_.insert(pieces_.end(), bytes, bytes + count);
  if (pieces_.size() < header_.payload_len) {
    read_next();
    return true;
  }
  rd_buf().swap(pieces_);
  const bool attached = forward(ctx, header_.payload_len);
  // Give the frame's memory back rather than keep it as the read buffer.
  std::vector<char> frame;
  frame.swap(rd_buf());
  std::vector<char>{}.swap(pieces_);
  payload_done();
  read_next();
  return attached;
}

void guarded_scribe::payload_done() {
  reading_ = reading::header;
  payload_started_ns_.store(0);
  if (!handshake_done_ && is_handshake(header_.operation)) {
    handshake_done_ = true;
    unverified_since_ns_.store(0);
    if (counted_) {
      counted_ = false;
      guard_->unverified_done();
    }
  }
}

bool guarded_scribe::forward(caf::execution_unit* ctx, size_t count) {
  forwarding_ = true;
  const bool attached = scribe::consume(ctx, rd_buf().data(), count);
  forwarding_ = false;
  return attached;
}

void guarded_scribe::read_next() {
  switch (reading_) {
    case reading::header:
      scribe_impl::configure_read(receive_policy::at_most(basp_header_size - header_have_));
      break;
    case reading::payload:
      scribe_impl::configure_read(receive_policy::exactly(header_.payload_len));
      break;
    case reading::payload_in_pieces:
      scribe_impl::configure_read(
        receive_policy::at_most(std::min(piece_size, header_.payload_len - pieces_.size())));
      break;
    case reading::refused:
      scribe_impl::configure_read(receive_policy::at_most(piece_size));
      break;
  }
}

std::string guarded_scribe::stalled(int64_t now_ns) const {
  const int64_t bound_ns = std::chrono::nanoseconds(guard_->settings().stall_bound).count();
  const auto bound_ms = std::to_string(guard_->settings().stall_bound.count());
  const int64_t header_started = header_started_ns_.load();
  if (header_started != 0 && now_ns - header_started > bound_ns)
    return "it sent part of a BASP header and then nothing for " + bound_ms + " ms";
  const int64_t unverified_since = unverified_since_ns_.load();
  if (unverified_since != 0 && now_ns - unverified_since > bound_ns)
    return "it did not complete its BASP handshake within " + bound_ms + " ms";
  const int64_t payload_started = payload_started_ns_.load();
  const int64_t payload_bytes = payload_bytes_.load();
  const int64_t payload_bound_ns =
    std::max(bound_ns, payload_bytes * 1000000000 / slowest_bytes_per_second);
  if (payload_started != 0 && now_ns - payload_started > payload_bound_ns)
    return "it sent part of a frame of " + std::to_string(payload_bytes)
           + " bytes and not the rest within " + std::to_string(payload_bound_ns / 1000000)
           + " ms";
  return "";
}

void guarded_scribe::refuse(const std::string& why) {
  bool expected = false;
  if (!refused_.compare_exchange_strong(expected, true))
    return;
  std::fprintf(stderr, "troupe: closed the connection %s %s: %s\n",
               end_ == connection_end::accepted ? "from" : "to", peer_.c_str(), why.c_str());
  header_started_ns_.store(0);
  unverified_since_ns_.store(0);
  payload_started_ns_.store(0);
  // Closing here would skip BASP's bookkeeping for the connection: shut the
  // socket instead, and the next read ends the stream the usual way.
  ::shutdown(stream_.fd(), SHUT_RDWR);
}

guarded_doorman::guarded_doorman(caf::io::network::default_multiplexer& mx,
                                 caf::io::network::native_socket fd,
                                 std::shared_ptr<connection_guard> guard)
  : doorman_impl(mx, fd), guard_(std::move(guard)) {
}

bool guarded_doorman::new_connection() {
  // As doorman_impl::new_connection, with another scribe type.
  if (detached())
    return false;
  auto& mx = acceptor_.backend();
  const auto fd = acceptor_.accepted_socket();
  if (!guard_->admit_unverified()) {
    std::fprintf(stderr,
                 "troupe: closed the connection from %s: %zu connections have not completed "
                 "their handshake yet\n",
                 peer_of(fd).c_str(), guard_->unverified());
    caf::io::network::close_socket(fd);
    return true;
  }
  caf::io::scribe_ptr scribe =
    caf::make_counted<guarded_scribe>(mx, fd, guard_, connection_end::accepted, true);
  auto hdl = scribe->hdl();
  parent()->add_scribe(std::move(scribe));
  return doorman::new_connection(&mx, hdl);
}

} // namespace troupe::detail
