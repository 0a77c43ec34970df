// What every cluster test file includes: Catch, the process helper, and
// assertions that print the involved processes' output when they fail.
#pragma once

#include <catch2/catch.hpp>

#include <csignal>
#include <string>
#include <vector>

#include "tests/cluster/process.hpp"

namespace troupe::cluster_test {

/// Describes several processes, for a failing assertion's message.
inline std::string describe_all(std::initializer_list<const process*> processes) {
  std::string text;
  for (const auto* proc : processes)
    if (proc != nullptr)
      text += proc->describe() + "\n";
  return text;
}

/// Bounds for the waits: generous against a loaded 2-core machine, yet each
/// test ends in well under a minute even when every one of them expires.
constexpr milliseconds run_timeout{60000};    // a whole small training run
constexpr milliseconds line_timeout{30000};   // an epoch line to appear
constexpr milliseconds exit_timeout{10000};   // a process to end after its cause
constexpr milliseconds notice_timeout{5000};  // a log line after its cause

/// Runs the coordinator (run_mnist) and requires that it ended well.
inline run_result run_to_success(const temp_dir& dir, const std::string& name,
                                 const std::vector<std::string>& args) {
  auto run = run_mnist(dir, name, args, run_timeout);
  INFO(run.description);
  REQUIRE(run.status.exited);
  REQUIRE(run.status.code == 0);
  return run;
}

/// Returns the one final metrics record of `run`.
inline nlohmann::json final_record_of(const run_result& run) {
  const auto final_record = records_of(run.metrics, "final");
  REQUIRE(final_record.size() == 1);
  return final_record[0];
}

/// Runs mnist with `args` (run_mnist), requires a clean exit and returns
/// its final metrics record.
inline nlohmann::json final_record_of_run(const temp_dir& dir, const std::string& name,
                                          const std::vector<std::string>& args) {
  return final_record_of(run_to_success(dir, name, args));
}

/// Returns the test accuracy a final metrics record holds.
inline double test_accuracy_of(const nlohmann::json& final_record) {
  return final_record["test_accuracy"].get<double>();
}

/// Returns the final record's test accuracy of final_record_of_run.
inline double final_test_accuracy(const temp_dir& dir, const std::string& name,
                                  const std::vector<std::string>& args) {
  return test_accuracy_of(final_record_of_run(dir, name, args));
}

/// Returns the final record's params_fnv1a64 of final_record_of_run.
inline std::string checksum_of_run(const temp_dir& dir, const std::string& name,
                                   const std::vector<std::string>& args) {
  return final_record_of_run(dir, name, args)["params_fnv1a64"].get<std::string>();
}

/// Returns the arguments of a short seeded sync run (1 epoch, batch 64,
/// seed 11) the codec tests compare, followed by `more`.
inline std::vector<std::string> codec_run(std::vector<std::string> more) {
  const std::vector<std::string> sync_run{"--mode=sync", "--epochs=1", "--batch-size=64",
                                          "--seed=11"};
  more.insert(more.begin(), sync_run.begin(), sync_run.end());
  return more;
}

/// Runs `run` for 2 epochs whole, then 1 epoch with a checkpoint at `file`
/// and a resume from it to 2; checks that the resumed run has the whole
/// run's bits and returns them.
inline std::string expect_resume_keeps_bits(const temp_dir& dir, std::vector<std::string> run,
                                            const std::string& file) {
  auto with = [&run](const std::string& more, const std::string& file_option) {
    auto args = run;
    args.push_back(more);
    if (!file_option.empty())
      args.push_back(file_option);
    return args;
  };
  const auto whole = checksum_of_run(dir, "whole", with("--epochs=2", ""));
  checksum_of_run(dir, "first", with("--epochs=1", "--checkpoint=" + file));
  CHECK(checksum_of_run(dir, "resumed", with("--epochs=2", "--resume=" + file)) == whole);
  return whole;
}

} // namespace troupe::cluster_test

/// REQUIRE / CHECK that print the given processes' command and output on failure.
#define CLUSTER_REQUIRE(cond, ...)                                                    \
  do {                                                                                \
    INFO(::troupe::cluster_test::describe_all({__VA_ARGS__}));                        \
    REQUIRE(cond);                                                                    \
  } while (false)
#define CLUSTER_CHECK(cond, ...)                                                      \
  do {                                                                                \
    INFO(::troupe::cluster_test::describe_all({__VA_ARGS__}));                        \
    CHECK(cond);                                                                      \
  } while (false)
