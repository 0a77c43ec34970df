// The live progress line and the straggler report: pure functions on fixed inputs.
#include <catch2/catch.hpp>

#include <string>

#include "actors/report/progress_bar.hpp"
#include "actors/report/straggler_report.hpp"

using namespace troupe;

namespace {

epoch_progress at(uint64_t samples, double seconds) {
  epoch_progress p;
  p.epoch = 1;
  p.epochs = 5;
  p.samples = samples;
  p.epoch_samples = 60000;
  p.rounds = 1875;
  p.seconds = seconds;
  p.train_loss = 0.41;
  return p;
}

} // namespace

TEST_CASE("the progress bar renders steps, bar, ETA, loss and rate as Keras does",
          "[progress]") {
  // 39,488 of 60,000 samples (1234 of 1875 steps) in 0.76 s: 52k samples/s,
  // 20,512 samples left, 0.39 s, shown rounded up.
  CHECK(render_progress_bar(at(39488, 0.76), 20)
        == "1234/1875 [============>.......] - ETA: 1s - loss: 0.4100 - 52k samples/s");
  CHECK(render_progress_bar(at(0, 0), 10)
        == "   0/1875 [>.........] - ETA: 0s - loss: 0.4100 - 0 samples/s");
  CHECK(render_progress_bar(at(60000, 2.0), 10)
        == "1875/1875 [==========] - ETA: 0s - loss: 0.4100 - 30k samples/s");
  // A count beyond the epoch (a poll after the last round) stays at the end.
  CHECK(render_progress_bar(at(61000, 2.0), 10).rfind("1875/1875 [==========]", 0) == 0);
  CHECK(render_progress_bar(at(30000, 0.5), 10).find("[====>.....] - ETA: 1s") != std::string::npos);
}

TEST_CASE("the straggler report names a replica more than 1.5x slower than the median",
          "[progress][straggler]") {
  fit_summary summary;
  // Replica 2 computes 3 ms per sample, the others 1 ms; replica 0 waited most.
  summary.replica_totals = {replica_report{0, 1000, 0, 0, 10, 1.0, 3.0, {}},
                            replica_report{1, 1000, 0, 0, 10, 1.0, 2.0, {}},
                            replica_report{2, 1000, 0, 0, 10, 3.0, 0.5, {}}};
  summary.waited_on = {1, 0, 9};
  const auto report = make_straggler_report(summary);
  REQUIRE(report.replicas.size() == 3);
  CHECK(report.replicas[2].compute_ms_per_sample == Approx(3.0));
  CHECK(report.replicas[0].wait_fraction == Approx(0.75));
  CHECK(report.replicas[2].rounds_waited_on == 9);
  CHECK(report.slowest == 2);
  CHECK(report.slowest_to_median == Approx(3.0));
  REQUIRE(report.straggler);
  CHECK(*report.straggler == 2);
  const auto lines = straggler_lines(report);
  REQUIRE(lines.size() == 5);
  CHECK(lines[2] == "replica 2: compute 3.000 ms/sample, waited 14%, 9 rounds waited on it");
  CHECK(lines[4] == "straggler: replica 2 is 3.0x slower than the median");

  // 1.4x the median is slow, not a straggler.
  summary.replica_totals[2].compute_seconds = 1.4;
  const auto even = make_straggler_report(summary);
  CHECK(even.slowest == 2);
  CHECK_FALSE(even.straggler);
  CHECK(straggler_lines(even).size() == 4);
}

TEST_CASE("the straggler report compares only the replicas that lasted the run",
          "[progress][straggler]") {
  fit_summary summary;
  // Replica 1 died after a few rounds: its pace is not the run's.
  summary.replica_totals = {replica_report{0, 1000, 0, 0, 10, 2.0, 1.0, {}},
                            replica_report{1, 40, 0, 0, 1, 0.01, 0.0, {}},
                            replica_report{2, 1000, 0, 0, 10, 2.2, 1.0, {}}};
  summary.waited_on = {30, 1, 32};
  summary.lost_replicas = {1};
  const auto report = make_straggler_report(summary);
  CHECK(report.replicas[1].lost);
  CHECK(report.slowest == 2);
  CHECK(report.slowest_to_median == Approx(2.2 / 2.1));
  CHECK_FALSE(report.straggler);
  const auto lines = straggler_lines(report);
  REQUIRE(lines.size() == 4);
  CHECK(lines[1] == "replica 1: compute 0.250 ms/sample, waited 0%, 1 round waited on it "
                    "(lost during the run)");
  CHECK(lines[3] == "slowest: replica 2 (1.05x the median compute per sample)");

  // One survivor: nobody to compare it with, so no slowest and no straggler.
  summary.lost_replicas = {0, 1};
  const auto alone = make_straggler_report(summary);
  CHECK_FALSE(alone.straggler);
  CHECK(straggler_lines(alone).size() == 3);
}
