// Process B of wire_bench: connects, runs every case's repeats interleaved,
// and prints each repeat's figures and their summary.
#include <algorithm>
#include <cstdio>
#include <set>

#include <caf/io/all.hpp>
#include <caf/openssl/manager.hpp>

#include <fmt/core.h>

#include "bench/wire/wire_bench.hpp"
#include "messages/errors.hpp"

namespace wire_bench {

using namespace troupe;

namespace {

constexpr kind all_kinds[] = {kind::small, kind::bulk, kind::plain};

struct summary {
  double mean = 0, median = 0, p10 = 0, p90 = 0, min = 0, max = 0;
};

double median_of(std::vector<double> xs) {
  std::sort(xs.begin(), xs.end());
  return xs.size() % 2 ? xs[xs.size() / 2] : (xs[xs.size() / 2 - 1] + xs[xs.size() / 2]) / 2;
}

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
  s.median = median_of(xs);
  s.p10 = at(0.1);
  s.p90 = at(0.9);
  s.min = xs.front();
  s.max = xs.back();
  return s;
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

size_t rounds_of(const bench_config& cfg, kind k) {
  return k == kind::small ? cfg.small_rounds : k == kind::bulk ? cfg.rounds : cfg.plain_rounds;
}

// Runs repeat `rep` of case `k` and prints its line; an error if it failed.
caf::expected<summary> measure(caf::actor_system& system, const caf::actor& server,
                               const bench_config& cfg, kind k, size_t rep) {
  const auto timeout = std::chrono::milliseconds{cfg.request_timeout_ms};
  const size_t rounds = rounds_of(cfg, k);
  auto micros = std::make_shared<std::vector<double>>();
  auto client = spawn_client(system, server, k, cfg.warmup, rounds, caf::timespan{timeout},
                             micros);
  caf::expected<summary> result = summary{};
  caf::scoped_actor self{system};
  // Every request is bounded by `timeout`; this bounds the whole case.
  self->request(client, timeout * (cfg.warmup + rounds + 1), go_atom::value)
    .receive([](caf::ok_atom) {},
             [&](caf::error& err) {
               caf::anon_send_exit(client, caf::exit_reason::user_shutdown);
               result = std::move(err);
             });
  if (!result)
    return result;
  const summary s = summarize(*micros);
  fmt::print("  repeat {} {:5}: {:5} round trips  mean {:8.1f} us  median {:8.1f} us  "
             "p10 {:8.1f}  p90 {:8.1f}  min {:8.1f}  max {:9.1f}",
             rep + 1, kind_name(k), micros->size(), s.mean, s.median, s.p10, s.p90, s.min,
             s.max);
  if (k != kind::small)
    fmt::print("  {:.3f} GB/s", gbps(s.mean));
  fmt::print("\n");
  return s;
}

std::string median_and_range(const std::vector<double>& xs, const char* format) {
  auto [lo, hi] = std::minmax_element(xs.begin(), xs.end());
  return fmt::format(format, median_of(xs), *lo, *hi);
}

void print_summary(const std::vector<summary> (&results)[3], size_t repeats) {
  fmt::print("summary over {} repeats: median of the repeats [min .. max]\n", repeats);
  for (auto k : all_kinds) {
    const auto& rs = results[static_cast<int>(k)];
    if (rs.empty())
      continue;
    std::vector<double> means, medians, rates;
    for (const auto& s : rs) {
      means.push_back(s.mean);
      medians.push_back(s.median);
      rates.push_back(gbps(s.mean));
    }
    fmt::print("  {:5} {:>38} mean RTT | {:>38} median RTT", kind_name(k),
               median_and_range(means, "{:.1f} us [{:.1f} .. {:.1f}]"),
               median_and_range(medians, "{:.1f} us [{:.1f} .. {:.1f}]"));
    if (k != kind::small)
      fmt::print(" | {} GB/s both directions",
                 median_and_range(rates, "{:.3f} [{:.3f} .. {:.3f}]"));
    fmt::print("\n");
  }
  const auto& bulk = results[static_cast<int>(kind::bulk)];
  const auto& plain = results[static_cast<int>(kind::plain)];
  if (bulk.empty() || plain.empty())
    return;
  std::vector<double> b, p;
  for (const auto& s : bulk)
    b.push_back(s.mean);
  for (const auto& s : plain)
    p.push_back(s.mean);
  fmt::print("  bulk vs plain: {:.0f}x faster round trip (median means)\n",
             median_of(p) / median_of(b));
}

} // namespace

int run_client(bench_config& cfg, uint16_t port) {
  cfg.use_tls_role("client");
  if (auto err = cfg.prepare()) {
    std::fprintf(stderr, "client: %s\n", describe(err).c_str());
    return 1;
  }
  caf::actor_system system{cfg};
  auto server =
    connect(system, cfg.tls(), port, std::chrono::milliseconds{cfg.request_timeout_ms});
  if (!server) {
    std::fprintf(stderr, "client: cannot connect to 127.0.0.1:%u: %s\n", port,
                 describe(server.error()).c_str());
    return 1;
  }
  std::vector<summary> results[3];
  for (size_t rep = 0; rep < cfg.repeats; ++rep)
    for (auto k : all_kinds) {
      if (rounds_of(cfg, k) == 0)
        continue;
      auto s = measure(system, *server, cfg, k, rep);
      if (!s) {
        std::fprintf(stderr, "client: %s round trips failed: %s\n", kind_name(k),
                     describe(s.error()).c_str());
        return 1;
      }
      results[static_cast<int>(k)].push_back(*s);
    }
  print_summary(results, cfg.repeats);
  return 0;
}

} // namespace wire_bench
