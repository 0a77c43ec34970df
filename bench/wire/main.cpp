// wire_bench's start: its options, then the answering process forked and the
// requesting one run here.
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>

#include <poll.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/core.h>

#include "bench/wire/wire_bench.hpp"

namespace wire_bench {

bench_config::bench_config() {
  add_message_type<plain_floats>("wire_bench::plain_floats");
  opt_group{custom_options_, "global"}
    .add(rounds, "rounds", "measured 407 KB round trips per repeat (shared_floats)")
    .add(plain_rounds, "plain-rounds",
         "measured 407 KB round trips per repeat (std::vector<float>, default encoding)")
    .add(small_rounds, "small-rounds", "measured small-message round trips per repeat")
    .add(warmup, "warmup", "unmeasured round trips before each measured run")
    .add(repeats, "repeats", "how often each case runs (interleaved)")
    .add(request_timeout_ms, "request-timeout-ms", "bound on each request")
    .add(deadline_s, "deadline-s", "bound on the whole run (SIGALRM)")
    .add(tls_dir, "tls", "mutual TLS with DIR/{ca,server,client}.{pem,key} "
                         "(scripts/make_certs.sh DIR server client)");
}

void bench_config::use_tls_role(const std::string& role) {
  if (tls_dir.empty())
    return;
  tls_cert = tls_dir + "/" + role + ".pem";
  tls_key = tls_dir + "/" + role + ".key";
  tls_ca = tls_dir + "/ca.pem";
}

} // namespace wire_bench

using namespace wire_bench;

namespace {

void stop_child(pid_t child, int control_fd) {
  if (control_fd >= 0)
    ::close(control_fd); // EOF: the child stops its actors and exits
  for (int i = 0; i < 100; ++i) { // 5 s for a clean exit
    int status = 0;
    auto r = ::waitpid(child, &status, WNOHANG);
    if (r == child || (r < 0 && errno == ECHILD))
      return;
    ::usleep(50000);
  }
  std::fprintf(stderr, "wire_bench: server process did not stop; killing it\n");
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
}

// Reads the port the child published (0: it did not) within 30 s.
uint16_t await_port(int port_fd) {
  using clock_type = std::chrono::steady_clock;
  uint16_t port = 0;
  pollfd pfd{port_fd, POLLIN, 0};
  size_t got = 0;
  const auto deadline = clock_type::now() + std::chrono::seconds{30};
  while (got < sizeof(port) && clock_type::now() < deadline) {
    auto left =
      std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock_type::now());
    auto r = ::poll(&pfd, 1, static_cast<int>(std::max<long>(1, left.count())));
    if (r < 0 && errno == EINTR)
      continue;
    if (r <= 0)
      break;
    auto n = ::read(port_fd, reinterpret_cast<char*>(&port) + got, sizeof(port) - got);
    if (n <= 0)
      break;
    got += static_cast<size_t>(n);
  }
  ::close(port_fd);
  return got == sizeof(port) ? port : 0;
}

void print_setup(const bench_config& cfg) {
  const auto policy = caf::get_or(cfg, "scheduler.policy", caf::defaults::scheduler::policy);
  double load[3] = {0, 0, 0};
  ::getloadavg(load, 3);
  fmt::print("wire_bench: 2 processes on 127.0.0.1, {}, scheduler.policy={}, "
             "max-threads={}, {} cores\n",
             cfg.tls_dir.empty() ? "plaintext" : "mutual TLS (" + cfg.tls_dir + ")",
             caf::to_string(policy),
             caf::get_or(cfg, "scheduler.max-threads", caf::defaults::scheduler::max_threads),
             ::sysconf(_SC_NPROCESSORS_ONLN));
  fmt::print("payload {} floats = {:.0f} bytes each way; warm-up {}, rounds: small {}, "
             "bulk {}, plain {}; {} repeats; load average {:.2f} {:.2f} {:.2f}\n",
             gradient_floats, bytes_per_direction, cfg.warmup, cfg.small_rounds, cfg.rounds,
             cfg.plain_rounds, cfg.repeats, load[0], load[1], load[2]);
}

} // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  bench_config cfg;
  if (auto err = cfg.parse(argc, argv)) {
    std::fprintf(stderr, "error: %s\n", caf::actor_system_config::render(err).c_str());
    return 2;
  }
  if (cfg.cli_helptext_printed)
    return 0;
  if (cfg.rounds + cfg.small_rounds + cfg.plain_rounds == 0 || cfg.repeats == 0) {
    std::fprintf(stderr, "error: nothing to measure\n");
    return 2;
  }
  // Bounds everything, the actor system's shutdown included; the child dies
  // with the parent (PR_SET_PDEATHSIG).
  ::alarm(static_cast<unsigned>(cfg.deadline_s));
  print_setup(cfg);
  int port_pipe[2], control_pipe[2];
  if (::pipe(port_pipe) != 0 || ::pipe(control_pipe) != 0) {
    std::perror("pipe");
    return 1;
  }
  const pid_t parent = ::getpid();
  const pid_t child = ::fork();
  if (child < 0) {
    std::perror("fork");
    return 1;
  }
  if (child == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent)
      ::_exit(1);
    ::close(port_pipe[0]);
    ::close(control_pipe[1]);
    ::alarm(0);
    const int rc = run_server(cfg, port_pipe[1], control_pipe[0]);
    std::fflush(nullptr);
    ::_exit(rc);
  }
  ::close(port_pipe[1]);
  ::close(control_pipe[0]);
  const uint16_t port = await_port(port_pipe[0]);
  if (port == 0) {
    std::fprintf(stderr, "wire_bench: the server process did not publish\n");
    stop_child(child, control_pipe[1]);
    return 1;
  }
  const int rc = run_client(cfg, port);
  stop_child(child, control_pipe[1]);
  return rc;
}
