// Round trips between two real processes over loopback through CAF's
// middleman: what a replica and the store exchange each step. Process B
// requests from an actor in process A (a fork of it):
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
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <caf/all.hpp>

#include "actors/config/cluster_config.hpp"

namespace wire_bench {

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

inline const char* kind_name(kind k) {
  switch (k) {
    case kind::small: return "small";
    case kind::bulk: return "bulk";
    case kind::plain: return "plain";
  }
  return "?";
}

struct bench_config : troupe::cluster_config {
  size_t rounds = 300;
  size_t warmup = 30;
  size_t small_rounds = 2000;
  size_t plain_rounds = 300;
  size_t repeats = 3;
  size_t request_timeout_ms = 10000;
  size_t deadline_s = 900;
  std::string tls_dir;

  bench_config();

  /// Takes the mutual-TLS files of `role` ("server" or "client") from --tls.
  void use_tls_role(const std::string& role);
};

/// Runs process A: publishes the answering actor, sends its port (0 on
/// failure) through port_fd, then serves until control_fd reaches EOF (the
/// parent closed it or died).
int run_server(bench_config& cfg, int port_fd, int control_fd);

/// Runs process B: connects to the server at `port` and prints the figures.
int run_client(bench_config& cfg, uint16_t port);

/// Spawns the actor that requests `rounds` round trips of `what` after
/// `warmup` unmeasured ones, one at a time, and records each in `micros`;
/// it answers go_atom once done.
caf::actor spawn_client(caf::actor_system& system, const caf::actor& server, kind what,
                        size_t warmup, size_t rounds, caf::timespan timeout,
                        std::shared_ptr<std::vector<double>> micros);

} // namespace wire_bench
