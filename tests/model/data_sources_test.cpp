// Tests for the data sources beyond IDX: .npy pairs and CSV files written from
// the IDX slice load the same floats and labels, bit for bit, and every broken
// file is an error naming the file and the problem.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "model/data/data_source.hpp"
#include "model/data/idx_reader.hpp"
#include "model/data/npy_reader.hpp"
#include "tests/temp_dir.hpp"
#include "tests/test_slice.hpp"

namespace fs = std::filesystem;
using namespace troupe;

namespace {

using bytes = std::vector<uint8_t>;

using testing::temp_dir;

void write_text(const std::string& path, const std::string& content) {
  std::ofstream out(path, std::ios::binary);
  out << content;
  REQUIRE(out);
}

// The raw bytes of `values` (the host is little-endian, as .npy '<' data is).
template <class T>
bytes raw_bytes(const std::vector<T>& values) {
  bytes out(values.size() * sizeof(T));
  std::memcpy(out.data(), values.data(), out.size());
  return out;
}

// The header dict numpy.save writes, e.g. {'descr': '|u1', 'fortran_order': False, ...}.
std::string npy_dict(const std::string& descr, const std::string& shape,
                     bool fortran = false) {
  return "{'descr': '" + descr + "', 'fortran_order': " + (fortran ? "True" : "False")
         + ", 'shape': " + shape + ", }";
}

// Writes an .npy file as numpy.save does: magic, version major.0, the header
// length, the dict padded with spaces and a '\n' to a multiple of 64 bytes.
void write_npy(const std::string& path, const std::string& dict, const bytes& data,
               int major = 1) {
  const size_t length_size = major == 1 ? 2 : 4;
  const size_t preamble = 8 + length_size;
  std::string header = dict;
  header.append(63 - (preamble + header.size()) % 64, ' ');
  header += '\n';
  bytes out = {0x93, 'N', 'U', 'M', 'P', 'Y', static_cast<uint8_t>(major), 0};
  for (size_t i = 0; i < length_size; ++i)
    out.push_back(static_cast<uint8_t>(header.size() >> (8 * i)));
  out.insert(out.end(), header.begin(), header.end());
  out.insert(out.end(), data.begin(), data.end());
  std::ofstream file(path, std::ios::binary);
  file.write(reinterpret_cast<const char*>(out.data()), static_cast<std::streamsize>(out.size()));
  REQUIRE(file);
}

// The uint8 pixels and labels of the slice's training half, as the IDX files hold them.
const idx_images& train_pixels() {
  static const idx_images images = [] {
    auto read = read_idx_images(test_data_dir() + "/train-images-idx3-ubyte.gz");
    REQUIRE(read);
    return *read;
  }();
  return images;
}

const std::vector<uint8_t>& train_labels() {
  static const std::vector<uint8_t> labels = [] {
    auto read = read_idx_labels(test_data_dir() + "/train-labels-idx1-ubyte.gz");
    REQUIRE(read);
    return *read;
  }();
  return labels;
}

// Writes the slice's training half as X (uint8, `shape`) and y (uint8, (2000,)).
std::string write_train_npy(const temp_dir& dir, const std::string& shape = "(2000, 784)") {
  write_npy(dir.file("X.npy"), npy_dict("|u1", shape), train_pixels().pixels);
  write_npy(dir.file("y.npy"), npy_dict("|u1", "(2000,)"), train_labels());
  return dir.file("X.npy") + "," + dir.file("y.npy");
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// Checks the error code and that the message names the file and the problem.
template <class T>
void check_error(const expected<T>& result, errc code, const std::string& file,
                 const std::string& problem) {
  REQUIRE_FALSE(result);
  INFO("message: " << result.error().message);
  CHECK(result.error().code == code);
  CHECK(contains(result.error().message, file));
  CHECK(contains(result.error().message, problem));
}

void check_same(const dataset& loaded, const dataset& expected_set) {
  REQUIRE(loaded.count == expected_set.count);
  REQUIRE(loaded.features == expected_set.features);
  CHECK(loaded.classes == expected_set.classes);
  REQUIRE(loaded.inputs.size() == expected_set.inputs.size());
  CHECK(std::memcmp(loaded.inputs.data(), expected_set.inputs.data(),
                    loaded.inputs.size() * sizeof(float))
        == 0);
  CHECK(loaded.labels == expected_set.labels);
}

// A CSV of the first `rows` training samples: "p0,...,label" or with the
// label column first, floats printed with %.9g.
std::string slice_csv(int rows, bool label_first, const std::string& label_name,
                      const std::string& line_end) {
  const dataset& train = test_slice().train;
  std::string text;
  if (label_first)
    text += label_name + ",";
  for (int j = 0; j < train.features; ++j)
    text += (j > 0 ? ",p" : "p") + std::to_string(j);
  text += (label_first ? "" : "," + label_name) + line_end;
  char number[32];
  for (int i = 0; i < rows; ++i) {
    if (label_first)
      text += std::to_string(train.labels[i]) + " , ";
    for (int j = 0; j < train.features; ++j) {
      std::snprintf(number, sizeof number, "%.9g", train.input(i)[j]);
      text += (j > 0 ? "," : "") + std::string(number);
    }
    text += (label_first ? "" : ", " + std::to_string(train.labels[i])) + line_end;
  }
  return text;
}

// The first `rows` samples of the slice's training half as a dataset.
dataset slice_head(int rows) {
  dataset head = test_slice().train;
  head.count = rows;
  head.inputs.resize(static_cast<size_t>(rows) * head.features);
  head.labels.resize(static_cast<size_t>(rows));
  return head;
}

} // namespace

// -- what loads -----------------------------------------------------------------

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

// -- what fails -----------------------------------------------------------------

TEST_CASE("a missing file or directory is an io_error naming it", "[data_sources]") {
  temp_dir dir;
  write_npy(dir.file("y.npy"), npy_dict("|u1", "(1,)"), bytes{0});
  check_error(load_data_source(dir.file("none.npy") + "," + dir.file("y.npy"),
                               data_split::train),
              errc::io, dir.file("none.npy"), "no such file");
  check_error(load_data_source(dir.file("none.csv"), data_split::train), errc::io,
              dir.file("none.csv"), "no such file");
  check_error(load_data_source(dir.file("nowhere"), data_split::train), errc::io,
              dir.file("nowhere"), "no such directory or file");
  check_error(load_data_source(dir.path.string(), data_split::test), errc::io,
              dir.path.string(), "missing t10k-images-idx3-ubyte");
}

// One broken features file X.npy, loaded with good labels.
struct broken_npy {
  const char* name;
  std::string dict;
  bytes data;
  const char* problem;
};

TEST_CASE("a broken features .npy is a bad_format error naming the file and the problem",
          "[data_sources]") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<broken_npy> cases = {
    {"complex dtype", npy_dict("<c8", "(2, 1)"), bytes(16), "unsupported dtype '<c8' (complex)"},
    {"string dtype", npy_dict("<U5", "(2, 1)"), bytes(40), "unsupported dtype '<U5'"},
    {"integer features", npy_dict("<i4", "(2, 1)"), bytes(8), "integer dtype '<i4'"},
    {"big-endian", npy_dict(">f4", "(2, 1)"), bytes(8), "big-endian dtype '>f4'"},
    {"Fortran order", npy_dict("<f4", "(2, 1)", true), bytes(8), "Fortran order"},
    {"truncated", npy_dict("|u1", "(2, 784)"), bytes(1000), "truncated: shape (2, 784)"},
    {"trailing bytes", npy_dict("|u1", "(2, 1)"), bytes(3), "trailing bytes"},
    {"1-D features", npy_dict("<f4", "(2,)"), bytes(8), "at least 2-D"},
    {"no samples", npy_dict("<f4", "(0, 4)"), bytes(), "no samples"},
    {"NaN", npy_dict("<f4", "(2, 2)"), raw_bytes(std::vector<float>{0, 1, 2, nan}),
     "feature 1 of sample 1 is not finite (nan)"},
    {"Inf", npy_dict("<f4", "(2, 2)"), raw_bytes(std::vector<float>{-inf, 1, 2, 3}),
     "feature 0 of sample 0 is not finite (-inf)"},
    {"too large for a float", npy_dict("<f8", "(2, 1)"), raw_bytes(std::vector<double>{1, 1e300}),
     "sample 1 is not finite as a float"},
    {"missing key", "{'descr': '<f4', 'shape': (2, 1), }", bytes(8),
     "the key 'fortran_order' is missing"},
    {"extra key", npy_dict("<f4", "(2, 1)") + " 'x': 1}", bytes(8), "malformed .npy header"},
    {"unknown key", "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 1), 'x': 1, }",
     bytes(8), "unexpected key 'x'"},
    {"duplicate key", "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2, 1)}",
     bytes(8), "'descr' appears twice"},
    {"shape not a tuple", "{'descr': '<f4', 'fortran_order': False, 'shape': [2, 1]}", bytes(8),
     "'shape' must be a tuple"},
  };
  for (const broken_npy& row : cases) {
    SECTION(row.name) {
      temp_dir dir;
      write_npy(dir.file("X.npy"), row.dict, row.data);
      write_npy(dir.file("y.npy"), npy_dict("|u1", "(2,)"), bytes{0, 1});
      check_error(load_data_source(dir.file("X.npy") + "," + dir.file("y.npy"),
                                   data_split::train),
                  errc::bad_data, dir.file("X.npy"), row.problem);
    }
  }
}

TEST_CASE("a file that is not .npy, or of another version, is a bad_format error",
          "[data_sources]") {
  temp_dir dir;
  write_text(dir.file("X.npy"), "x,label\n1,2\n");
  write_npy(dir.file("y.npy"), npy_dict("|u1", "(1,)"), bytes{0});
  check_error(load_data_source(dir.file("X.npy") + "," + dir.file("y.npy"), data_split::train),
              errc::bad_data, dir.file("X.npy"), "not an .npy file");
  write_npy(dir.file("X.npy"), npy_dict("|u1", "(1, 1)"), bytes{0}, 4);
  check_error(load_data_source(dir.file("X.npy") + "," + dir.file("y.npy"), data_split::train),
              errc::bad_data, dir.file("X.npy"), "version 4.0");
}

TEST_CASE("bad labels .npy files are bad_format errors naming the file and the problem",
          "[data_sources]") {
  const std::vector<broken_npy> cases = {
    {"2-D labels", npy_dict("|u1", "(2, 1)"), bytes{0, 1}, "labels must be 1-D"},
    {"non-finite float targets", npy_dict("<f4", "(2,)"), bytes{0, 0, 0, 0, 0, 0, 0xc0, 0x7f},
     "of sample 1 is not finite (nan)"},
    {"3-D float targets", npy_dict("<f4", "(2, 1, 1)"), bytes(8), "targets must be 1-D"},
    {"negative", npy_dict("|i1", "(2,)"), bytes{3, 0xff}, "label -1 of sample 1 is negative"},
    {"too large", npy_dict("<u4", "(2,)"), bytes{0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff},
     "label 4294967295 of sample 1 is too large"},
  };
  for (const broken_npy& row : cases) {
    SECTION(row.name) {
      temp_dir dir;
      write_npy(dir.file("X.npy"), npy_dict("|u1", "(2, 1)"), bytes{0, 1});
      write_npy(dir.file("y.npy"), row.dict, row.data);
      check_error(load_data_source(dir.file("X.npy") + "," + dir.file("y.npy"),
                                   data_split::train),
                  errc::bad_data, dir.file("y.npy"), row.problem);
    }
  }
}

TEST_CASE("features and labels of different sample counts name both files and counts",
          "[data_sources]") {
  temp_dir dir;
  write_npy(dir.file("X.npy"), npy_dict("|u1", "(3, 1)"), bytes{0, 1, 2});
  write_npy(dir.file("y.npy"), npy_dict("|u1", "(2,)"), bytes{0, 1});
  auto loaded = load_data_source(dir.file("X.npy") + "," + dir.file("y.npy"), data_split::train);
  check_error(loaded, errc::bad_data, dir.file("y.npy"), "holds 2 labels");
  CHECK(contains(loaded.error().message, dir.file("X.npy") + " holds 3 samples"));
}

// One broken CSV file and what its error must say.
struct broken_csv {
  const char* name;
  std::string content;
  const char* problem;
};

TEST_CASE("a broken CSV is a bad_format error naming the file, the line and the problem",
          "[data_sources]") {
  const std::vector<broken_csv> cases = {
    {"no label column", "a,b\n1,2\n",
     "no column named 'label' for the labels; the header names a, b"},
    {"too few fields", "a,label\n1,2\n3\n", "line 3 has 1 fields but the header has 2"},
    {"too many fields", "a,label\n1,2,4\n", "line 2 has 3 fields but the header has 2"},
    {"non-numeric", "a,b,label\n1,2,0\n1,x2,0\n",
     "line 3, column 2 ('b') of sample 1: 'x2' is not a number"},
    {"empty field", "a,b,label\n1,,0\n",
     "line 2, column 2 ('b') of sample 0: the field is empty"},
    {"NaN", "a,b,label\n1,2,0\n3,nan,1\n",
     "line 3, column 2 ('b') of sample 1: value 'nan' is not finite"},
    {"Inf", "a,label\n-inf,0\n", "of sample 0: value '-inf' is not finite"},
    {"huge", "a,label\n1e39,0\n", "'1e39' is out of float range"},
    {"negative label", "a,label\n1,0\n2,-3\n",
     "line 3, column 2 ('label') of sample 1: label -3 is negative"},
    {"float label", "a,label\n1,2.5\n", "label '2.5' is not an integer"},
    {"quote", "a,label\n\"1\",2\n", "line 2: quoted fields"},
    {"blank line", "a,label\n1,2\n\n3,4\n", "line 3 is blank"},
    {"empty file", "", "is empty"},
    {"only blank lines", " \r\n\n", "is empty"},
    {"no data rows", "a,label\r\n", "no data rows"},
    {"no features", "label\n1\n", "no feature columns"},
    {"unnamed column", ",a,label\n0,1,2\n", "column 1 of the header has no name"},
  };
  for (const broken_csv& row : cases) {
    SECTION(row.name) {
      temp_dir dir;
      write_text(dir.file("data.csv"), row.content);
      check_error(load_data_source(dir.file("data.csv"), data_split::train),
                  errc::bad_data, dir.file("data.csv"), row.problem);
    }
  }
}

TEST_CASE("a CSV source with a bad option, or a lone .npy file, is an invalid_argument",
          "[data_sources]") {
  temp_dir dir;
  write_text(dir.file("data.csv"), "a,label\n1,2\n");
  check_error(load_data_source(dir.file("data.csv") + ":labels=a", data_split::train),
              errc::invalid_argument, "data.csv:labels=a", "unknown CSV option 'labels=a'");
  check_error(load_data_source(dir.file("data.csv") + ":label=", data_split::train),
              errc::invalid_argument, "data.csv:label=", "names no column");
  check_error(load_data_source(dir.file("data.csv") + ":label=b", data_split::train),
              errc::bad_data, dir.file("data.csv"), "no column named 'b'");
  check_error(load_data_source(dir.file("X.npy"), data_split::train),
              errc::invalid_argument, dir.file("X.npy"), "X.npy,y.npy");
  check_error(load_data_source(dir.file("data.csv") + ",a,b", data_split::train),
              errc::invalid_argument, "data.csv,a,b", "exactly two files");
}

TEST_CASE("train and test sets of different feature widths name both sources",
          "[data_sources]") {
  temp_dir dir;
  write_text(dir.file("narrow.csv"), "a,label\n1,2\n");
  auto pair = load_data_pair(test_data_dir(), dir.file("narrow.csv"));
  check_error(pair, errc::bad_data, test_data_dir(), "has 784 features per sample");
  CHECK(contains(pair.error().message, "test data (" + dir.file("narrow.csv") + ") has 1"));
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
