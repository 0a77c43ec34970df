// Tests for CPU inference: closed-form logits, chunking that changes no bit,
// agreement with network's evaluation, and the softmax and argmax of rows.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <vector>

#include "model/backend/cpu/eigen_backend.hpp"
#include "model/network.hpp"
#include "model/parameter_layout.hpp"
#include "model/predict.hpp"
#include "tests/test_slice.hpp"

using namespace troupe;

TEST_CASE("predict_logits computes a small network's closed form", "[export][predict]") {
  auto spec = parse_model_spec("3-2relu-2");
  REQUIRE(spec);
  REQUIRE(parameter_layout(*spec).size() == 14);
  const std::vector<float> params = {
    1, 0,  0, 1,  1, -1, // w0: (3, 2)
    0.5f, -4,            // b0
    1, 2,  3, 4,         // w1: (2, 2)
    0, 1,                // b1
  };
  const std::vector<float> x = {1, 2, 3, 0, 0, 0};
  std::vector<float> logits(4);
  predict_logits(*spec, params.data(), x.data(), 2, logits.data());
  // Row 0: h = relu((4, -1) + (0.5, -4)) = (4.5, 0); logits = (4.5, 10).
  // Row 1: h = relu((0.5, -4)) = (0.5, 0); logits = (0.5, 2).
  CHECK(logits == std::vector<float>{4.5f, 10.0f, 0.5f, 2.0f});
}

TEST_CASE("predict_logits gives the same bits in chunks as row by row",
          "[export][predict]") {
  const auto& data = test_slice().train;
  auto spec = parse_model_spec("784-32relu-10");
  REQUIRE(spec);
  const auto params = glorot_uniform_parameters(parameter_layout(*spec), 9);
  const size_t rows = predict_chunk_rows + 7; // a full chunk and a short one
  REQUIRE(static_cast<size_t>(data.count) >= rows);
  std::vector<float> together(rows * 10);
  predict_logits(*spec, params.data(), data.inputs.data(), rows, together.data());
  std::vector<float> alone(rows * 10);
  for (size_t r = 0; r < rows; ++r)
    predict_logits(*spec, params.data(), data.input(r), 1, alone.data() + r * 10);
  CHECK(std::memcmp(together.data(), alone.data(), together.size() * sizeof(float)) == 0);
}

TEST_CASE("predictions count the hits that network's evaluation counts",
          "[export][predict]") {
  const auto& data = test_slice().test;
  auto spec = parse_model_spec("784-64relu-32relu-10");
  REQUIRE(spec);
  const auto params = glorot_uniform_parameters(parameter_layout(*spec), 4);
  auto compute = make_eigen_backend();
  network net(*spec, *compute, 128);
  net.use_parameters(params.data());
  const auto stats = net.evaluate(data.inputs.data(), data.labels.data(), data.count);
  std::vector<float> logits(static_cast<size_t>(data.count) * 10);
  predict_logits(*spec, params.data(), data.inputs.data(), data.count, logits.data());
  const auto predicted = argmax_rows(logits.data(), data.count, 10);
  int64_t hits = 0;
  for (int i = 0; i < data.count; ++i)
    hits += predicted[i] == data.labels[i] ? 1 : 0;
  CHECK(hits == stats.correct);
}

TEST_CASE("softmax_rows sums each row to one without overflowing", "[export][predict]") {
  std::vector<float> values = {0, 0, 0, 0, 1000, 1001, 1000, 998, -1e30f, 0, -1e30f, -1e30f};
  softmax_rows(values.data(), 3, 4);
  for (int r = 0; r < 3; ++r) {
    double sum = 0;
    for (int c = 0; c < 4; ++c) {
      CHECK(std::isfinite(values[r * 4 + c]));
      sum += values[r * 4 + c];
    }
    CHECK(sum == Approx(1.0).epsilon(1e-6));
  }
  CHECK(values[0] == Approx(0.25));
  CHECK(values[5] / values[4] == Approx(std::exp(1.0)));
  CHECK(values[9] == 1.0f);
}

TEST_CASE("argmax_rows picks the first of equal maxima", "[export][predict]") {
  const std::vector<float> values = {1, 3, 3, 0, -1, -2, -1, -5};
  CHECK(argmax_rows(values.data(), 2, 4) == std::vector<int32_t>{1, 0});
}
