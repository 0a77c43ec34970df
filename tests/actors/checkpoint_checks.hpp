// What the checkpoint tests share: a temporary file of this test process, and
// the check that a run resumed from a checkpoint ends where the uninterrupted
// run ended, bit for bit. Needs Catch2.
#pragma once

#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

#include <unistd.h>

#include <caf/fwd.hpp>

#include "actors/run/coordinator.hpp"
#include "tests/test_slice.hpp"

namespace troupe::testing {

/// Returns a path in the temporary folder, unique to this process and `name`.
inline std::string temp_checkpoint_path(const std::string& suite, const std::string& name) {
  return (std::filesystem::temp_directory_path()
          / ("troupe_" + suite + "_" + std::to_string(::getpid()) + "_" + name))
    .string();
}

/// A short sync run on the test slice, checkpointed at `checkpoint` (empty:
/// none): 2 replicas, 2 epochs of global batch 16, seed 11.
inline run_config small_checkpointed_run(const std::string& checkpoint) {
  run_config o;
  o.replicas = 2;
  o.epochs = 2;
  o.batch_size = 16;
  o.seed = 11;
  o.checkpoint_path = checkpoint;
  o.step_timeout_ms = 20000;
  return o;
}

/// Resumes `options` from the checkpoint at `path` on the test slice and
/// checks that it ends with the uninterrupted run's version, parameters and
/// accuracy.
inline void check_resumes_to(caf::actor_system& system, run_config options,
                             const std::string& path, const fit_summary& uninterrupted) {
  options.resume_path = path;
  auto resumed = run_training(system, options, shared_test_slice());
  REQUIRE(resumed);
  CHECK(resumed->version == uninterrupted.version);
  CHECK(resumed->params_fnv1a64 == uninterrupted.params_fnv1a64);
  CHECK(resumed->test_accuracy == uninterrupted.test_accuracy);
}

} // namespace troupe::testing
