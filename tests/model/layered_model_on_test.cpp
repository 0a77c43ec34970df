// A layered model built for a named device, and the dropout mask that the
// CPU layer and its CUDA twin share (model/layers/dropout_mask.hpp), checked
// on the host against the splitmix64 stream it reproduces.
#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "model/layers/dropout_mask.hpp"
#include "model/layers/layered_model_on.hpp"
#include "model/random.hpp"

using namespace troupe;

TEST_CASE("the dropout mask's draws are the splitmix64 stream's, keyed as mix_seed keys",
          "[layers][dropout]") {
  for (uint64_t index : {uint64_t{0}, uint64_t{7}, uint64_t{59999}}) {
    const uint64_t sample = dropout_mask::sample_seed(42, 3, index);
    CHECK(sample == mix_seed(42, 3, index));
    random_stream stream(sample);
    for (uint64_t place = 0; place < 1000; ++place) {
      const uint64_t drawn = stream.next();
      REQUIRE(dropout_mask::draw_at(sample, place) == drawn);
      const float unit = static_cast<float>(drawn >> 40) * 0x1.0p-24f;
      REQUIRE(dropout_mask::kept(sample, place, 0.5f) == (unit >= 0.5f));
    }
  }
}

TEST_CASE("a layered model is built on cpu and refused on a device that is neither",
          "[layers][device]") {
  const std::string text = "6x6x1-conv2k3relu-maxpool2-flatten-3";
  auto on_cpu = make_layered_model_on(text, "cpu");
  REQUIRE(on_cpu);
  CHECK((*on_cpu)->outputs() == 3);
  auto elsewhere = make_layered_model_on(text, "tpu:0");
  REQUIRE(!elsewhere);
  CHECK(elsewhere.error().message.find("cpu or cuda:N") != std::string::npos);
  auto bad_text = make_layered_model_on("6x6x1-conv2k9-3", "cpu");
  CHECK(!bad_text);
}

TEST_CASE("a layered model on cuda is built, or refused with the reason, never half-built",
          "[layers][device]") {
  // With the CUDA backend and a GPU it is built; without a GPU the device
  // is refused; in a build without CUDA the message says so.
  auto made = make_layered_model_on("6x6x1-conv2k3relu-maxpool2-flatten-3", "cuda:0");
  if (made) {
    CHECK((*made)->outputs() == 3);
    return;
  }
  INFO(made.error().message);
  const auto& message = made.error().message;
  CHECK((message.find("this build has no CUDA backend") != std::string::npos ||
         message.find("cuda:0") != std::string::npos));
}
