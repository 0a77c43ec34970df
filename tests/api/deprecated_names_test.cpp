// The public names of the release before still compile, for one release,
// as aliases of the new ones (with a deprecation warning, silenced here).
#include <catch2/catch.hpp>

#include <type_traits>

#include <troupe/troupe.hpp>

#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

TEST_CASE("model_error and model_errc are aliases of error and errc", "[api][names]") {
  STATIC_REQUIRE(std::is_same_v<troupe::model_error, troupe::error>);
  STATIC_REQUIRE(std::is_same_v<troupe::model_errc, troupe::errc>);
  CHECK(troupe::model_errc::io_error == troupe::errc::io);
  CHECK(troupe::model_errc::bad_format == troupe::errc::bad_data);
  CHECK(troupe::model_errc::device_error == troupe::errc::device);
  const troupe::model_error old = troupe::fail(troupe::model_errc::io_error, "gone");
  troupe::expected<int> refused = old;
  REQUIRE_FALSE(refused);
  CHECK(refused.error().code == troupe::errc::io);
  CHECK(refused.error().message == "gone");
  // A load that fails speaks the new names.
  auto missing = troupe::load_model("/nonexistent/model.troupe");
  REQUIRE_FALSE(missing);
  CHECK(missing.error().code == troupe::errc::io);
}
