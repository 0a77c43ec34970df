// Process A of wire_bench: the actor that answers each request.
#include <cerrno>
#include <cstdio>
#include <memory>

#include <unistd.h>

#include <caf/io/all.hpp>
#include <caf/openssl/publish.hpp>

#include "bench/wire/wire_bench.hpp"
#include "messages/errors.hpp"
#include "messages/protocol.hpp"

namespace wire_bench {

using namespace troupe;

namespace {

caf::behavior wire_server(caf::event_based_actor*) {
  auto params = shared_floats{
    std::make_shared<const std::vector<float>>(gradient_floats, 0.25f)};
  auto plain = std::make_shared<const std::vector<float>>(gradient_floats, 0.25f);
  return {
    [](ping_atom) { return caf::ok_atom::value; },
    [params](const push_msg& push) -> caf::result<params_msg> {
      if (push.gradient.size() != gradient_floats)
        return caf::make_error(caf::sec::invalid_argument, "gradient size");
      params_msg answer;
      answer.version = push.base_version + 1;
      answer.round = push.round + 1;
      answer.values = params; // shared: no copy here, one raw block on the wire
      return answer;
    },
    [plain](const plain_floats& push) -> caf::result<plain_floats> {
      if (push.values.size() != gradient_floats)
        return caf::make_error(caf::sec::invalid_argument, "gradient size");
      return plain_floats{*plain};
    },
  };
}

bool write_all(int fd, const void* data, size_t size) {
  auto p = static_cast<const char*>(data);
  while (size > 0) {
    auto n = ::write(fd, p, size);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

void wait_for_eof(int fd) {
  char byte;
  while (::read(fd, &byte, 1) < 0 && errno == EINTR) {
  }
}

} // namespace

int run_server(bench_config& cfg, int port_fd, int control_fd) {
  uint16_t port = 0;
  cfg.use_tls_role("server");
  if (auto err = cfg.prepare()) {
    std::fprintf(stderr, "server: %s\n", describe(err).c_str());
    write_all(port_fd, &port, sizeof(port));
    return 1;
  }
  int rc = 0;
  caf::actor_system system{cfg};
  auto server = system.spawn(wire_server);
  auto published = cfg.tls() ? caf::openssl::publish(server, 0, "127.0.0.1", true)
                             : system.middleman().publish(server, 0, "127.0.0.1", true);
  if (published) {
    port = *published;
  } else {
    std::fprintf(stderr, "server: cannot publish: %s\n", describe(published.error()).c_str());
    rc = 1;
  }
  if (!write_all(port_fd, &port, sizeof(port)))
    rc = 1;
  ::close(port_fd);
  if (rc == 0)
    wait_for_eof(control_fd); // the parent is done
  caf::anon_send_exit(server, caf::exit_reason::user_shutdown);
  return rc;
}

} // namespace wire_bench
