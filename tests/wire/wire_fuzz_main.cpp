// troupe_wire_fuzz: long fuzz campaigns and replays of saved streams.
//   troupe_wire_fuzz [--seed=N] [--node-connections=N] [--coordinator-runs=N]
//                    [--save=DIR]
//   troupe_wire_fuzz --replay=FILE --target=node|coordinator
// Exits 0 when every mutated connection was survived, 1 otherwise, 2 on a
// usage error.
#include <cstdio>
#include <iostream>
#include <random>
#include <string>

#include "tests/cluster/process.hpp"
#include "tests/wire/wire_fuzz.hpp"

using namespace troupe::wire_test;

namespace {

bool option(const std::string& arg, const std::string& name, std::string& value) {
  if (arg.rfind(name + "=", 0) != 0)
    return false;
  value = arg.substr(name.size() + 1);
  return true;
}

int replay(const std::string& file, const std::string& target) {
  troupe::cluster_test::temp_dir dir{"troupe-fuzz"};
  const auto what = replay_saved(dir, target, file);
  std::cout << (what.empty() ? "survived: " + file : "FAILED: " + what) << "\n";
  return what.empty() ? 0 : 1;
}

} // namespace

int main(int argc, char** argv) {
  fuzz_settings settings;
  settings.seed = std::random_device{}();
  settings.node_connections = 500;
  settings.coordinator_runs = 100;
  settings.save_dir = "wire-fuzz-failures";
  std::string replay_file, target = "node", value;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (option(arg, "--seed", value))
      settings.seed = std::stoull(value);
    else if (option(arg, "--node-connections", value))
      settings.node_connections = std::stoull(value);
    else if (option(arg, "--coordinator-runs", value))
      settings.coordinator_runs = std::stoull(value);
    else if (option(arg, "--save", value))
      settings.save_dir = value;
    else if (option(arg, "--replay", value))
      replay_file = value;
    else if (option(arg, "--target", value))
      target = value;
    else {
      std::cerr << "usage: troupe_wire_fuzz [--seed=N] [--node-connections=N] "
                   "[--coordinator-runs=N] [--save=DIR] | --replay=FILE --target=node|coordinator\n";
      return 2;
    }
  }
  if (!replay_file.empty())
    return replay(replay_file, target);
  settings.progress = [](const std::string& line) { std::cout << line << std::endl; };
  troupe::cluster_test::temp_dir dir{"troupe-fuzz"};
  std::cout << "seed " << settings.seed << ": recording a job" << std::endl;
  const auto job = record_job(dir);
  fuzz_report report;
  fuzz_node(dir, job, settings, report);
  fuzz_coordinators(dir, job, settings, report);
  std::cout << "seed " << settings.seed << ": " << report.node_connections
            << " connections into a node (memory from " << report.node_start_kib
            << " KiB to a peak of " << report.node_peak_kib << " KiB, bound "
            << report.node_bound_kib << " KiB; trained afterwards: "
            << (report.node_trained_after ? "yes" : "NO") << "), " << report.coordinator_runs
            << " coordinators (peak " << report.coordinator_peak_kib << " KiB, bound "
            << report.coordinator_bound_kib << " KiB), " << report.failures.size()
            << " failures, " << report.seconds << " s" << std::endl;
  for (const auto& failure : report.failures)
    std::cout << "FAILED " << failure.target << " #" << failure.index << " ("
              << failure.mutation << "): " << failure.what << "\n  saved: " << failure.saved
              << "\n";
  return report.failures.empty() && report.node_trained_after ? 0 : 1;
}
