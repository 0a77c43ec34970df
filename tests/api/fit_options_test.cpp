// fit_options holds each option once, typed: a typed setter and a text one
// replace each other, a copy does not share what is set on it later, and a
// value that does not read as its option's type is refused by the fit,
// naming the option.
#include "api_fixture.hpp"

using namespace api_fixture;

TEST_CASE("fit_options holds each option once, and the last value set is the one a fit runs with",
          "[api][fit_options]") {
  auto options = quiet_run().epochs(1).set("epochs", "3").set("batch-size", "64").batch_size(32);
  CHECK(options.names() == std::vector<std::string>{"epochs", "replicas", "seed", "progress",
                                                    "batch-size"});
  const auto copy = options;
  options.epochs(1);
  auto model = small_mlp();
  auto three = model.fit(slice().train, slice().test, copy);
  REQUIRE(three);
  CHECK(three->epochs.size() == 3);
  auto one = model.fit(slice().train, slice().test, options);
  REQUIRE(one);
  CHECK(one->epochs.size() == 1);
  // The same run from typed values and from text: the same bits.
  auto from_text = model.fit(slice().train, slice().test,
                             troupe::fit_options().set("epochs", "1").set("replicas", "2")
                               .set("seed", "7").set("batch-size", "32").quiet());
  REQUIRE(from_text);
  CHECK(from_text->params_fnv1a64 == one->params_fnv1a64);
}

TEST_CASE("an option a fit does not know, or a value that does not read as its type, is the "
          "fit's invalid_argument naming it",
          "[api][fit_options]") {
  auto model = small_mlp();
  const std::vector<std::pair<troupe::fit_options, std::string>> refused{
    {quiet_run().set("epochz", "2"), "--epochz=2: unknown option"},
    {quiet_run().set("batch-size", "big"), "--batch-size=big: --batch-size takes a whole number"},
    {quiet_run().set("pin-cores", "maybe"), "--pin-cores takes true or false"},
    {quiet_run().validation_split(2.0), "--validation-split"},
  };
  for (const auto& [options, words] : refused) {
    auto result = model.fit(slice().train, slice().test, options);
    REQUIRE_FALSE(result);
    CHECK(result.error().code == troupe::errc::invalid_argument);
    CHECK_THAT(result.error().message, Catch::Contains(words));
  }
}
