// Tests for the data sources beyond IDX: .npy pairs and CSV files written from
// the IDX slice load the same floats and labels, bit for bit.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "model/data/data_source.hpp"
#include "model/data/idx_reader.hpp"
#include "model/data/npy_reader.hpp"
#include "tests/model/data_source_files.hpp"
#include "tests/temp_dir.hpp"
#include "tests/test_slice.hpp"

using namespace troupe;
using namespace troupe::testing;

TEST_CASE("an .npy pair written from the IDX bytes loads the IDX loader's floats, bit for bit",
          "[data_sources]") {
  temp_dir dir;
  for (const char* shape : {"(2000, 784)", "(2000, 28, 28)"}) {
    INFO("shape " << shape);
    auto loaded = load_data_source(write_train_npy(dir, shape), data_split::train);
    INFO((loaded ? "" : loaded.error().message));
    REQUIRE(loaded);
    check_same(*loaded, test_slice().train);
  }
}

TEST_CASE("float32 and float64 features and every integer label dtype load the same set",
          "[data_sources]") {
  temp_dir dir;
  const dataset& train = test_slice().train;
  const std::vector<double> wide(train.inputs.begin(), train.inputs.end());
  write_npy(dir.file("f4.npy"), npy_dict("<f4", "(2000, 784)"), raw_bytes(train.inputs));
  write_npy(dir.file("f8.npy"), npy_dict("<f8", "(2000, 784)"), raw_bytes(wide), 2);
  const std::vector<std::string> descrs = {"|i1", "<i2", "<i4", "<i8",
                                           "|u1", "<u2", "<u4", "<u8"};
  for (size_t k = 0; k < descrs.size(); ++k) {
    const int size = descrs[k][2] - '0';
    bytes data;
    for (int32_t label : train.labels)
      for (int i = 0; i < size; ++i)
        data.push_back(static_cast<uint8_t>(i == 0 ? label : 0));
    const std::string labels = dir.file("y" + std::to_string(k) + ".npy");
    write_npy(labels, npy_dict(descrs[k], "(2000,)"), data, k % 2 == 0 ? 1 : 3);
    for (const char* features : {"f4.npy", "f8.npy"}) {
      INFO(features << " with labels " << descrs[k]);
      auto loaded = load_data_source(dir.file(features) + "," + labels, data_split::test);
      INFO((loaded ? "" : loaded.error().message));
      REQUIRE(loaded);
      check_same(*loaded, train);
    }
  }
}

TEST_CASE("a CSV written with %.9g loads the IDX loader's floats, bit for bit",
          "[data_sources]") {
  temp_dir dir;
  write_text(dir.file("last.csv"), slice_csv(25, false, "label", "\n"));
  write_text(dir.file("first.csv"), slice_csv(25, true, "class", "\r\n"));
  auto last = load_data_source(dir.file("last.csv"), data_split::train);
  auto first = load_data_source(dir.file("first.csv") + ":label=class", data_split::train);
  INFO((last ? "" : last.error().message));
  INFO((first ? "" : first.error().message));
  REQUIRE(last);
  REQUIRE(first);
  dataset head = slice_head(25);
  head.classes = 1 + *std::max_element(head.labels.begin(), head.labels.end());
  check_same(*last, head);
  check_same(*first, head);
}

TEST_CASE("a CSV takes spaces around fields, no trailing newline, a byte order mark and "
          "values too small for a float", "[data_sources]") {
  temp_dir dir;
  write_text(dir.file("small.csv"), "\xEF\xBB\xBF a , label ,b\r\n 0.5 ,3, -2\n+1e-3,0,1e-50");
  auto loaded = load_data_source(dir.file("small.csv"), data_split::train);
  INFO((loaded ? "" : loaded.error().message));
  REQUIRE(loaded);
  CHECK(loaded->count == 2);
  CHECK(loaded->features == 2);
  CHECK(loaded->classes == 4);
  CHECK(loaded->inputs == std::vector<float>{0.5f, -2.0f, 1e-3f, 0.0f});
  CHECK(loaded->labels == std::vector<int32_t>{3, 0});
}

TEST_CASE("a directory source loads the IDX split that `split` names", "[data_sources]") {
  auto train = load_data_source(test_data_dir(), data_split::train);
  auto test = load_data_source(test_data_dir(), data_split::test);
  REQUIRE(train);
  REQUIRE(test);
  check_same(*train, test_slice().train);
  check_same(*test, test_slice().test);
}

TEST_CASE("load_data_pair leaves each set its own class count, IDX keeping 10",
          "[data_sources]") {
  temp_dir dir;
  write_text(dir.file("five.csv"), "x,label\n0.5,4\n0.25,0\n");
  write_text(dir.file("eight.csv"), "x,label\n1,7\n");
  auto csvs = load_data_pair(dir.file("five.csv"), dir.file("eight.csv"));
  REQUIRE(csvs);
  CHECK(csvs->train.classes == 5);
  CHECK(csvs->test.classes == 8);

  // Labels 0..4 only, against the IDX test split.
  bytes few = train_labels();
  for (uint8_t& label : few)
    label %= 5;
  write_npy(dir.file("X.npy"), npy_dict("|u1", "(2000, 784)"), train_pixels().pixels);
  write_npy(dir.file("few.npy"), npy_dict("|u1", "(2000,)"), few);
  auto mixed = load_data_pair(dir.file("X.npy") + "," + dir.file("few.npy"), test_data_dir());
  INFO((mixed ? "" : mixed.error().message));
  REQUIRE(mixed);
  CHECK(mixed->train.classes == 5);
  CHECK(mixed->test.classes == 10);
  check_same(mixed->test, test_slice().test);
}

TEST_CASE("a float y.npy and a CSV target column load as regression targets",
          "[data_sources]") {
  temp_dir dir;
  write_npy(dir.file("X.npy"), npy_dict("|u1", "(2, 1)"), bytes{0, 255});
  const float values[2] = {0.5f, -2.25f};
  bytes raw(sizeof values);
  std::memcpy(raw.data(), values, sizeof values);
  write_npy(dir.file("y.npy"), npy_dict("<f4", "(2,)"), raw);
  auto npy = load_data_source(dir.file("X.npy") + "," + dir.file("y.npy"), data_split::train);
  REQUIRE(npy);
  CHECK(npy->regression());
  CHECK(npy->target_width == 1);
  CHECK(npy->targets == std::vector<float>{0.5f, -2.25f});
  CHECK(npy->labels.empty());
  write_text(dir.file("d.csv"), "x,y\n0,0.5\n1,-2.25\n");
  auto csv = load_data_source(dir.file("d.csv") + ":target=y", data_split::train);
  REQUIRE(csv);
  CHECK(csv->targets == npy->targets);
  CHECK(csv->inputs == std::vector<float>{0.0f, 1.0f});
  write_text(dir.file("labels.csv"), "x,y\n0,1\n1,0\n");
  auto mixed = load_data_pair(dir.file("X.npy") + "," + dir.file("y.npy"),
                              dir.file("labels.csv") + ":label=y");
  REQUIRE_FALSE(mixed);
  CHECK(contains(mixed.error().message, "float targets but the test data"));
}
