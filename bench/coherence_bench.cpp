// What a sync round's hand-overs cost on this host: one core passes over a
// buffer of a store shard's size (default 50,880 values, 200 KB: half of the
// model) right after another core has read or written it, as a step and a
// replica do. On a VM the figures depend on where the hypervisor put the two
// vCPUs, and can change from minute to minute; they explain why the 2-core
// sync figure differs between hosts (docs/benchmarks.md).
//   coherence_bench [values] [repeats]
//   coherence_bench --round-trip   (only the two cores' round trip, in ns)
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include <fmt/core.h>

#include "actors/runtime/core_pinning.hpp"

namespace {

using clock_type = std::chrono::steady_clock;
using buffer = std::vector<uint32_t>;

uint32_t read_all(const buffer& b) {
  uint32_t sum = 0;
  for (uint32_t value : b)
    sum += value;
  return sum;
}

void write_from(const buffer& from, buffer& to) {
  for (size_t i = 0; i < to.size(); ++i)
    to[i] = from[i] * 3u + 1u;
}

// Two threads on the first two usable cores, taking turns: each repeat, the
// other core runs `before`, then this one `untimed` and `timed`, which is timed.
class turns {
public:
  using phase = std::function<void(uint64_t repeat)>;

  std::vector<double> run(int repeats, const phase& before, const phase& timed) {
    return run(repeats, before, [](uint64_t) {}, timed);
  }

  std::vector<double> run(int repeats, const phase& before, const phase& untimed,
                          const phase& timed) {
    std::atomic<int> turn{0}; // 2r: the other core's turn in repeat r; 2r+1: ours
    std::vector<double> micros;
    std::thread other([&] {
      troupe::pin_this_thread(1);
      for (int r = 0; r < repeats; ++r) {
        while (turn.load(std::memory_order_acquire) != 2 * r) {
        }
        before(static_cast<uint64_t>(r));
        turn.store(2 * r + 1, std::memory_order_release);
      }
    });
    troupe::pin_this_thread(0);
    for (int r = 0; r < repeats; ++r) {
      while (turn.load(std::memory_order_acquire) != 2 * r + 1) {
      }
      untimed(static_cast<uint64_t>(r));
      const auto start = clock_type::now();
      timed(static_cast<uint64_t>(r));
      micros.push_back(std::chrono::duration<double, std::micro>(clock_type::now() - start).count());
      turn.store(2 * r + 2, std::memory_order_release);
    }
    other.join();
    std::sort(micros.begin(), micros.end());
    return micros;
  }
};

// Nanoseconds for a cache line to go from core 0 to core 1 and back (the
// median of 7 sets of `trips` hand-offs): what every hand-over between the
// two cores pays at least. On a VM it shows where the two vCPUs sit now.
double round_trip_ns(int trips) {
  alignas(64) std::atomic<int> line{0};
  std::vector<double> sets;
  for (int set = 0; set < 7; ++set) {
    line.store(0);
    std::thread other([&] {
      troupe::pin_this_thread(1);
      for (int i = 0; i < trips; ++i) {
        while (line.load(std::memory_order_acquire) != 2 * i + 1) {
        }
        line.store(2 * i + 2, std::memory_order_release);
      }
    });
    troupe::pin_this_thread(0);
    const auto start = clock_type::now();
    for (int i = 0; i < trips; ++i) {
      line.store(2 * i + 1, std::memory_order_release);
      while (line.load(std::memory_order_acquire) != 2 * i + 2) {
      }
    }
    sets.push_back(std::chrono::duration<double, std::nano>(clock_type::now() - start).count()
                   / trips);
    other.join();
  }
  std::sort(sets.begin(), sets.end());
  return sets[sets.size() / 2];
}

} // namespace

int main(int argc, char** argv) {
  const bool round_trip_only = argc == 2 && std::string(argv[1]) == "--round-trip";
  const size_t values = argc > 1 && !round_trip_only ? std::strtoul(argv[1], nullptr, 10) : 50880;
  const int repeats = argc > 2 ? std::atoi(argv[2]) : 2000;
  if (values == 0 || repeats <= 0) {
    std::fprintf(stderr, "usage: coherence_bench [values > 0] [repeats > 0] | --round-trip\n");
    return 2;
  }
  if (troupe::usable_cores() < 2) {
    std::fprintf(stderr, "coherence_bench needs 2 usable cores, this process has %u\n",
                 troupe::usable_cores());
    return 2;
  }
  if (round_trip_only) { // for scripts: the nanoseconds alone
    fmt::print("{:.0f}\n", round_trip_ns(100000));
    return 0;
  }
  buffer a(values, 1), b(values, 2);
  std::atomic<uint32_t> sink{0};
  turns t;
  const double kb = values * sizeof(uint32_t) / 1024.0;
  fmt::print("{} values ({:.0f} KB), cores 0 and 1 of this process, median [10%..90%] of {}\n",
             values, kb, repeats);
  auto report = [&](const char* what, const std::vector<double>& us) {
    const auto at = [&](double q) { return us[static_cast<size_t>(q * (us.size() - 1))]; };
    fmt::print("{:<62} {:7.1f} us [{:.1f}..{:.1f}]  {:5.1f} GB/s\n", what, at(0.5), at(0.1),
               at(0.9), values * sizeof(uint32_t) / at(0.5) * 1e-3);
  };
  // The phases: r is the repeat; `last` and `next` alternate between a and b.
  const auto last = [&](uint64_t r) -> buffer& { return r % 2 ? b : a; };
  const auto next = [&](uint64_t r) -> buffer& { return r % 2 ? a : b; };
  const auto nothing = [](uint64_t) {};
  const auto read_a = [&](uint64_t) { sink += read_all(a); };
  const auto write_a = [&](uint64_t) { write_from(b, a); };
  const auto rewrite_a = [&](uint64_t) { write_from(a, a); };
  const auto read_last = [&](uint64_t r) { sink += read_all(last(r)); };
  const auto write_next = [&](uint64_t r) { write_from(last(r), next(r)); };
  // A round's compute between the passes: 1 MB of other lines on each core.
  buffer work_here(1 << 18, 3), work_there(1 << 18, 4);
  const auto work_then = [&](const turns::phase& phase) {
    return [&work_there, phase](uint64_t r) {
      write_from(work_there, work_there);
      phase(r);
    };
  };
  const auto work_here_too = [&](uint64_t) { write_from(work_here, work_here); };

  // On a VM this changes within minutes as the hypervisor moves the vCPUs
  // (the values seen: docs/benchmarks.md, "How we measure").
  fmt::print("a cache line's round trip between the two cores: {:.0f} ns\n",
             round_trip_ns(100000));
  report("rewrite lines no other core touches", t.run(repeats, nothing, rewrite_a));
  report("read lines the other core just wrote (a replica's read)",
         t.run(repeats, write_a, read_a));
  report("rewrite lines the other core just wrote", t.run(repeats, write_a, rewrite_a));
  report("rewrite lines the other core just read (a step in place)",
         t.run(repeats, read_a, rewrite_a));
  report("the same, 1 MB of other work on each core in between",
         t.run(repeats, work_then(read_a), work_here_too, rewrite_a));
  // As sync shards of one process step: the other core reads the buffer
  // written last time, this one writes the other buffer from it.
  report("write the buffer the other core did not read (two in turn)",
         t.run(repeats, read_last, write_next));
  report("the same, 1 MB of other work on each core in between",
         t.run(repeats, work_then(read_last), work_here_too, write_next));
  return sink.load() == 42 ? 1 : 0; // keeps the reads
}
