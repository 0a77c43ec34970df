// The variable store's checkpoints: every N closed rounds mid-epoch, once
// asked at an epoch's end, never from an async store's rounds, and a write
// that fails is counted, not fatal.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

#include <unistd.h>

#include "model/checkpoint.hpp"
#include "tests/actors/store_fixture.hpp"

using namespace troupe;
using namespace troupe::testing;

namespace {

// A checkpoint file under the system temp dir, removed afterwards.
struct temp_checkpoint {
  std::string path = (std::filesystem::temp_directory_path()
                      / ("troupe_store_test_" + std::to_string(::getpid()) + "_"
                         + std::to_string(counter++) + ".ckpt"))
                       .string();
  ~temp_checkpoint() { std::filesystem::remove(path); }
  bool exists() const { return std::filesystem::exists(path); }
  checkpoint read() const {
    auto c = read_checkpoint(path);
    REQUIRE(c);
    std::filesystem::remove(path); // the next write is seen as new
    return *c;
  }
  static inline int counter = 0;
};

} // namespace

TEST_CASE("a sync store checkpoints every N closed rounds, mid-epoch, and once asked at an "
          "epoch's end with the flag set",
          "[store][sync][checkpoint]") {
  temp_checkpoint file;
  store_fixture f("sync", 2, [&](store_config& o) { o.checkpoint_every = 2; }, file.path);
  f.watch(0);
  f.watch(1);
  f.pusher(0)->send(f.store, epoch_atom::value, uint64_t{0}, uint64_t{0});
  auto round = [&](uint64_t r, uint64_t version) {
    f.push(0, f.make_push(0, r, version, filled(parameter_count, 1.0f)));
    f.push(1, f.make_push(1, r, version, filled(parameter_count, 1.0f)));
    REQUIRE(f.take(0).params);
    REQUIRE(f.take(1).params);
  };
  round(0, 0);
  CHECK_FALSE(file.exists()); // one closed round of two
  round(1, 1);
  REQUIRE(file.exists());
  auto periodic = file.read();
  CHECK(periodic.round == 2);
  CHECK(periodic.epoch_round == 2);
  CHECK(periodic.version == 2);
  CHECK_FALSE(periodic.epoch_complete);

  // A refused push closes no round; a round closed by a loss counts.
  f.push(0, f.make_push(0, 1, 2, filled(parameter_count, 1.0f)));
  check_troupe_error(f.take(0), troupe_errc::stale_round);
  f.push(0, f.make_push(0, 2, 2, filled(parameter_count, 1.0f)));
  caf::anon_send_exit(f.dummies[1], caf::exit_reason::user_shutdown);
  f.sched.run();
  REQUIRE(f.take(0).params);
  CHECK_FALSE(file.exists());
  f.push(0, f.make_push(0, 3, 3, filled(parameter_count, 1.0f)));
  REQUIRE(f.take(0).params);
  REQUIRE(file.exists());
  CHECK(file.read().round == 4);

  f.save();
  REQUIRE(file.exists());
  auto at_end = file.read();
  CHECK(at_end.epoch_complete);
  CHECK(at_end.round == 4);
  CHECK(at_end.epoch == 0);
}

TEST_CASE("an async store closes no rounds: it checkpoints only when asked",
          "[store][async][checkpoint]") {
  temp_checkpoint file;
  store_fixture f("async", 2, [&](store_config& o) { o.checkpoint_every = 1; }, file.path);
  f.watch(0);
  f.watch(1);
  for (uint64_t i = 0; i < 4; ++i) {
    f.push(i % 2, f.make_push(static_cast<uint32_t>(i % 2), i, i, filled(parameter_count, 1.0f)));
    REQUIRE(f.take(i % 2).params);
  }
  CHECK_FALSE(file.exists());
  CHECK(f.stats().staleness_reported);
  f.save();
  auto at_end = file.read();
  CHECK(at_end.epoch_complete);
  CHECK(at_end.version == 4);
}

TEST_CASE("a periodic checkpoint that cannot be written is counted in the writer's stats, "
          "and "
          "training goes on",
          "[store][sync][checkpoint]") {
  const std::string path = "/nonexistent-troupe-dir/run.ckpt";
  store_fixture f("sync", 1, [&](store_config& o) { o.checkpoint_every = 1; }, path);
  f.watch(0);
  f.pusher(0)->send(f.store, epoch_atom::value, uint64_t{0}, uint64_t{0});
  for (uint64_t r = 0; r < 2; ++r) {
    f.push(0, f.make_push(0, r, r, filled(parameter_count, 1.0f)));
    REQUIRE(f.take(0).params); // the round was answered all the same
  }
  const auto written = f.writer_stats();
  CHECK(written.failed == 2);
  CHECK(written.written == 0);
  CHECK(written.last_error.find(path) != std::string::npos);
  CHECK(f.stats().version == 2);
}

TEST_CASE("an int8 sync store that cuts a checkpoint says so in the round's answers, and writes "
          "it once the next round's pushes brought every replica's residual; a residual of the "
          "wrong length is refused, naming replica and round",
          "[store][sync][checkpoint][int8]") {
  temp_checkpoint file;
  store_fixture f(
    "sync", 2,
    [&](store_config& o) {
      o.checkpoint_every = 1;
      o.wire = float_codec::int8;
    },
    file.path);
  f.watch(0);
  f.watch(1);
  const auto gradient = filled(parameter_count, 0.5f).rounded(float_codec::int8);
  f.push(0, f.make_push(0, 0, 0, gradient));
  f.push(1, f.make_push(1, 0, 0, gradient));
  auto a = f.take(0);
  REQUIRE(a.params);
  CHECK(a.params->cut);
  REQUIRE(f.take(1).params);
  CHECK_FALSE(file.exists()); // round 0's cut waits for the residuals
  for (uint32_t r : {0u, 1u}) {
    auto push = f.make_push(r, 1, 1, gradient);
    push.residual = filled(parameter_count, 0.25f * static_cast<float>(r + 1));
    f.push(r, push);
  }
  REQUIRE(f.take(0).params);
  REQUIRE(f.take(1).params);
  REQUIRE(file.exists());
  const auto saved = file.read();
  CHECK(saved.round == 1);
  REQUIRE(saved.residuals.size() == 2 * parameter_count);
  CHECK(saved.residuals.front() == 0.25f);
  CHECK(saved.residuals.back() == 0.5f);

  auto bad = f.make_push(0, 2, 2, gradient);
  bad.residual = filled(3, 0.25f);
  f.push(0, bad);
  auto refused = f.take(0);
  REQUIRE(refused.error);
  CHECK(*refused.error == troupe_errc::bad_gradient);
  CHECK_THAT(describe(*refused.error),
             Catch::Contains("residual from replica 0 for round 2 arrived malformed: 3 values "
                             "for store shard 0, expected "
                             + std::to_string(parameter_count)));
}
