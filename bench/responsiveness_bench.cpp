// How long an idle event-based actor takes to answer while replicas compute
// on CAF's scheduler threads: the round trip measured while nothing runs and
// while a sync fit with 2 replicas trains in the same process (a message
// waits at most for one replica's step to end).
//
//   build/bench/responsiveness_bench [data-dir]
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>
#include <vector>

#include <caf/all.hpp>

#include "actors/config/cluster_config.hpp"
#include "actors/run/coordinator.hpp"
#include "messages/errors.hpp"

namespace {

using clock_type = std::chrono::steady_clock;

// Median and 99th percentile of `count` pings to `echo`, one per millisecond.
std::pair<double, double> ping(caf::actor_system& system, const caf::actor& echo, int count) {
  caf::scoped_actor self{system};
  std::vector<double> micros;
  for (int i = 0; i < count; ++i) {
    const auto start = clock_type::now();
    self->request(echo, std::chrono::seconds(5), i).receive([](int) {}, [](caf::error&) {});
    micros.push_back(std::chrono::duration<double, std::micro>(clock_type::now() - start).count());
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  std::sort(micros.begin(), micros.end());
  return {micros[micros.size() / 2], micros[micros.size() * 99 / 100]};
}

} // namespace

int main(int argc, char** argv) {
  troupe::cluster_config cfg;
  if (auto exit_code = cfg.parse_and_prepare(argc, argv))
    return *exit_code;
  const std::string dir = cfg.remainder.empty() ? troupe::default_data_dir() : cfg.remainder[0];
  auto data = troupe::load_dataset(dir);
  if (!data) {
    std::fprintf(stderr, "error: %s\n", data.error().message.c_str());
    return 1;
  }
  caf::actor_system system{cfg};
  auto echo = system.spawn([]() -> caf::behavior { return {[](int x) { return x; }}; });
  auto idle = ping(system, echo, 300);
  std::printf("idle:             echo round trip median %.0f us, p99 %.0f us\n", idle.first,
              idle.second);
  troupe::run_config options;
  options.replicas = 2;
  options.epochs = 3;
  auto shared = std::make_shared<const troupe::dataset_pair>(std::move(*data));
  std::atomic<bool> done{false};
  std::thread training([&] {
    auto result = troupe::run_training(system, options, shared);
    if (!result)
      std::fprintf(stderr, "error: %s\n", troupe::describe(result.error()).c_str());
    done = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300)); // into the first epoch
  auto busy = ping(system, echo, 300);
  std::printf("during sync fit:  echo round trip median %.0f us, p99 %.0f us "
              "(2 replicas training on %u cores)\n",
              busy.first, busy.second, std::thread::hardware_concurrency());
  training.join();
  caf::anon_send_exit(echo, caf::exit_reason::user_shutdown);
  return done ? 0 : 1;
}
