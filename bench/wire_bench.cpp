// Round trips between two real processes over loopback through CAF's
// middleman: what a replica and the store exchange each step. Process B (this
// one) requests from an actor in process A (a fork of it):
//   small: a bare atom, answered by an atom (per-message latency);
//   bulk:  push_msg with a 407 KB gradient, answered by a params_msg of the same
//          size (shared_floats: one raw block per buffer);
//   plain: the same sizes as a registered std::vector<float> wrapper with the
//          generic inspect (CAF's element-by-element default encoding).
// Each case runs --repeats times (interleaved), each time --warmup round trips
// then the measured ones. Prints figures; it is not a test.
//
//   build/bench/wire_bench [--rounds=300] [--warmup=30] [--small-rounds=2000]
//       [--plain-rounds=300] [--repeats=3] [--tls=DIR] [--scheduler.policy=sharing]
//
// --tls=DIR takes a directory made by scripts/make_certs.sh DIR server client.
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <poll.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <caf/all.hpp>
#include <caf/io/all.hpp>
#include <caf/openssl/manager.hpp>
#include <caf/openssl/publish.hpp>

#include <fmt/core.h>

#include "actors/config/cluster_config.hpp"
#include "messages/errors.hpp"
#include "messages/protocol.hpp"

using namespace troupe;

namespace {

using clock_type = std::chrono::steady_clock;

// The 784-128relu-10 model: 784*128 + 128 + 128*10 + 10 parameters.
constexpr size_t gradient_floats = 101770;
constexpr double bytes_per_direction = gradient_floats * sizeof(float); // 407,080

using ping_atom = caf::atom_constant<caf::atom("wbping")>;
using go_atom = caf::atom_constant<caf::atom("wbgo")>;

// The comparison case: a plain std::vector<float> with CAF's generic inspect,
// registered in this benchmark's config only.
struct plain_floats {
  std::vector<float> values;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, plain_floats& x) {
  return f(caf::meta::type_name("plain_floats"), x.values);
}

enum class kind { small, bulk, plain };

const char* kind_name(kind k) {
  switch (k) {
    case kind::small: return "small";
    case kind::bulk: return "bulk";
    case kind::plain: return "plain";
  }
  return "?";
}

struct bench_config : cluster_config {
  size_t rounds = 300;
  size_t warmup = 30;
  size_t small_rounds = 2000;
  size_t plain_rounds = 300;
  size_t repeats = 3;
  size_t request_timeout_ms = 10000;
  size_t deadline_s = 900;
  std::string tls_dir;

  bench_config() {
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
};

// ---- process A: the answering actor --------------------------------------

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

// Runs in the child: publishes the server, sends its port (0 on failure)
// through port_fd, then serves until control_fd reaches EOF (the parent closed
// it or died).
int run_server(bench_config& cfg, int port_fd, int control_fd) {
  uint16_t port = 0;
  if (!cfg.tls_dir.empty()) {
    cfg.tls_cert = cfg.tls_dir + "/server.pem";
    cfg.tls_key = cfg.tls_dir + "/server.key";
    cfg.tls_ca = cfg.tls_dir + "/ca.pem";
  }
  if (auto err = cfg.prepare()) {
    std::fprintf(stderr, "server: %s\n", describe(err).c_str());
    write_all(port_fd, &port, sizeof(port));
    return 1;
  }
  int rc = 0;
  {
    caf::actor_system system{cfg};
    auto server = system.spawn(wire_server);
    auto published = cfg.tls() ? caf::openssl::publish(server, 0, "127.0.0.1", true)
                               : system.middleman().publish(server, 0, "127.0.0.1", true);
    if (!published) {
      std::fprintf(stderr, "server: cannot publish: %s\n",
                   describe(published.error()).c_str());
      rc = 1;
    } else {
      port = *published;
    }
    if (!write_all(port_fd, &port, sizeof(port)))
      rc = 1;
    ::close(port_fd);
    if (rc == 0) {
      char byte;
      while (true) {
        auto n = ::read(control_fd, &byte, 1);
        if (n < 0 && errno == EINTR)
          continue;
        break; // EOF or error: the parent is done
      }
    }
    caf::anon_send_exit(server, caf::exit_reason::user_shutdown);
  }
  return rc;
}

// ---- process B: the requesting actor -------------------------------------

struct client_state {
  caf::actor server;
  kind what = kind::small;
  size_t total = 0;
  size_t warmup = 0;
  size_t done = 0;
  caf::timespan timeout{};
  shared_floats gradient;
  std::vector<float> plain;
  std::shared_ptr<std::vector<double>> micros;
  caf::response_promise promise;
  clock_type::time_point start;
  std::function<void()> next;
};

// Sends one request at a time, each after the previous answer (like a replica),
// and records each round trip after the warm-up.
caf::behavior wire_client(caf::stateful_actor<client_state>* self, caf::actor server,
                          kind what, size_t warmup, size_t rounds, caf::timespan timeout,
                          std::shared_ptr<std::vector<double>> micros) {
  auto& st = self->state;
  st.server = std::move(server);
  st.what = what;
  st.warmup = warmup;
  st.total = warmup + rounds;
  st.timeout = timeout;
  st.micros = std::move(micros);
  st.micros->reserve(rounds);
  if (what == kind::bulk)
    st.gradient = shared_floats{
      std::make_shared<const std::vector<float>>(gradient_floats, 0.5f)};
  if (what == kind::plain)
    st.plain.assign(gradient_floats, 0.5f);
  auto fail = [self](caf::error& err) {
    self->state.promise.deliver(std::move(err));
    self->quit();
  };
  auto answered = [self] {
    auto& s = self->state;
    auto us = std::chrono::duration<double, std::micro>(clock_type::now() - s.start).count();
    if (s.done >= s.warmup)
      s.micros->push_back(us);
    ++s.done;
    s.next();
  };
  auto bad_answer = [self] {
    self->state.promise.deliver(
      caf::make_error(caf::sec::unexpected_response, "answer of the wrong size"));
    self->quit();
  };
  st.next = [self, fail, answered, bad_answer] {
    auto& s = self->state;
    if (s.done == s.total) {
      s.promise.deliver(caf::ok_atom::value);
      self->quit();
      return;
    }
    switch (s.what) {
      case kind::small:
        s.start = clock_type::now();
        self->request(s.server, s.timeout, ping_atom::value)
          .then([answered](caf::ok_atom) { answered(); }, fail);
        break;
      case kind::bulk: {
        push_msg push;
        push.replica = 1;
        push.round = s.done;
        push.base_version = s.done;
        push.batch_size = 32;
        push.gradient = s.gradient; // shared, as a replica's push
        s.start = clock_type::now();
        self->request(s.server, s.timeout, std::move(push))
          .then(
            [answered, bad_answer](const params_msg& params) {
              if (params.values.size() != gradient_floats)
                bad_answer();
              else
                answered();
            },
            fail);
        break;
      }
      case kind::plain: {
        plain_floats push{s.plain}; // the copy is not timed
        s.start = clock_type::now();
        self->request(s.server, s.timeout, std::move(push))
          .then(
            [answered, bad_answer](const plain_floats& params) {
              if (params.values.size() != gradient_floats)
                bad_answer();
              else
                answered();
            },
            fail);
        break;
      }
    }
  };
  return {
    [self](go_atom) -> caf::response_promise {
      self->state.promise = self->make_response_promise();
      self->state.next();
      return self->state.promise;
    },
  };
}

struct summary {
  double mean = 0, median = 0, p10 = 0, p90 = 0, min = 0, max = 0;
};

summary summarize(std::vector<double> xs) {
  summary s;
  if (xs.empty())
    return s;
  std::sort(xs.begin(), xs.end());
  double sum = 0;
  for (auto x : xs)
    sum += x;
  auto at = [&](double q) { return xs[static_cast<size_t>(q * (xs.size() - 1) + 0.5)]; };
  s.mean = sum / xs.size();
  s.median = xs.size() % 2 ? xs[xs.size() / 2]
                           : (xs[xs.size() / 2 - 1] + xs[xs.size() / 2]) / 2;
  s.p10 = at(0.1);
  s.p90 = at(0.9);
  s.min = xs.front();
  s.max = xs.back();
  return s;
}

double median_of(std::vector<double> xs) {
  std::sort(xs.begin(), xs.end());
  return xs.size() % 2 ? xs[xs.size() / 2] : (xs[xs.size() / 2 - 1] + xs[xs.size() / 2]) / 2;
}

double gbps(double round_trip_us) {
  return 2 * bytes_per_direction / (round_trip_us * 1e-6) * 1e-9;
}

caf::expected<caf::actor> connect(caf::actor_system& system, bool tls, uint16_t port,
                                  std::chrono::milliseconds timeout) {
  // Through the middleman actor: remote_actor()'s wait has no bound.
  caf::io::middleman_actor manager = tls ? system.openssl_manager().actor_handle()
                                         : system.middleman().actor_handle();
  caf::expected<caf::actor> result = caf::sec::request_timeout;
  caf::scoped_actor self{system};
  self->request(manager, timeout, caf::connect_atom::value, std::string{"127.0.0.1"}, port)
    .receive(
      [&](const caf::node_id&, caf::strong_actor_ptr& ptr, const std::set<std::string>&) {
        if (!ptr)
          result = caf::make_error(caf::sec::no_actor_published_at_port);
        else
          result = caf::actor_cast<caf::actor>(std::move(ptr));
      },
      [&](caf::error& err) { result = std::move(err); });
  return result;
}

int run_client(bench_config& cfg, uint16_t port) {
  if (!cfg.tls_dir.empty()) {
    cfg.tls_cert = cfg.tls_dir + "/client.pem";
    cfg.tls_key = cfg.tls_dir + "/client.key";
    cfg.tls_ca = cfg.tls_dir + "/ca.pem";
  }
  if (auto err = cfg.prepare()) {
    std::fprintf(stderr, "client: %s\n", describe(err).c_str());
    return 1;
  }
  caf::actor_system system{cfg};
  const auto timeout = std::chrono::milliseconds{cfg.request_timeout_ms};
  auto server = connect(system, cfg.tls(), port, timeout);
  if (!server) {
    std::fprintf(stderr, "client: cannot connect to 127.0.0.1:%u: %s\n", port,
                 describe(server.error()).c_str());
    return 1;
  }
  const kind kinds[] = {kind::small, kind::bulk, kind::plain};
  auto rounds_of = [&](kind k) {
    return k == kind::small ? cfg.small_rounds : k == kind::bulk ? cfg.rounds : cfg.plain_rounds;
  };
  std::vector<summary> results[3];
  int rc = 0;
  caf::scoped_actor self{system};
  for (size_t rep = 0; rep < cfg.repeats && rc == 0; ++rep) {
    for (auto k : kinds) {
      const auto rounds = rounds_of(k);
      if (rounds == 0)
        continue;
      auto micros = std::make_shared<std::vector<double>>();
      auto client = system.spawn(wire_client, *server, k, cfg.warmup, rounds,
                                 caf::timespan{timeout}, micros);
      // Every request is bounded by `timeout`; this bounds the whole run.
      const auto overall = timeout * (cfg.warmup + rounds + 1);
      self->request(client, overall, go_atom::value)
        .receive([](caf::ok_atom) {},
                 [&](caf::error& err) {
                   std::fprintf(stderr, "client: %s round trips failed: %s\n", kind_name(k),
                                describe(err).c_str());
                   caf::anon_send_exit(client, caf::exit_reason::user_shutdown);
                   rc = 1;
                 });
      if (rc != 0)
        break;
      auto s = summarize(*micros);
      results[static_cast<int>(k)].push_back(s);
      fmt::print("  repeat {} {:5}: {:5} round trips  mean {:8.1f} us  median {:8.1f} us  "
                 "p10 {:8.1f}  p90 {:8.1f}  min {:8.1f}  max {:9.1f}",
                 rep + 1, kind_name(k), micros->size(), s.mean, s.median, s.p10, s.p90,
                 s.min, s.max);
      if (k != kind::small)
        fmt::print("  {:.3f} GB/s", gbps(s.mean));
      fmt::print("\n");
    }
  }
  if (rc != 0)
    return rc;
  fmt::print("summary over {} repeats: median of the repeats [min .. max]\n", cfg.repeats);
  for (auto k : kinds) {
    auto& rs = results[static_cast<int>(k)];
    if (rs.empty())
      continue;
    std::vector<double> means, medians, rates;
    for (auto& s : rs) {
      means.push_back(s.mean);
      medians.push_back(s.median);
      rates.push_back(gbps(s.mean));
    }
    auto range = [](const std::vector<double>& xs, const char* f) {
      auto [lo, hi] = std::minmax_element(xs.begin(), xs.end());
      return fmt::format(f, median_of(xs), *lo, *hi);
    };
    fmt::print("  {:5} {:>38} mean RTT | {:>38} median RTT", kind_name(k),
               range(means, "{:.1f} us [{:.1f} .. {:.1f}]"),
               range(medians, "{:.1f} us [{:.1f} .. {:.1f}]"));
    if (k != kind::small)
      fmt::print(" | {} GB/s both directions", range(rates, "{:.3f} [{:.3f} .. {:.3f}]"));
    fmt::print("\n");
  }
  if (!results[1].empty() && !results[2].empty()) {
    std::vector<double> b, p;
    for (auto& s : results[1])
      b.push_back(s.mean);
    for (auto& s : results[2])
      p.push_back(s.mean);
    fmt::print("  bulk vs plain: {:.0f}x faster round trip (median means)\n",
               median_of(p) / median_of(b));
  }
  return 0;
}

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
    int rc = run_server(cfg, port_pipe[1], control_pipe[0]);
    std::fflush(nullptr);
    ::_exit(rc);
  }
  ::close(port_pipe[1]);
  ::close(control_pipe[0]);
  uint16_t port = 0;
  {
    pollfd pfd{port_pipe[0], POLLIN, 0};
    size_t got = 0;
    auto deadline = clock_type::now() + std::chrono::seconds{30};
    while (got < sizeof(port) && clock_type::now() < deadline) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - clock_type::now());
      auto r = ::poll(&pfd, 1, static_cast<int>(std::max<long>(1, left.count())));
      if (r < 0 && errno == EINTR)
        continue;
      if (r <= 0)
        break;
      auto n = ::read(port_pipe[0], reinterpret_cast<char*>(&port) + got, sizeof(port) - got);
      if (n <= 0)
        break;
      got += static_cast<size_t>(n);
    }
    ::close(port_pipe[0]);
    if (got != sizeof(port) || port == 0) {
      std::fprintf(stderr, "wire_bench: the server process did not publish\n");
      stop_child(child, control_pipe[1]);
      return 1;
    }
  }
  int rc = run_client(cfg, port);
  stop_child(child, control_pipe[1]);
  return rc;
}
