#include <catch2/catch.hpp>

#include <cstddef>
#include <limits>
#include <vector>

#include "model/finite_check.hpp"

using namespace troupe;

TEST_CASE("a NaN or an infinity anywhere in a gradient is found, and finite extremes are not",
          "[finite]") {
  // 67 values: whole 8- and 16-float vectors and a tail, for every clone.
  const float bad_values[] = {std::numeric_limits<float>::quiet_NaN(),
                              std::numeric_limits<float>::signaling_NaN(),
                              std::numeric_limits<float>::infinity(),
                              -std::numeric_limits<float>::infinity()};
  const size_t count = 67;
  std::vector<float> values(count, 0.25f);
  values[1] = std::numeric_limits<float>::max();
  values[2] = -std::numeric_limits<float>::max();
  values[3] = std::numeric_limits<float>::denorm_min();
  values[4] = -0.0f;
  CHECK_FALSE(has_non_finite(values.data(), count));
  CHECK_FALSE(has_non_finite(values.data(), 0));
  for (float bad : bad_values)
    for (size_t position = 0; position < count; ++position) {
      auto tainted = values;
      tainted[position] = bad;
      INFO("value " << bad << " at " << position);
      CHECK(has_non_finite(tainted.data(), count));
      CHECK(has_non_finite(tainted.data() + position, count - position));
      if (position > 0) // before the bad value: clean
        CHECK_FALSE(has_non_finite(tainted.data(), position));
    }
}

TEST_CASE("the largest magnitude of some floats, and infinity when one is not finite",
          "[finite]") {
  std::vector<float> values(67, 0.25f);
  CHECK(largest_magnitude(values.data(), 0) == 0.0f);
  CHECK(largest_magnitude(values.data(), values.size()) == 0.25f);
  values[40] = -3.5f;
  values[66] = 3.0f;
  values[3] = std::numeric_limits<float>::denorm_min();
  CHECK(largest_magnitude(values.data(), values.size()) == 3.5f);
  CHECK(largest_magnitude(values.data(), 40) == 0.25f);
  values[12] = -std::numeric_limits<float>::max();
  CHECK(largest_magnitude(values.data(), values.size()) == std::numeric_limits<float>::max());
  for (float bad : {std::numeric_limits<float>::quiet_NaN(),
                    -std::numeric_limits<float>::quiet_NaN(),
                    -std::numeric_limits<float>::infinity()}) {
    auto tainted = values;
    tainted[65] = bad;
    CHECK(largest_magnitude(tainted.data(), tainted.size())
          == std::numeric_limits<float>::infinity());
    CHECK(largest_magnitude(tainted.data(), 65) == std::numeric_limits<float>::max());
  }
}
