// The public names of the release before still compile, for one release,
// as aliases of the new ones (with a deprecation warning, silenced here).
#include <catch2/catch.hpp>

#include <type_traits>
#include <utility>
#include <vector>

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

TEST_CASE("a dataset's images and image(i) are its inputs and input(i)", "[api][names][data]") {
  auto made = troupe::make_dataset({1, 2, 3, 4, 5, 6}, {0, 1, 2}, 2);
  REQUIRE(made);
  troupe::dataset& data = *made;
  CHECK(&data.images == &data.inputs);
  CHECK(data.image(0) == data.input(0));
  CHECK(data.image(2) == data.inputs.data() + 4);
  CHECK(data.image(2)[1] == 6.0f);
  data.images[0] = 9.0f;
  CHECK(data.inputs[0] == 9.0f);
  data.inputs.push_back(7.0f);
  CHECK(data.images.size() == 7);
}

namespace {

troupe::dataset labelled_pair() {
  auto made = troupe::make_dataset({1, 2, 3, 4}, {0, 1}, 2, 5);
  REQUIRE(made);
  made->source = "pair";
  return std::move(*made);
}

// Every field of `copy` equals `original`'s, and its images name its own inputs.
void check_copied(const troupe::dataset& copy, const troupe::dataset& original) {
  CHECK(&copy.images == &copy.inputs);
  CHECK(copy.count == original.count);
  CHECK(copy.features == original.features);
  CHECK(copy.classes == original.classes);
  CHECK(copy.inputs == original.inputs);
  CHECK(copy.labels == original.labels);
  CHECK(copy.targets == original.targets);
  CHECK(copy.target_width == original.target_width);
  CHECK(copy.source == original.source);
}

} // namespace

TEST_CASE("a copied, assigned or moved dataset's images name its own inputs",
          "[api][names][data]") {
  const troupe::dataset original = labelled_pair();
  REQUIRE(&original.images == &original.inputs);
  troupe::dataset copy = original;
  check_copied(copy, original);
  copy.inputs[0] = 7.0f;
  CHECK(original.images[0] == 1.0f);
  CHECK(copy.images[0] == 7.0f);

  troupe::dataset assigned;
  assigned = original;
  check_copied(assigned, original);
  assigned.inputs[1] = 8.0f;
  CHECK(original.images == std::vector<float>{1, 2, 3, 4});
  CHECK(assigned.images == std::vector<float>{1, 8, 3, 4});

  troupe::dataset moved(std::move(copy));
  CHECK(&moved.images == &moved.inputs);
  CHECK(&copy.images == &copy.inputs);
  CHECK(moved.images == std::vector<float>{7, 2, 3, 4});
  CHECK(moved.source == "pair");
  moved.inputs[2] = 6.0f;
  CHECK(assigned.images[2] == 3.0f);

  troupe::dataset move_assigned;
  move_assigned = std::move(moved);
  CHECK(&move_assigned.images == &move_assigned.inputs);
  CHECK(move_assigned.images == std::vector<float>{7, 2, 6, 4});
  CHECK(move_assigned.labels == original.labels);
  CHECK(move_assigned.classes == 5);

  // A regression set's targets travel too.
  auto regression = troupe::make_regression_dataset({1, 2}, {0.5f, -0.5f}, 1, 1);
  REQUIRE(regression);
  troupe::dataset regression_copy;
  regression_copy = *regression;
  check_copied(regression_copy, *regression);
  check_copied(troupe::dataset(*regression), *regression);
}
