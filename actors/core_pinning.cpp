// Thread pinning (pthread_setaffinity_np) and scheduling class.
#include "actors/core_pinning.hpp"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <thread>

#include <caf/actor_system_config.hpp>
#include <caf/thread_hook.hpp>

namespace troupe {

namespace {

class pin_to_core_zero final : public caf::thread_hook {
public:
  void init(caf::actor_system&) override {}
  void thread_started() override { pin_this_thread(0); }
  void thread_terminates() override {}
};

} // namespace

unsigned usable_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
    return static_cast<unsigned>(CPU_COUNT(&set));
  return std::max(1u, std::thread::hardware_concurrency());
}

bool pin_this_thread(unsigned core) {
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(core % cores, &set);
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

} // namespace troupe
