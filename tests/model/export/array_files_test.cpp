// Tests for the files a prediction reads and writes: .npy tables written and
// read back bit for bit, and CSV features read without a label column.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "model/data/csv_reader.hpp"
#include "model/data/npy_reader.hpp"
#include "model/data/npy_writer.hpp"
#include "tests/model/export/test_files.hpp"

using namespace troupe;

namespace {

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

} // namespace

TEST_CASE("an encoded .npy table reads back with its shape and every bit", "[export][npy]") {
  temp_dir dir;
  const std::vector<float> values = {0.1f, -2.5f, 1e-40f, 3.4e38f, -0.0f, 7.0f};
  write_bytes(dir.file("t.npy"), encode_npy(values.data(), 3, 2));
  auto array = read_npy(dir.file("t.npy"));
  REQUIRE(array);
  CHECK(array->descr == "<f4");
  CHECK(array->shape == std::vector<uint64_t>{3, 2});
  auto table = read_npy_features(dir.file("t.npy"));
  REQUIRE(table);
  CHECK(table->count == 3);
  CHECK(table->features == 2);
  CHECK(same_bits(table->values, values));
}

TEST_CASE("an encoded .npy header aligns the data to 64 bytes, as numpy.save does",
          "[export][npy]") {
  for (size_t rows : {0, 1, 500, 123456789}) {
    const std::string bytes = encode_npy(nullptr, rows, 0);
    REQUIRE(bytes.size() % 64 == 0);
    CHECK(bytes.substr(0, 8) == std::string("\x93NUMPY\x01\x00", 8));
    CHECK(bytes.back() == '\n');
    CHECK(bytes.find("'shape': (" + std::to_string(rows) + ", 0)") != std::string::npos);
  }
}

TEST_CASE("CSV features drop a column named label and keep every other one",
          "[export][csv]") {
  temp_dir dir;
  write_bytes(dir.file("x.csv"), "a,label,b\n1,7,2\n3,not a number,4\n");
  auto table = read_csv_features(dir.file("x.csv"));
  REQUIRE(table);
  CHECK(table->count == 2);
  CHECK(table->features == 2);
  CHECK(table->values == std::vector<float>{1, 2, 3, 4});
  CHECK(table->labels.empty());
}

TEST_CASE("CSV features without a label column take every column", "[export][csv]") {
  temp_dir dir;
  write_bytes(dir.file("x.csv"), "p0,p1,p2\n0.5,1e-3,-2\n");
  auto table = read_csv_features(dir.file("x.csv"));
  REQUIRE(table);
  CHECK(table->features == 3);
  CHECK(table->values == std::vector<float>{0.5f, 1e-3f, -2.0f});
  SECTION("while read_csv still asks for the label column") {
    auto labelled = read_csv(dir.file("x.csv"));
    REQUIRE_FALSE(labelled);
    CHECK(labelled.error().message.find("no column named 'label'") != std::string::npos);
  }
}

TEST_CASE("CSV features still refuse a field that is not a finite number", "[export][csv]") {
  temp_dir dir;
  write_bytes(dir.file("x.csv"), "p0,p1\n1,2\n3,inf\n");
  auto table = read_csv_features(dir.file("x.csv"));
  REQUIRE_FALSE(table);
  CHECK(table.error().message.find("line 3") != std::string::npos);
}
