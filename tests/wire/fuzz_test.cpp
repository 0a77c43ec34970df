// The wire fuzzer in the suite: a real job recorded, then about a hundred
// mutations of its streams into a node and from a fake node into
// coordinators (TROUPE_FUZZ_SEED, TROUPE_FUZZ_NODE_CONNECTIONS and
// TROUPE_FUZZ_COORDINATOR_RUNS change the campaign; scripts/fuzz_wire.sh
// runs long ones). Each class of stream that once broke a process has a case
// of its own in hardening_test.cpp.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "tests/cluster/process.hpp"
#include "tests/wire/wire_fuzz.hpp"

using namespace troupe::wire_test;
using troupe::cluster_test::temp_dir;

namespace {

uint64_t from_env(const char* name, uint64_t otherwise) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? std::stoull(value) : otherwise;
}

} // namespace

TEST_CASE("mutated streams of a real job crash, hang or swell neither a node nor a "
          "coordinator, and the node trains afterwards",
          "[wire][fuzz]") {
  temp_dir dir{"troupe-fuzz"};
  const auto job = record_job(dir);
  fuzz_settings settings;
  settings.seed = from_env("TROUPE_FUZZ_SEED", 20261204);
  settings.node_connections = from_env("TROUPE_FUZZ_NODE_CONNECTIONS", 80);
  settings.coordinator_runs = from_env("TROUPE_FUZZ_COORDINATOR_RUNS", 20);
  settings.save_dir = std::filesystem::absolute("wire-fuzz-failures").string();
  settings.progress = [](const std::string& line) { std::cerr << "fuzz: " << line << "\n"; };
  std::cerr << "fuzz: seed " << settings.seed << ", a recorded job of "
            << job.coordinator_to_node.to_server.size() << " bytes to the node and "
            << job.coordinator_to_node.to_client.size() << " back\n";
  fuzz_report report;
  fuzz_node(dir, job, settings, report);
  fuzz_coordinators(dir, job, settings, report);
  std::cerr << "fuzz: " << report.node_connections << " connections into a node (memory peak "
            << report.node_peak_kib << " KiB, bound " << report.node_bound_kib << " KiB), "
            << report.coordinator_runs << " coordinators (peak " << report.coordinator_peak_kib
            << " KiB, bound " << report.coordinator_bound_kib << " KiB) in " << report.seconds
            << " s\n";
  for (const auto& failure : report.failures)
    FAIL_CHECK("seed " << settings.seed << ", " << failure.target << " mutation #"
                       << failure.index << " (" << failure.mutation << "): " << failure.what
                       << (failure.saved.empty() ? "" : "\nsaved as " + failure.saved));
  CHECK(report.node_connections == settings.node_connections);
  CHECK(report.coordinator_runs == settings.coordinator_runs);
  CHECK(report.node_trained_after);
}
