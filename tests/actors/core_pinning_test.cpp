// Core pinning against the process's own CPU affinity: the cores Troupe
// counts and the CPU each pinned thread lands on.
#include <catch2/catch.hpp>

#include <pthread.h>
#include <sched.h>

#include <thread>
#include <vector>

#include "actors/runtime/core_pinning.hpp"

using namespace troupe;

namespace {

std::vector<int> cpus_of(const cpu_set_t& set) {
  std::vector<int> cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
    if (CPU_ISSET(cpu, &set))
      cpus.push_back(cpu);
  return cpus;
}

std::vector<int> process_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  REQUIRE(sched_getaffinity(0, sizeof set, &set) == 0);
  return cpus_of(set);
}

} // namespace

TEST_CASE("usable cores are the process's affinity, and pinned thread k runs on its k-th CPU",
          "[pinning]") {
  const auto allowed = process_cpus();
  REQUIRE_FALSE(allowed.empty());
  CHECK(usable_cores() == allowed.size());
  for (unsigned core = 0; core < 2 * allowed.size() + 1; ++core) {
    INFO("core " << core);
    bool pinned = false;
    std::vector<int> landed;
    std::thread probe([&] {
      pinned = pin_this_thread(core);
      cpu_set_t set;
      CPU_ZERO(&set);
      pthread_getaffinity_np(pthread_self(), sizeof set, &set);
      landed = cpus_of(set);
    });
    probe.join();
    CHECK(pinned);
    CHECK(landed == std::vector<int>{allowed[core % allowed.size()]});
  }
  CHECK(process_cpus() == allowed); // the test's own thread is untouched
}
