// The backend factory: "cpu" always works, an unknown name is a caller's
// mistake, and a CUDA device that cannot be had is a device_error saying why.
#include <catch2/catch.hpp>

#include "model/backend/backend.hpp"

using namespace troupe;

TEST_CASE("make_backend builds the cpu backend", "[backend][factory]") {
  auto compute = make_backend("cpu");
  REQUIRE(compute);
  CHECK((*compute)->name() == "cpu");
  CHECK((*compute)->host_memory());
}

TEST_CASE("make_backend rejects an unknown device name", "[backend][factory]") {
  auto compute = make_backend("tpu");
  REQUIRE_FALSE(compute);
  CHECK(compute.error().code == errc::invalid_argument);
  CHECK_THAT(compute.error().message, Catch::Contains("tpu"));
}

// Runs everywhere: without a GPU (or without CUDA built in) cuda:0 must fail
// with a reason; with one, cuda:0 works and cuda:99 must fail instead.
TEST_CASE("make_backend reports a missing cuda device as a device_error",
          "[backend][factory][cuda]") {
  auto first = make_backend("cuda:0");
  std::string device = "cuda:0";
  if (first) {
    CHECK((*first)->name() == "cuda:0");
    CHECK_FALSE((*first)->host_memory());
    device = "cuda:99";
  }
  auto missing = first ? make_backend(device) : std::move(first);
  INFO(device << ": " << (missing ? std::string("created") : missing.error().message));
  REQUIRE_FALSE(missing);
  CHECK(missing.error().code == errc::device);
  CHECK_THAT(missing.error().message, Catch::Contains("CUDA"));
  CHECK(missing.error().message.size() > 20); // a reason, not just a name
}
