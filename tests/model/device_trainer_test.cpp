// The device-resident trainer on the CPU backend: it must compute exactly what
// local_trainer computes (the CUDA tests then hold the GPU to this), and its
// device-driven ops must match their host counterparts.
#include <catch2/catch.hpp>

#include <numeric>
#include <vector>

#include "model/backend/cpu/eigen_backend.hpp"
#include "model/train/device_trainer.hpp"
#include "model/optim/adam.hpp"
#include "tests/test_slice.hpp"

using namespace troupe;

namespace {

model_spec mlp() {
  auto spec = parse_model_spec("784-64relu-10");
  REQUIRE(spec);
  return *spec;
}

} // namespace

TEST_CASE("device trainer equals local trainer bitwise over two epochs",
          "[model][device_trainer]") {
  const auto& data = test_slice();
  auto compute = make_eigen_backend();
  // 32 divides the 2000 samples' epoch into 62 full batches and one of 16;
  // 500 into four full batches only.
  for (size_t batch : {size_t{32}, size_t{500}}) {
    for (bool record : {true, false}) {
      INFO("batch " << batch << ", recorded steps " << record);
      auto reference = local_trainer::make(mlp(), *compute, optimizer_config{}, 3, batch);
      auto trainer = device_trainer::make(mlp(), *compute, data.train, optimizer_config{},
                                          3, batch, record);
      REQUIRE(reference);
      REQUIRE(trainer);
      CHECK((*trainer)->parameters() == reference->parameters());
      for (uint64_t epoch = 0; epoch < 2; ++epoch) {
        const auto expected = reference->run_epoch(data.train, epoch);
        const auto got = (*trainer)->run_epoch(epoch);
        CHECK(got.steps == expected.steps);
        CHECK(got.train.samples == expected.train.samples);
        CHECK(got.train.correct == expected.train.correct);
        // The reference sums each batch's loss in double, the trainer all in float.
        CHECK(got.train.loss_sum == Approx(expected.train.loss_sum).epsilon(1e-5));
      }
      CHECK((*trainer)->parameters() == reference->parameters());
      const auto test = (*trainer)->evaluate(data.test);
      CHECK(test.correct == reference->evaluate(data.test).correct);
      CHECK(test.accuracy() > 0.5); // it learned (8 steps at batch 500): chance is 0.10
      CHECK((*trainer)->step_mode().rfind(record ? "recorded" : "op by op", 0) == 0);
    }
  }
}

TEST_CASE("device trainer refuses what it cannot train", "[model][device_trainer]") {
  const auto& data = test_slice();
  auto compute = make_eigen_backend();
  optimizer_config sgd;
  sgd.name = "sgd";
  auto not_adam = device_trainer::make(mlp(), *compute, data.train, sgd, 1, 32);
  REQUIRE_FALSE(not_adam);
  CHECK(not_adam.error().message.find("Adam only") != std::string::npos);
  auto no_batch = device_trainer::make(mlp(), *compute, data.train, optimizer_config{}, 1, 0);
  REQUIRE_FALSE(no_batch);
  CHECK(no_batch.error().message.find("batch size") != std::string::npos);
  auto wide = parse_model_spec("785-8relu-10");
  REQUIRE(wide);
  auto misfit = device_trainer::make(*wide, *compute, data.train, optimizer_config{}, 1, 32);
  REQUIRE_FALSE(misfit);
  CHECK(misfit.error().message.find("785") != std::string::npos);
}

TEST_CASE("gather_rows and advance_step follow the counters", "[model][device_trainer]") {
  auto compute = make_eigen_backend();
  const int features = 3;
  std::vector<float> images(5 * features);
  std::iota(images.begin(), images.end(), 0.0f);
  const std::vector<int32_t> labels{10, 11, 12, 13, 14};
  const std::vector<uint32_t> order{4, 0, 3, 1, 2};
  step_counters counters;
  counters.cursor = 2;
  std::vector<float> batch(2 * features);
  std::vector<int32_t> batch_labels(2);
  compute->resident_ops()->gather_rows(images.data(), labels.data(), features, order.data(), &counters,
                       2, batch.data(), batch_labels.data());
  CHECK(batch == std::vector<float>{9, 10, 11, 3, 4, 5}); // rows 3 and 1
  CHECK(batch_labels == std::vector<int32_t>{13, 11});
  compute->resident_ops()->advance_step(&counters, 2);
  CHECK(counters.cursor == 4);
  CHECK(counters.steps == 1);
}

TEST_CASE("adam_update_counted takes its step number from the counters",
          "[model][device_trainer]") {
  auto compute = make_eigen_backend();
  const optimizer_config config;
  const std::vector<float> gradient{0.5f, -0.25f, 1e-3f, 0.0f};
  std::vector<float> weights{1, 2, 3, 4}, m(4, 0.1f), v(4, 0.01f);
  auto host_weights = weights, host_m = m, host_v = v;
  step_counters counters;
  counters.steps = 7;
  compute->resident_ops()->adam_update_counted(weights.data(), gradient.data(), m.data(), v.data(), 4,
                               adam_settings(config), &counters);
  compute->adam_update(host_weights.data(), gradient.data(), host_m.data(), host_v.data(),
                       4, adam_step_coefficients(config, 7));
  CHECK(weights == host_weights);
  CHECK(m == host_m);
  CHECK(v == host_v);
  CHECK(weights[0] != 1.0f); // a step was taken
}
