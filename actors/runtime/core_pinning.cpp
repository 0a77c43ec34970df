// Thread pinning (pthread_setaffinity_np) and scheduling class.
#include "actors/runtime/core_pinning.hpp"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <thread>
#include <vector>

#include <caf/actor_system_config.hpp>
#include <caf/thread_hook.hpp>

namespace troupe::detail {

namespace {

// The CPUs this process may run on, in order, as the first caller saw them
// (before any thread pinned itself: a pinned thread's own mask is one CPU).
const std::vector<int>& allowed_cpus() {
  static const std::vector<int> cpus = [] {
    std::vector<int> list;
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) == 0)
      for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
        if (CPU_ISSET(cpu, &set))
          list.push_back(cpu);
    if (list.empty()) // no mask to read: every CPU the system has
      for (unsigned cpu = 0; cpu < std::max(1u, std::thread::hardware_concurrency()); ++cpu)
        list.push_back(static_cast<int>(cpu));
    return list;
  }();
  return cpus;
}

class pin_to_core_zero final : public caf::thread_hook {
public:
  void init(caf::actor_system&) override {}
  void thread_started() override { pin_this_thread(0); }
  void thread_terminates() override {}
};

} // namespace

unsigned usable_cores() {
  return static_cast<unsigned>(allowed_cpus().size());
}

bool pin_this_thread(unsigned core) {
  const auto& cpus = allowed_cpus();
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpus[core % cpus.size()], &set);
  return pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0;
}

void schedule_as_batch_thread() {
#ifdef SCHED_BATCH
  sched_param parameters{};
  parameters.sched_priority = 0;
  pthread_setschedparam(pthread_self(), SCHED_BATCH, &parameters);
#endif
}

void pin_actor_system_threads(caf::actor_system_config& config) {
  config.add_thread_hook<pin_to_core_zero>();
}

} // namespace troupe::detail
