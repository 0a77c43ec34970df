// CAF's work-sharing policy (one central queue under a lock) with a bounded
// poll before the wait. A sync round hands work between the scheduler's
// threads a few times (a replica's push makes a shard ready, a shard's answer
// a replica); handed to a sleeping worker, each costs a futex wake-up of a
// core that went idle, which a short poll avoids. Only a worker's job hands
// work over that way: with every worker idle, the next job comes from
// outside (the middleman, the clock, main) and wakes a sleeper anyway, so an
// idle worker polls only while another runs a job. A node waiting for the
// network then leaves its cores to the other processes on the host.
#include "actors/runtime/spinning_scheduler.hpp"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <list>
#include <mutex>

#include <caf/actor_system_config.hpp>
#include <caf/policy/unprofiled.hpp>
#include <caf/scheduler/coordinator.hpp>

#if defined(__x86_64__) || defined(__i386__)
#  include <immintrin.h>
#endif

namespace troupe::detail {

namespace {

class spinning_sharing : public caf::policy::unprofiled {
public:
  using queue_type = std::list<caf::resumable*>;

  struct coordinator_data {
    explicit coordinator_data(caf::scheduler::abstract_coordinator*) {}
    queue_type queue;
    std::mutex lock;
    std::condition_variable cv;
    std::atomic<size_t> size{0};    // read without the lock while spinning
    std::atomic<size_t> running{0}; // workers running a job
  };

  struct worker_data {
    explicit worker_data(caf::scheduler::abstract_coordinator*) {}
    bool running = false; // counted in coordinator_data::running
  };

  // A job from outside the workers (the clock, the middleman, main) wakes
  // a sleeping worker. A job that a worker's own job made ready (a replica's
  // push readies a shard, a shard's answer a replica) is left to that
  // worker, which dequeues as soon as its job returns, or to one already
  // polling: only a second job waiting wakes a sleeper. Waking one for the
  // first costs a futex call, and the woken worker often takes the job to
  // the other core, away from the data the job's maker just wrote.
  template <class Coordinator>
  void enqueue(Coordinator* self, caf::resumable* job, bool from_worker) {
    queue_type one;
    one.push_back(job);
    auto& data = d(self);
    std::unique_lock<std::mutex> guard(data.lock);
    data.queue.splice(data.queue.end(), one);
    const size_t waiting = data.size.fetch_add(1, std::memory_order_release) + 1;
    if (!from_worker || waiting > 1)
      data.cv.notify_one();
  }

  template <class Coordinator>
  void central_enqueue(Coordinator* self, caf::resumable* job) {
    enqueue(self, job, false);
  }

  template <class Worker>
  void external_enqueue(Worker* self, caf::resumable* job) {
    enqueue(self->parent(), job, false);
  }

  template <class Worker>
  void internal_enqueue(Worker* self, caf::resumable* job) {
    enqueue(self->parent(), job, true);
  }

  template <class Worker>
  void resume_job_later(Worker* self, caf::resumable* job) {
    enqueue(self->parent(), job, true);
  }

  // Called by a worker whose job returned (or that starts): polls while the
  // queue is empty and another worker runs a job, then sleeps until one comes.
  template <class Worker>
  caf::resumable* dequeue(Worker* self) {
    auto& data = d(self->parent());
    auto& mine = d(self);
    if (mine.running) {
      mine.running = false;
      data.running.fetch_sub(1, std::memory_order_relaxed);
    }
    const auto spin_until = std::chrono::steady_clock::now() + spin_time;
    for (unsigned i = 0; data.size.load(std::memory_order_acquire) == 0
                         && data.running.load(std::memory_order_relaxed) > 0;
         ++i) {
#if defined(__x86_64__) || defined(__i386__)
      _mm_pause();
#endif
      if (i % 64 == 63 && std::chrono::steady_clock::now() >= spin_until)
        break;
    }
    std::unique_lock<std::mutex> guard(data.lock);
    data.cv.wait(guard, [&] { return !data.queue.empty(); });
    caf::resumable* job = data.queue.front();
    data.queue.pop_front();
    data.size.fetch_sub(1, std::memory_order_relaxed);
    mine.running = true;
    data.running.fetch_add(1, std::memory_order_relaxed);
    return job;
  }

  template <class Worker, class UnaryFunction>
  void foreach_resumable(Worker*, UnaryFunction) {}

  template <class Coordinator, class UnaryFunction>
  void foreach_central_resumable(Coordinator* self, UnaryFunction f) {
    auto& data = d(self);
    std::unique_lock<std::mutex> guard(data.lock);
    while (!data.queue.empty()) {
      auto job = data.queue.front();
      data.queue.pop_front();
      data.size.fetch_sub(1, std::memory_order_relaxed);
      f(job);
    }
  }

  // Covers a round's hand-overs: a sync round of small replica batches
  // waits tens of microseconds for the other replica and the step.
  static constexpr std::chrono::microseconds spin_time{50};
};

} // namespace

void use_spinning_scheduler(caf::actor_system_config& config) {
  config.module_factories.push_back([](caf::actor_system& system) -> caf::actor_system::module* {
    return new caf::scheduler::coordinator<spinning_sharing>(system);
  });
}

} // namespace troupe::detail
