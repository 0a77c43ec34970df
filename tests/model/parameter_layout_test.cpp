// The flat parameter layout, Glorot initialisation and model descriptions.
#include <catch2/catch.hpp>

#include <cmath>

#include "model/parameter_layout.hpp"

using namespace troupe;

TEST_CASE("the seed model's layout puts w0 b0 w1 b1 back to back",
          "[model][layout]") {
  auto spec = parse_model_spec("784-128relu-10");
  REQUIRE(spec);
  parameter_layout layout(*spec);
  REQUIRE(layout.layers().size() == 2);
  CHECK(layout.size() == 101770u); // 784*128 + 128 + 128*10 + 10
  const auto& first = layout.layers()[0];
  const auto& second = layout.layers()[1];
  CHECK(first.in == 784);
  CHECK(first.out == 128);
  CHECK(first.weights_offset == 0u);
  CHECK(first.bias_offset == 784u * 128u);
  CHECK(second.weights_offset == 784u * 128u + 128u);
  CHECK(second.bias_offset == 784u * 128u + 128u + 1280u);
}

TEST_CASE("glorot init is bounded, zero-biased, seeded and spread",
          "[model][layout][init]") {
  auto spec = parse_model_spec("784-128relu-10");
  REQUIRE(spec);
  parameter_layout layout(*spec);
  auto params = glorot_uniform_parameters(layout, 42);
  CHECK(params == glorot_uniform_parameters(layout, 42));
  CHECK(params != glorot_uniform_parameters(layout, 43));
  for (const auto& view : layout.layers()) {
    const double limit = std::sqrt(6.0 / (view.in + view.out));
    const size_t count = static_cast<size_t>(view.in) * view.out;
    double sum = 0, sum_squares = 0;
    for (size_t i = 0; i < count; ++i) {
      const float w = params[view.weights_offset + i];
      REQUIRE(std::abs(w) <= limit);
      sum += w;
      sum_squares += double{w} * w;
    }
    // A uniform on [-limit, limit] has mean 0 and variance limit^2 / 3.
    CHECK(std::abs(sum / count) < 0.05 * limit);
    CHECK(sum_squares / count == Approx(limit * limit / 3).epsilon(0.1));
    for (int i = 0; i < view.out; ++i)
      REQUIRE(params[view.bias_offset + i] == 0.0f);
  }
}

TEST_CASE("model descriptions parse, print back and fingerprint", "[model][spec]") {
  auto spec = parse_model_spec("784-128relu-64relu-10");
  REQUIRE(spec);
  CHECK(spec->inputs == 784);
  REQUIRE(spec->layers.size() == 3);
  CHECK(spec->layers[0].act == activation::relu);
  CHECK(spec->layers[2].act == activation::none);
  CHECK(spec->classes() == 10);
  CHECK(to_string(*spec) == "784-128relu-64relu-10");
  auto other = parse_model_spec("784-128relu-10");
  REQUIRE(other);
  CHECK(fingerprint(*spec) != fingerprint(*other));
  CHECK(fingerprint(*other) == fingerprint(*parse_model_spec("784-128relu-10")));
}

TEST_CASE("malformed model descriptions are clear errors", "[model][spec]") {
  for (const char* text : {"", "784", "784-", "784-abc-10", "784-128relu-10relu",
                           "784-0-10", "784-128-1", "-128-10", "784--10"}) {
    auto spec = parse_model_spec(text);
    INFO("'" << text << "'");
    REQUIRE_FALSE(spec);
    CHECK(spec.error().code == errc::invalid_argument);
    CHECK(spec.error().message.find("model '") != std::string::npos);
  }
}
