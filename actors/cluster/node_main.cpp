// The node program's logic: its options, its stop signals, listening for
// coordinators and shutting down within a bound.
#include "actors/cluster/node_main.hpp"

#include <fcntl.h>
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <thread>

#include <caf/all.hpp>
#include <caf/io/all.hpp>
#include <caf/openssl/manager.hpp>
#include <caf/openssl/publish.hpp>

#include "actors/config/cluster_config.hpp"
#include "actors/cluster/frame_guard.hpp"
#include "actors/cluster/host_lanes.hpp"
#include "actors/config/host_port.hpp"
#include "actors/cluster/node_service.hpp"
#include "actors/cluster/remote_replicas.hpp"
#include "actors/cluster/send_bound.hpp"
#include "actors/cluster/tls.hpp"
#include "actors/cluster/watched_request.hpp"
#include "actors/config/slow_replica.hpp"
#include "actors/runtime/known_peers.hpp"
#include "actors/runtime/node_fault.hpp"
#include "actors/store/variable_store.hpp"
#include "messages/errors.hpp"
#include "model/numerics_identity.hpp"

namespace troupe::detail {

namespace {

struct node_config : cluster_config {
  size_t port = 4242;
  std::string bind_address = "127.0.0.1";
  std::string model;
  size_t max_frame_size = default_max_frame_size;
  std::string slow_replica_text; // I:F, as mnist's
  std::string fault_text;        // kill@R, stop@R, refuse@R or refuse-store@R
  std::string join;              // HOST:PORT of a coordinator's --accept-joins
  std::string advertise;         // the host the coordinator reaches this node at
  bool no_host_lanes = false;

  node_config()
    : cluster_config("node", "Hosts replicas and store shards for Troupe coordinators, job "
                             "after job, until SIGINT or SIGTERM.") {
    const auto g = option_group::node;
    bind(g, port, "port", "TCP port to listen on (0: any free port, printed)");
    bind(g, bind_address, "bind", "address to listen on", option_hint{"ADDRESS"});
    bind(g, model, "model", "serve only this model", option_hint{}.otherwise("any"));
    bind(g, max_frame_size, "max-frame-size",
         "largest message payload a plaintext peer may announce; a larger one closes its "
         "connection",
         option_hint{}.in("bytes"));
    bind(g, join, "join",
         "join the run of the coordinator that accepts joins at this address, then serve "
         "as any node",
         option_hint{"H:P"});
    bind(g, advertise, "advertise",
         "the address the coordinator reaches this node at, for --join",
         option_hint{"HOST"}.otherwise("--bind"));
    bind(g, slow_replica_text, "slow-replica",
         "I:F makes replica I of every job here take F times its compute per step",
         option_hint{"I:F"});
    bind(g, fault_text, "fault",
         "kill@R or stop@R: this process sends itself SIGKILL or SIGSTOP as one of its "
         "replicas is about to push store round R, or one of its store shards to take a "
         "push of round R; refuse@R (refuse-store@R): from then on it refuses to start "
         "replicas (store shards), to try failures in an exact round",
         option_hint{"ACTION@R"});
    bind(g, no_host_lanes, "no-host-lanes",
         "send pushes and answers to processes of this host through the middleman, not "
         "through shared-memory lanes (plaintext runs take lanes)");
    add_replica_actor_type(*this);
    add_store_actor_type(*this);
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

// Blocks the stop signals before CAF starts its threads, so that none of
// them is interrupted, and routes them to stop_pipe; wait_for_stop unblocks
// them. False (with the reason printed) if the system refused.
bool catch_stop_signals(sigset_t& stop_signals) {
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
    return false;
  }
  return true;
}

// Returns the signal that stopped the node.
int wait_for_stop(const sigset_t& stop_signals) {
  pthread_sigmask(SIG_UNBLOCK, &stop_signals, nullptr);
  unsigned char signal_number = 0;
  while (read(stop_pipe[0], &signal_number, 1) != 1 && errno == EINTR) {
  }
  return signal_number;
}

// The node's lanes to processes of its host, unless TLS or --no-host-lanes.
std::unique_ptr<host_lanes> open_host_lanes(caf::actor_system& system, const node_config& cfg) {
  if (cfg.tls() || cfg.no_host_lanes)
    return nullptr;
  return std::make_unique<host_lanes>(system, host_lanes::capacity_for(cfg.max_frame_size));
}

// The node's own options, checked; an error names the option.
caf::error check_node_options(const node_config& cfg) {
  if (cfg.port > 65535)
    return make_troupe_error(troupe_errc::bad_config,
                             "--port=" + std::to_string(cfg.port) + " is not a TCP port");
  auto slow = parse_slow_replica(cfg.slow_replica_text);
  if (!slow)
    return slow.error();
  if (slow->factor != 1.0f)
    slow_remote_replica(slow->index, slow->factor);
  auto fault = parse_node_fault(cfg.fault_text);
  if (!fault)
    return fault.error();
  plan_node_fault(*fault);
  const bool any_address = cfg.bind_address == "0.0.0.0" || cfg.bind_address == "::";
  if (!cfg.join.empty() && cfg.advertise.empty() && any_address)
    return make_troupe_error(troupe_errc::bad_config,
                             "--join with --bind=" + cfg.bind_address
                               + ": say where the coordinator reaches this node with "
                                 "--advertise=HOST");
  return check_max_frame_size(cfg.max_frame_size);
}

// Asks the coordinator at --join to take this node into its run, which
// connects back to it as to any node; the error says why it would not.
caf::expected<std::string> join_run(caf::actor_system& system, const node_config& cfg,
                                    uint16_t port) {
  auto coordinator = parse_host_port(cfg.join);
  if (!coordinator)
    return make_troupe_error(troupe_errc::bad_config, "--join: " + describe(coordinator.error()));
  caf::io::middleman_actor manager = cfg.tls() ? system.openssl_manager().actor_handle()
                                               : guarded_middleman(system);
  const auto timeout = std::chrono::seconds(30);
  caf::expected<join_door_actor> door = caf::sec::request_timeout;
  caf::scoped_actor self{system};
  self->request(manager, timeout, caf::connect_atom::value, coordinator->host, coordinator->port)
    .receive(
      [&](const caf::node_id&, caf::strong_actor_ptr& ptr, const std::set<std::string>& ifs) {
        if (!ptr || ifs != system.message_types<join_door_actor>())
          door = make_troupe_error(troupe_errc::bad_config,
                                   cfg.join + " is not a Troupe coordinator accepting joins");
        else
          door = caf::actor_cast<join_door_actor>(std::move(ptr));
      },
      [&](caf::error& err) { door = std::move(err); });
  if (!door)
    return make_troupe_error(troupe_errc::bad_config,
                             "cannot reach " + cfg.join + ": " + describe(door.error()));
  bound_unacknowledged_sends(system);
  const auto host = cfg.advertise.empty() ? cfg.bind_address : cfg.advertise;
  return ask_watching<std::string>(system, *door, *door, timeout, "joining the run at " + cfg.join,
                                   join_atom::value, host, port);
}

// Why `address`:`port` cannot be bound, as the system says (e.g. "Address
// already in use"), or "" if it can be: CAF's own error does not say.
std::string why_not_bindable(const std::string& address, uint16_t port) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICHOST | AI_PASSIVE;
  addrinfo* found = nullptr;
  if (getaddrinfo(address.c_str(), std::to_string(port).c_str(), &hints, &found) != 0)
    return "";
  std::string why;
  const int fd = socket(found->ai_family, found->ai_socktype, found->ai_protocol);
  const int yes = 1;
  if (fd >= 0) {
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes); // as CAF's publish does
    if (::bind(fd, found->ai_addr, found->ai_addrlen) != 0)
      why = std::strerror(errno);
    close(fd);
  }
  freeaddrinfo(found);
  return why;
}

// Publishes the node service on --bind:--port: with TLS, the handshake
// refuses a peer without a cluster certificate before BASP reads a byte from
// it; in plaintext, connections that announce oversized frames are closed
// (actors/cluster/frame_guard.hpp).
caf::expected<uint16_t> listen(caf::actor_system& system, const node_config& cfg,
                               const node_actor& service) {
  const auto requested = static_cast<uint16_t>(cfg.port);
  auto port = cfg.tls()
                ? caf::openssl::publish(service, requested, cfg.bind_address.c_str(), true)
                : publish_guarded(system, caf::actor_cast<caf::strong_actor_ptr>(service),
                                  system.message_types(service), requested, cfg.bind_address,
                                  true, cfg.max_frame_size);
  if (port) {
    bound_unacknowledged_sends(system); // the listening socket passes it on
    return port;
  }
  auto why = requested != 0 ? why_not_bindable(cfg.bind_address, requested) : "";
  if (why.empty())
    why = describe(port.error());
  return make_troupe_error(troupe_errc::bad_config, "cannot listen on " + cfg.bind_address + ":"
                                                      + std::to_string(cfg.port) + ": " + why);
}

void print_listening(const node_config& cfg, uint16_t port) {
  std::printf("troupe node listening on %s:%u (%s)\n", cfg.bind_address.c_str(),
              static_cast<unsigned>(port), cfg.tls() ? "mutual TLS" : "plaintext");
  const auto numerics = current_numerics();
  std::printf("troupe node: GEMM kernel %s (%s multiply-add), %s, %s\n",
              numerics.gemm_kernel.c_str(), numerics.gemm_family.c_str(),
              numerics.build.c_str(), numerics.libm.c_str());
}

} // namespace

int run_node_program(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  sigset_t stop_signals;
  if (!catch_stop_signals(stop_signals))
    return 1;
  node_config cfg;
  if (auto exit_code = cfg.parse_and_prepare(argc, argv))
    return *exit_code;
  if (auto err = check_node_options(cfg)) {
    std::fprintf(stderr, "error: %s\n", describe(err).c_str());
    return 2;
  }
  if (!cfg.tls() && !is_loopback(cfg.bind_address))
    std::fprintf(stderr,
                 "warning: listening on %s without TLS: anyone who reaches this port can "
                 "run jobs here (use --tls-cert, --tls-key and --tls-ca)\n",
                 cfg.bind_address.c_str());
  caf::actor_system system{cfg};
  greet_node(system.node());
  node_options options;
  options.model = cfg.model;
  options.protocol_version = static_cast<uint32_t>(cfg.protocol_version);
  options.tls = cfg.tls();
  options.max_frame_size = cfg.tls() ? 0 : cfg.max_frame_size;
  const auto lanes = open_host_lanes(system, cfg);
  auto service = spawn_node_service(system, options);
  auto port = listen(system, cfg, service);
  if (!port) {
    std::fprintf(stderr, "error: %s\n", describe(port.error()).c_str());
    caf::anon_send_exit(service, caf::exit_reason::user_shutdown);
    return 1;
  }
  print_listening(cfg, *port);
  if (!cfg.join.empty()) {
    auto joined = join_run(system, cfg, *port);
    if (!joined) {
      std::fprintf(stderr, "error: could not join the run at %s: %s\n", cfg.join.c_str(),
                   describe(joined.error()).c_str());
      stop_remote_replicas();
      caf::anon_send_exit(service, caf::exit_reason::user_shutdown);
      return 1;
    }
    std::printf("troupe node: joined the run at %s, %s\n", cfg.join.c_str(), joined->c_str());
  }
  const int signal_number = wait_for_stop(stop_signals);
  std::printf("troupe node: stopping (%s)\n", signal_number == SIGINT ? "SIGINT" : "SIGTERM");
  stop_remote_replicas();
  caf::anon_send_exit(service, caf::exit_reason::user_shutdown);
  // CAF 0.17 sometimes never finishes destroying a remote-spawned detached
  // replica stopped mid-request, and the actor system's destructor waits
  // for it forever: bound the wait.
  std::thread([] {
    std::this_thread::sleep_for(std::chrono::seconds(3));
    std::fprintf(stderr, "troupe node: CAF did not finish shutting down within 3 s; "
                         "exiting anyway\n");
    std::_Exit(0);
  }).detach();
  return 0;
}

} // namespace troupe::detail
