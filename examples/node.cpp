// A node: hosts replicas for a remote coordinator. Start one per worker host,
// then point the coordinator at them:
//
//   build/examples/node --port=4001                      (loopback by default)
//   build/examples/mnist --nodes=127.0.0.1:4001,127.0.0.1:4002 --replicas-per-node=1
//
// It serves job after job until SIGINT or SIGTERM; when a coordinator dies,
// its replicas here stop with it.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include <caf/all.hpp>
#include <caf/io/all.hpp>
#include <caf/openssl/publish.hpp>

#include "actors/cluster/cluster_config.hpp"
#include "actors/cluster/frame_guard.hpp"
#include "actors/cluster/node_service.hpp"
#include "actors/cluster/remote_replicas.hpp"
#include "actors/config/fit_options.hpp"
#include "actors/store/variable_store.hpp"
#include "actors/cluster/tls.hpp"
#include "messages/errors.hpp"
#include "model/numerics_identity.hpp"

namespace {

struct node_config : troupe::cluster_config {
  size_t port = 4242;
  std::string bind = "127.0.0.1";
  std::string model;
  size_t max_frame_size = troupe::default_max_frame_size;
  std::string slow_replica; // I:F, as mnist's

  node_config() {
    opt_group{custom_options_, "global"}
      .add(port, "port", "TCP port to listen on (0: any free port, printed)")
      .add(bind, "bind", "address to listen on (default loopback)")
      .add(model, "model", "serve only this model (default: any)")
      .add(max_frame_size, "max-frame-size",
           "largest message payload a plaintext peer may announce, in bytes (default "
           "64 MiB); a larger one closes its connection")
      .add(slow_replica, "slow-replica",
           "I:F makes replica I of every job here take F times its compute per step");
    troupe::add_replica_actor_type(*this);
    troupe::add_store_actor_type(*this);
  }
};

// Stop signals reach main through this pipe, whichever thread the kernel
// delivers them to: threads started before main (OpenBLAS starts its pool
// when the library loads) do not block them, and a signal that lands there
// while main is not inside a wait would otherwise kill the node outright.
int stop_pipe[2] = {-1, -1};

extern "C" void on_stop_signal(int signal_number) {
  const auto byte = static_cast<unsigned char>(signal_number);
  (void) !write(stop_pipe[1], &byte, 1);
}

} // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  // Block the stop signals before CAF starts its threads, so that none of
  // them is interrupted; main unblocks them once it waits for one below.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  struct sigaction on_stop {};
  on_stop.sa_handler = on_stop_signal;
  sigemptyset(&on_stop.sa_mask);
  on_stop.sa_flags = SA_RESTART;
  if (pipe2(stop_pipe, O_CLOEXEC) != 0 || fcntl(stop_pipe[1], F_SETFL, O_NONBLOCK) != 0
      || sigaction(SIGINT, &on_stop, nullptr) != 0
      || sigaction(SIGTERM, &on_stop, nullptr) != 0) {
    std::perror("error: cannot set up the stop signals");
    return 1;
  }

  node_config cfg;
  if (auto exit_code = cfg.parse_and_prepare(argc, argv))
    return *exit_code;
  if (cfg.port > 65535) {
    std::fprintf(stderr, "error: --port=%zu is not a TCP port\n", cfg.port);
    return 2;
  }
  if (!cfg.slow_replica.empty()) {
    auto slow = troupe::parse_slow_replica(cfg.slow_replica);
    if (!slow) {
      std::fprintf(stderr, "error: %s\n", troupe::describe(slow.error()).c_str());
      return 2;
    }
    troupe::slow_remote_replica(slow->first, slow->second);
  }
  if (auto err = troupe::check_max_frame_size(cfg.max_frame_size)) {
    std::fprintf(stderr, "error: %s\n", troupe::describe(err).c_str());
    return 2;
  }
  if (!cfg.tls() && !troupe::is_loopback(cfg.bind))
    std::fprintf(stderr,
                 "warning: listening on %s without TLS: anyone who reaches this port can "
                 "run jobs here (use --tls-cert, --tls-key and --tls-ca)\n",
                 cfg.bind.c_str());
  caf::actor_system system{cfg};
  troupe::node_options options;
  options.model = cfg.model;
  options.protocol_version = static_cast<uint32_t>(cfg.protocol_version);
  options.tls = cfg.tls();
  auto service = troupe::spawn_node_service(system, options);
  const auto requested = static_cast<uint16_t>(cfg.port);
  // Plaintext: a port whose connections refuse oversized frames (actors/cluster/frame_guard.hpp).
  // With TLS, the handshake refuses a peer without a cluster certificate before
  // BASP reads a byte from it.
  auto port = cfg.tls() ? caf::openssl::publish(service, requested, cfg.bind.c_str(), true)
                        : troupe::publish_guarded(system,
                                                  caf::actor_cast<caf::strong_actor_ptr>(service),
                                                  system.message_types(service), requested,
                                                  cfg.bind, true, cfg.max_frame_size);
  if (!port) {
    std::fprintf(stderr, "error: cannot listen on %s:%zu: %s\n", cfg.bind.c_str(), cfg.port,
                 troupe::describe(port.error()).c_str());
    caf::anon_send_exit(service, caf::exit_reason::user_shutdown);
    return 1;
  }
  const auto address = cfg.bind + ":" + std::to_string(*port);
  std::printf("troupe node listening on %s (%s)\n", address.c_str(),
              cfg.tls() ? "mutual TLS" : "plaintext");
  const auto numerics = troupe::current_numerics();
  std::printf("troupe node: GEMM kernel %s (%s multiply-add), %s, %s\n",
              numerics.gemm_kernel.c_str(), numerics.gemm_family.c_str(),
              numerics.build.c_str(), numerics.libm.c_str());
  pthread_sigmask(SIG_UNBLOCK, &stop_signals, nullptr);
  unsigned char signal_number = 0;
  while (read(stop_pipe[0], &signal_number, 1) != 1 && errno == EINTR) {
  }
  std::printf("troupe node: stopping (%s)\n", signal_number == SIGINT ? "SIGINT" : "SIGTERM");
  troupe::stop_remote_replicas();
  caf::anon_send_exit(service, caf::exit_reason::user_shutdown);
  // CAF 0.17 sometimes never finishes destroying a remote-spawned detached
  // replica stopped mid-request (about 1 stop in 20 with a job running), and
  // the actor system's destructor waits for it forever: bound the wait.
  std::thread([] {
    std::this_thread::sleep_for(std::chrono::seconds(3));
    std::fprintf(stderr, "troupe node: CAF did not finish shutting down within 3 s; "
                         "exiting anyway\n");
    std::_Exit(0);
  }).detach();
  return 0;
}
