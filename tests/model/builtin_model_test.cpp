// The built-in network as a troupe::model on a backend: the network's bits,
// buffers that grow with the batch, and the device capability it offers.
#include <catch2/catch.hpp>

#include <cstring>
#include <memory>
#include <random>
#include <vector>

#include "model/backend/cpu/eigen_backend.hpp"
#include "model/builtin_model.hpp"
#include "model/device_capability.hpp"
#include "model/network.hpp"

using namespace troupe;

namespace {

std::vector<float> uniform_floats(size_t count, uint32_t seed) {
  std::mt19937 engine(seed);
  std::uniform_real_distribution<float> draw(-1.0f, 1.0f);
  std::vector<float> values(count);
  for (auto& value : values)
    value = draw(engine);
  return values;
}

// The gradients of `rows` samples through the network directly and through
// the model (built for 3 rows, so it grows), with the same parameters.
struct side_by_side {
  model_spec spec;
  std::shared_ptr<backend> cpu{make_eigen_backend()};
  std::vector<float> params, images, targets, weights;
  std::vector<int32_t> labels;
  std::vector<float> direct, seamed;
  batch_stats direct_stats;
  batch_result seamed_result;
  bool direct_finite = false;
  bool seamed_finite = false;

  side_by_side(const std::string& text, size_t rows, bool weighted) {
    spec = *parse_model_spec(text);
    const size_t count = parameter_layout(spec).size();
    params = glorot_uniform_parameters(parameter_layout(spec), 7);
    images = uniform_floats(rows * static_cast<size_t>(spec.inputs), 1);
    targets = uniform_floats(rows * static_cast<size_t>(spec.classes()), 2);
    for (size_t r = 0; r < rows; ++r) {
      labels.push_back(static_cast<int32_t>(r % static_cast<size_t>(spec.classes())));
      weights.push_back(0.5f + static_cast<float>(r % 3));
    }
    const bool regression = spec.loss == loss_kind::squared_error;
    const float* batch_targets = regression ? targets.data() : nullptr;
    const float* batch_weights = weighted ? weights.data() : nullptr;
    network net(spec, *cpu, rows);
    net.use_parameters(params.data());
    direct.resize(count);
    direct_stats = net.compute_gradient(images.data(), labels.data(), rows, direct.data(),
                                        batch_targets, batch_weights);
    direct_finite = net.last_gradient_proven_finite();
    builtin_model model(spec, cpu, 3);
    batch samples{images.data(), labels.data(), rows, spec.inputs, batch_targets,
                  batch_weights};
    seamed.resize(count);
    seamed_result = model.gradient(params.data(), samples, seamed.data());
    seamed_finite = model.last_gradient_proven_finite();
  }
};

void check_same_bits(const side_by_side& run) {
  REQUIRE(run.direct.size() == run.seamed.size());
  CHECK(std::memcmp(run.direct.data(), run.seamed.data(), run.direct.size() * sizeof(float))
        == 0);
  CHECK(run.direct_stats.loss_sum == run.seamed_result.loss_sum);
  CHECK(run.direct_stats.correct == run.seamed_result.correct);
  CHECK(run.direct_finite == run.seamed_finite);
}

class constant_model : public model {
public:
  int inputs() const override { return 1; }
  int outputs() const override { return 1; }
  size_t parameter_count() const override { return 1; }
  void initialize(uint64_t, float* parameters) const override { parameters[0] = 0; }
  batch_result gradient(const float*, const batch&, float* gradient) override {
    gradient[0] = 0;
    return {};
  }
  batch_result evaluate(const float*, const batch&) override { return {}; }
  void predict(const float*, const float*, size_t, float* outputs) override { outputs[0] = 0; }
};

} // namespace

TEST_CASE("the built-in model gives the network's gradient bits, growing with the batch",
          "[builtin_model]") {
  side_by_side run("8-6relu-3", 10, false);
  check_same_bits(run);
  CHECK(run.seamed_finite);
}

TEST_CASE("the built-in model honours sample weights and regression targets as the network does",
          "[builtin_model]") {
  SECTION("weighted cross-entropy") { check_same_bits(side_by_side("8-6relu-3", 7, true)); }
  SECTION("squared error") { check_same_bits(side_by_side("8-6relu-3:mse", 5, false)); }
}

TEST_CASE("the built-in model offers a device capability and a user's model none",
          "[builtin_model]") {
  builtin_model builtin(*parse_model_spec("4-2"));
  constant_model mine;
  CHECK(device_capability_of(builtin) == &static_cast<device_capability&>(builtin));
  CHECK(device_capability_of(mine) == nullptr);
  auto* device = device_capability_of(builtin);
  CHECK(device->reserve(8));
  CHECK_FALSE(device->reserve(8));
  CHECK_FALSE(device->reserve(2));
  CHECK(device->reserve(9));
}
