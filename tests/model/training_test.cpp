// A short real training run on the Fashion-MNIST slice in tests/data.
#include <catch2/catch.hpp>

#include <cmath>

#include "model/backend/cpu/eigen_backend.hpp"
#include "model/train/local_trainer.hpp"
#include "tests/test_slice.hpp"

using namespace troupe;

TEST_CASE("three epochs on the slice lower the loss and beat chance widely",
          "[model][training]") {
  const dataset_pair* data = &test_slice();
  auto spec = parse_model_spec("784-128relu-10");
  REQUIRE(spec);
  auto compute = make_eigen_backend();
  auto trainer = local_trainer::make(*spec, *compute, optimizer_config{}, 42, 32);
  REQUIRE(trainer);
  const double initial_loss = trainer->evaluate(data->test).mean_loss();
  CHECK(initial_loss == Approx(std::log(10.0)).epsilon(0.3)); // near-uniform start
  std::vector<double> epoch_losses;
  for (uint64_t epoch = 0; epoch < 3; ++epoch) {
    auto report = trainer->run_epoch(data->train, epoch);
    CHECK(report.train.samples == data->train.count);
    CHECK(report.steps == (static_cast<size_t>(data->train.count) + 31) / 32);
    epoch_losses.push_back(report.train.mean_loss());
  }
  CHECK(epoch_losses[2] < epoch_losses[0]);
  auto test = trainer->evaluate(data->test);
  CHECK(test.samples == data->test.count);
  CHECK(test.mean_loss() < 0.8 * initial_loss);
  CHECK(test.accuracy() > 0.65); // chance is 0.10
}

TEST_CASE("training is bitwise reproducible for a seed", "[model][training]") {
  const dataset_pair* data = &test_slice();
  auto spec = parse_model_spec("784-32relu-10");
  REQUIRE(spec);
  auto compute = make_eigen_backend();
  auto run = [&](uint64_t seed) {
    auto trainer = local_trainer::make(*spec, *compute, optimizer_config{}, seed, 50);
    trainer->run_epoch(data->train, 0);
    return trainer->parameters();
  };
  CHECK(run(5) == run(5));
  CHECK(run(5) != run(6));
}
