// Class weights (Keras's class_weight): their text, and the network's
// weighted loss and gradient against a direct computation on real samples.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <vector>

#include "model/backend/cpu/eigen_backend.hpp"
#include "model/checkpoint.hpp"
#include "model/class_weights.hpp"
#include "model/network.hpp"
#include "model/random.hpp"
#include "tests/test_slice.hpp"

using namespace troupe;

namespace {

// The first `count` samples of the slice's training set.
struct real_batch {
  std::vector<float> inputs;
  std::vector<int32_t> labels;
};

real_batch first_samples(size_t count) {
  const dataset& train = test_slice().train;
  real_batch b;
  b.inputs.assign(train.inputs.begin(), train.inputs.begin() + count * train.features);
  b.labels.assign(train.labels.begin(), train.labels.begin() + count);
  return b;
}

std::vector<float> perturbed_parameters(const network& net, uint64_t seed) {
  auto params = glorot_uniform_parameters(net.layout(), seed);
  random_stream random(seed + 1);
  for (auto& p : params) // non-zero biases too
    p += 0.1f * (random.unit_float() - 0.5f);
  return params;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

} // namespace

TEST_CASE("class weights parse from CLASS:WEIGHT, the classes not named weigh 1",
          "[model][class-weights]") {
  auto parsed = parse_class_weights("3:5.5,0:0.5");
  REQUIRE(parsed);
  CHECK(*parsed == std::vector<float>{0.5f, 1.0f, 1.0f, 5.5f});
  CHECK(class_weights_text(*parsed) == "0:0.5,3:5.5");
  CHECK(class_weights_for(*parsed, 5) == std::vector<float>{0.5f, 1.0f, 1.0f, 5.5f, 1.0f});
  CHECK(parse_class_weights("")->empty());
  CHECK(class_weights_text(*parse_class_weights("0:1,2:1")).empty());
  const std::vector<std::pair<std::string, std::string>> refused{
    {"1:-2", "'1:-2' gives a negative weight"},
    {"1:nan", "'1:nan' gives a weight that is not finite"},
    {"1:inf", "'1:inf' gives a weight that is not finite"},
    {"1:heavy", "gives weight 'heavy': a weight is a number"},
    {"x:2", "names class 'x'"},
    {"-1:2", "names class '-1'"},
    {"1", "'1' is not CLASS:WEIGHT"},
    {"1:2,1:3", "names class 1 again"},
    {"1:2,", "ends with a comma"},
  };
  for (const auto& [text, says] : refused) {
    auto bad = parse_class_weights(text);
    INFO(text);
    REQUIRE_FALSE(bad);
    CHECK_THAT(bad.error().message, Catch::Contains("--class-weights: ")
                                      && Catch::Contains(says));
  }
  CHECK_THAT(refuse_class_weights({1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2}, 10),
             Catch::Contains("class 10 is out of range: the data has classes 0..9"));
  CHECK_THAT(refuse_class_weights({0, 0, 0}, 3), Catch::Contains("every class weighs 0"));
  CHECK_THAT(refuse_class_weights({0, 0}, 3), !Catch::Contains("every class weighs 0"));
  CHECK_THAT(refuse_class_weights({2}, 0), Catch::Contains("regression set"));
  CHECK(refuse_class_weights({}, 0).empty());
}

TEST_CASE("a weighted batch's loss and gradient are the weighted sums over single samples "
          "divided by the batch size",
          "[model][class-weights][gradient]") {
  auto spec = parse_model_spec("784-16relu-10");
  REQUIRE(spec);
  auto compute = make_eigen_backend();
  const size_t count = 12;
  const auto b = first_samples(count);
  const std::vector<float> class_weights{0.5f, 3.0f, 1.0f, 0.0f, 2.5f, 1.0f, 1.0f, 4.0f, 1.0f, 0.25f};
  std::vector<float> w(count);
  sample_weights(class_weights, b.labels.data(), count, w.data());
  network net(*spec, *compute, count);
  const auto params = perturbed_parameters(net, 5);
  net.use_parameters(params.data());
  std::vector<float> gradient(params.size());
  const auto stats = net.compute_gradient(b.inputs.data(), b.labels.data(), count,
                                          gradient.data(), nullptr, w.data());
  // Directly: each sample alone, its gradient of its own loss, weighted.
  network single(*spec, *compute, 1);
  single.use_parameters(params.data());
  std::vector<double> expected(params.size(), 0.0);
  std::vector<float> one(params.size());
  double loss_sum = 0;
  int64_t correct = 0;
  for (size_t i = 0; i < count; ++i) {
    const auto s = single.compute_gradient(b.inputs.data() + i * spec->inputs,
                                           b.labels.data() + i, 1, one.data());
    loss_sum += w[i] * s.loss_sum;
    correct += s.correct;
    for (size_t k = 0; k < one.size(); ++k)
      expected[k] += static_cast<double>(w[i]) * one[k] / static_cast<double>(count);
  }
  CHECK(stats.samples == static_cast<int64_t>(count));
  CHECK(stats.correct == correct); // accuracy is not weighted
  CHECK(stats.loss_sum == Approx(loss_sum).epsilon(1e-5));
  double largest = 0;
  for (double g : expected)
    largest = std::max(largest, std::abs(g));
  REQUIRE(largest > 0);
  for (size_t k = 0; k < gradient.size(); ++k) {
    INFO("parameter " << k);
    REQUIRE(gradient[k] == Approx(expected[k]).margin(1e-6 * largest).epsilon(1e-4));
  }
}

TEST_CASE("the weighted loss's gradient matches its finite differences",
          "[model][class-weights][gradient]") {
  auto spec = parse_model_spec("7-6relu-5relu-3");
  REQUIRE(spec);
  auto compute = make_eigen_backend();
  const size_t batch = 5;
  random_stream random(3);
  std::vector<float> inputs;
  std::vector<int32_t> labels;
  for (size_t i = 0; i < batch * spec->inputs; ++i)
    inputs.push_back(2.0f * random.unit_float() - 1.0f);
  for (size_t i = 0; i < batch; ++i)
    labels.push_back(static_cast<int32_t>(i % 3));
  const std::vector<float> w{2.0f, 0.5f, 0.0f, 2.0f, 0.5f}; // class 0: 2, 1: 0.5, 2: 0
  network net(*spec, *compute, batch);
  auto params = perturbed_parameters(net, 7);
  std::vector<float> gradient(params.size()), scratch(params.size());
  net.use_parameters(params.data());
  net.compute_gradient(inputs.data(), labels.data(), batch, gradient.data(), nullptr, w.data());
  auto weighted_loss = [&] { // sum_i w_i loss_i / batch
    net.use_parameters(params.data());
    return net.compute_gradient(inputs.data(), labels.data(), batch, scratch.data(), nullptr,
                                w.data())
             .loss_sum
           / static_cast<double>(batch);
  };
  const float step = 1e-2f;
  for (size_t i = 0; i < params.size(); ++i) {
    const float saved = params[i];
    params[i] = saved + step;
    const double up = weighted_loss();
    params[i] = saved - step;
    const double down = weighted_loss();
    params[i] = saved;
    const double numeric = (up - down) / (2.0 * step);
    INFO("parameter " << i << " analytic " << gradient[i] << " numeric " << numeric);
    REQUIRE(std::abs(gradient[i] - numeric) <= 2e-3 + 2e-2 * std::abs(numeric));
  }
}

TEST_CASE("every weight 1 gives the bits of no weights, loss and gradient",
          "[model][class-weights][bits]") {
  auto spec = parse_model_spec("784-32relu-10");
  REQUIRE(spec);
  auto compute = make_eigen_backend();
  const size_t count = 32;
  const auto b = first_samples(count);
  network net(*spec, *compute, count);
  const auto params = perturbed_parameters(net, 9);
  net.use_parameters(params.data());
  std::vector<float> plain(params.size()), weighted(params.size());
  const auto none = net.compute_gradient(b.inputs.data(), b.labels.data(), count, plain.data());
  const std::vector<float> ones(count, 1.0f);
  const auto all_one = net.compute_gradient(b.inputs.data(), b.labels.data(), count,
                                            weighted.data(), nullptr, ones.data());
  CHECK(same_bits(plain, weighted));
  CHECK(none.loss_sum == all_one.loss_sum);
  CHECK(none.correct == all_one.correct);
  // Evaluation after a weighted step weighs nothing.
  const auto evaluated = net.evaluate(b.inputs.data(), b.labels.data(), count);
  CHECK(evaluated.loss_sum == none.loss_sum);
}

TEST_CASE("a checkpoint resumes only with the class weights it was written with",
          "[model][class-weights][checkpoint]") {
  checkpoint saved;
  saved.model = "784-16relu-10";
  saved.params.resize(10);
  const std::vector<setting_text> base{{"seed", "42"}};
  auto with = [&base](const std::string& weights) {
    auto settings = base;
    settings.push_back({"class-weights", weights});
    return settings;
  };
  saved.settings = with("3:5.5");
  CHECK(check_compatible(saved, saved.model, with("3:5.5"), 10, "ck"));
  auto other = check_compatible(saved, saved.model, with("3:2"), 10, "ck");
  REQUIRE_FALSE(other);
  CHECK_THAT(other.error().message, Catch::Contains("--class-weights=3:5.5 there, 3:2 here"));
  auto none = check_compatible(saved, saved.model, base, 10, "ck");
  REQUIRE_FALSE(none);
  CHECK_THAT(none.error().message, Catch::Contains("--class-weights=3:5.5 there, not set here"));
  saved.settings = base; // a run without weights
  auto added = check_compatible(saved, saved.model, with("3:5.5"), 10, "ck");
  REQUIRE_FALSE(added);
  CHECK_THAT(added.error().message,
             Catch::Contains("--class-weights=(not recorded) there, 3:5.5 here"));
  CHECK(check_compatible(saved, saved.model, base, 10, "ck"));
}
