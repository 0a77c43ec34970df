// A model's gradient() told to a gradient_listener: the sums first, then
// every float of the gradient once, the spans it wants first before the
// rest where the model can choose (the built-in network's first layer, in
// blocks of rows), with the bits of a call without a listener.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <optional>
#include <random>
#include <vector>

#include <troupe/model.hpp>

#include "model/gradient_order.hpp"

using namespace troupe;
using troupe::detail::row_block;
using troupe::detail::wanted_rows_first;

namespace {

// Records what a model tells it, wanting `wanted` first.
struct recorder final : gradient_listener {
  std::vector<parameter_span> wanted;
  std::optional<batch_result> sums;
  std::vector<parameter_span> done_spans;
  bool done_before_sums = false;

  std::vector<parameter_span> wanted_first() const override { return wanted; }
  void loss_known(const batch_result& result) override { sums = result; }
  void done(parameter_span span) override {
    done_before_sums = done_before_sums || !sums;
    done_spans.push_back(span);
  }
};

// The batch's gradient through `description`'s model, without a listener
// and with `listener`, on random inputs.
struct two_calls {
  std::vector<float> alone, told;
  batch_result alone_result, told_result;
  size_t parameters = 0;

  two_calls(const std::string& description, gradient_listener& listener) {
    auto m = make_model(description);
    REQUIRE(m);
    auto& model = **m;
    parameters = model.parameter_count();
    std::vector<float> params(parameters);
    model.initialize(3, params.data());
    const size_t rows = 24;
    std::mt19937 engine(5);
    std::uniform_real_distribution<float> draw(0.0f, 1.0f);
    std::vector<float> features(rows * static_cast<size_t>(model.inputs()));
    for (auto& value : features)
      value = draw(engine) < 0.4f ? 0.0f : draw(engine);
    std::vector<int32_t> labels(rows);
    for (size_t r = 0; r < rows; ++r)
      labels[r] = static_cast<int32_t>(r % static_cast<size_t>(model.outputs()));
    batch samples{features.data(), labels.data(), rows, model.inputs()};
    alone.assign(parameters, -1.0f);
    told.assign(parameters, -2.0f);
    alone_result = model.gradient(params.data(), samples, alone.data());
    samples.listener = &listener;
    told_result = model.gradient(params.data(), samples, told.data());
  }
};

// Checks that the spans cover [0, count) once each.
void check_tiles(std::vector<parameter_span> spans, size_t count) {
  std::sort(spans.begin(), spans.end(),
            [](const parameter_span& a, const parameter_span& b) { return a.offset < b.offset; });
  size_t end = 0;
  for (const auto& span : spans) {
    CHECK(span.offset == end);
    end = span.offset + span.count;
  }
  CHECK(end == count);
}

void check_same(const two_calls& calls, const recorder& heard) {
  CHECK(std::memcmp(calls.alone.data(), calls.told.data(), calls.alone.size() * sizeof(float))
        == 0);
  REQUIRE(heard.sums);
  CHECK(heard.sums->loss_sum == calls.told_result.loss_sum);
  CHECK(heard.sums->correct == calls.told_result.correct);
  CHECK(calls.told_result.loss_sum == calls.alone_result.loss_sum);
  CHECK_FALSE(heard.done_before_sums);
  check_tiles(heard.done_spans, calls.parameters);
}

// The position of the first done span that holds `offset`.
size_t told_at(const recorder& heard, size_t offset) {
  for (size_t i = 0; i < heard.done_spans.size(); ++i)
    if (heard.done_spans[i].offset <= offset
        && offset < heard.done_spans[i].offset + heard.done_spans[i].count)
      return i;
  return heard.done_spans.size();
}

} // namespace

TEST_CASE("the built-in network tells its sums, then each part of its gradient once, the "
          "wanted rows of its first layer first, with the bits of a call without a listener",
          "[model][listener]") {
  // 784 x 128 + 128 + 128 x 10 + 10 = 101,770 floats; the first layer's
  // weights are its first 100,352.
  const size_t half = 50885;
  for (const bool upper : {true, false}) {
    INFO((upper ? "the upper half wanted" : "the lower half wanted"));
    recorder heard;
    heard.wanted = {upper ? parameter_span{half, 101770 - half} : parameter_span{0, half}};
    const two_calls calls("784-128relu-10", heard);
    REQUIRE(calls.parameters == 101770);
    check_same(calls, heard);
    // The first layer's rows in two blocks, split at the row that holds
    // the wanted span's edge: the wanted block first.
    const size_t edge_row = half / 128;
    const size_t wanted_at = told_at(heard, upper ? 100351 : 0);
    const size_t other_at = told_at(heard, upper ? 0 : 100351);
    CHECK(wanted_at < other_at);
    CHECK(heard.done_spans[wanted_at].count
          == (upper ? 784 - edge_row : edge_row + 1) * size_t{128});
  }
  recorder none;
  const two_calls calls("784-128relu-10", none);
  check_same(calls, none);
  CHECK(none.done_spans.size() == 4); // each layer's weights and bias, whole
}

TEST_CASE("a layered model tells each layer's part of its gradient once it is done, from the "
          "last layer, with the bits of a call without a listener",
          "[model][listener]") {
  recorder heard;
  const two_calls calls("28x28x1-conv4k3relu-maxpool2-conv8k3-batchnorm-relu-flatten-10",
                        heard);
  check_same(calls, heard);
  REQUIRE(heard.done_spans.size() >= 2);
  CHECK(heard.done_spans.front().offset > heard.done_spans.back().offset);
  CHECK(heard.done_spans.back().offset == 0);
}

TEST_CASE("a weight matrix's rows split where wanted spans start and end, wanted blocks first",
          "[model][listener]") {
  using blocks = std::vector<row_block>;
  auto same = [](const blocks& a, const blocks& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](row_block x, row_block y) {
      return x.begin == y.begin && x.end == y.end;
    });
  };
  // A 10 x 4 matrix at offset 100 of the buffer.
  CHECK(same(wanted_rows_first({}, 100, 10, 4), {{0, 10}}));
  CHECK(same(wanted_rows_first({{0, 100}, {140, 5}}, 100, 10, 4), {{0, 10}})); // outside
  CHECK(same(wanted_rows_first({{0, 1000}}, 100, 10, 4), {{0, 10}}));          // all of it
  CHECK(same(wanted_rows_first({{110, 500}}, 100, 10, 4), {{2, 10}, {0, 2}}));
  // A span that ends inside row 3 takes all of row 3.
  CHECK(same(wanted_rows_first({{0, 113}}, 100, 10, 4), {{0, 4}, {4, 10}}));
  CHECK(same(wanted_rows_first({{108, 8}}, 100, 10, 4), {{2, 4}, {0, 2}, {4, 10}}));
  CHECK(same(wanted_rows_first({{104, 4}, {124, 8}}, 100, 10, 4),
             {{1, 2}, {6, 8}, {0, 1}, {2, 6}, {8, 10}}));
}
