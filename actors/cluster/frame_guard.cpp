// A BASP listening port whose connections refuse oversized frames: CAF 0.17's
// BASP broker sizes its receive buffer from the payload_len of a header that
// nobody has authenticated yet, so 32 bytes could make it allocate 4 GiB.
#include "actors/cluster/frame_guard.hpp"

#include <sys/socket.h>

#include <cinttypes>
#include <cstdio>

#include <caf/all.hpp>
#include <caf/io/all.hpp>
#include <caf/io/basp_broker.hpp>
#include <caf/io/network/default_multiplexer.hpp>
#include <caf/io/network/doorman_impl.hpp>
#include <caf/io/network/scribe_impl.hpp>

#include "messages/errors.hpp"

namespace troupe {

namespace {

using caf::io::network::default_multiplexer;
using caf::io::network::native_socket;

// A connection that refuses to read a frame larger than its limit. The BASP
// broker calls configure_read on the middleman's I/O thread with the size it
// is about to receive, and CAF's stream resizes (and zero-fills) its buffer to
// that size before reading a byte: this is the last point before the
// allocation.
class guarded_scribe : public caf::io::network::scribe_impl {
public:
  guarded_scribe(default_multiplexer& mx, native_socket fd, uint64_t limit)
      : scribe_impl(mx, fd), limit_(limit) {
  }

  void configure_read(caf::io::receive_policy::config config) override {
    if (config.second <= limit_) {
      scribe_impl::configure_read(config);
      return;
    }
    if (!refused_) {
      refused_ = true;
      std::fprintf(stderr,
                   "troupe: closed the connection from %s:%u: it announced a frame of "
                   "%zu bytes, over --max-frame-size=%" PRIu64 "\n",
                   addr().c_str(), static_cast<unsigned>(port()), config.second, limit_);
      // Closing here, inside the broker's handler, would skip BASP's
      // bookkeeping for the connection. Shut the socket instead and ask for
      // one byte: the next read sees the end of the stream (or a payload
      // shorter than announced), and BASP drops the connection its usual way.
      ::shutdown(stream_.fd(), SHUT_RDWR);
    }
    scribe_impl::configure_read(caf::io::receive_policy::at_most(1));
  }

private:
  uint64_t limit_;
  bool refused_ = false;
};

// CAF's doorman, except that each accepted connection is a guarded_scribe.
class guarded_doorman : public caf::io::network::doorman_impl {
public:
  guarded_doorman(default_multiplexer& mx, native_socket fd, uint64_t limit)
      : doorman_impl(mx, fd), limit_(limit) {
  }

  bool new_connection() override {
    // As doorman_impl::new_connection, with another scribe type.
    if (detached())
      return false;
    auto& mx = acceptor_.backend();
    caf::io::scribe_ptr scribe = caf::make_counted<guarded_scribe>(
      mx, acceptor_.accepted_socket(), limit_);
    auto hdl = scribe->hdl();
    parent()->add_scribe(std::move(scribe));
    return doorman::new_connection(&mx, hdl);
  }

private:
  uint64_t limit_;
};

} // namespace

caf::error check_max_frame_size(uint64_t bytes) {
  if (bytes < min_max_frame_size || bytes > max_max_frame_size)
    return make_troupe_error(troupe_errc::bad_config,
                             "--max-frame-size=" + std::to_string(bytes) + " is out of range: "
                               + std::to_string(min_max_frame_size) + " (64 KiB) to "
                               + std::to_string(max_max_frame_size) + " (4 GiB - 1) bytes");
  return caf::none;
}

caf::expected<uint16_t> publish_guarded(caf::actor_system& system,
                                        const caf::strong_actor_ptr& whom,
                                        std::set<std::string> sigs, uint16_t port,
                                        const std::string& addr, bool reuse_addr,
                                        uint64_t max_frame_size) {
  if (auto err = check_max_frame_size(max_frame_size))
    return err;
  if (!whom)
    return caf::make_error(caf::sec::cannot_publish_invalid_actor);
  // What CAF 0.17's middleman actor does for publish (middleman_actor_impl:
  // open a doorman, hand it to the BASP broker), with our doorman type.
  auto& mx = static_cast<default_multiplexer&>(system.middleman().backend());
  auto fd = caf::io::network::new_tcp_acceptor_impl(port, addr.empty() ? nullptr : addr.c_str(),
                                                    reuse_addr);
  if (!fd)
    return std::move(fd.error());
  caf::io::doorman_ptr doorman = caf::make_counted<guarded_doorman>(mx, *fd, max_frame_size);
  const auto actual_port = doorman->port();
  auto basp = system.middleman().named_broker<caf::io::basp_broker>(caf::atom("BASP"));
  caf::anon_send(basp, caf::publish_atom::value, std::move(doorman), actual_port, whom,
                 std::move(sigs));
  return actual_port;
}

} // namespace troupe
