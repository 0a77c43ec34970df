// What the data source tests share: the IDX slice's pixels and labels, and
// .npy and CSV files written from them. Needs Catch2.
#pragma once

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

namespace troupe::testing {

using bytes = std::vector<uint8_t>;

inline void write_text(const std::string& path, const std::string& content) {
  std::ofstream out(path, std::ios::binary);
  out << content;
  REQUIRE(out);
}

// The raw bytes of `values` (the host is little-endian, as .npy '<' data is).
template <class T>
inline bytes raw_bytes(const std::vector<T>& values) {
  bytes out(values.size() * sizeof(T));
  std::memcpy(out.data(), values.data(), out.size());
  return out;
}

// The header dict numpy.save writes, e.g. {'descr': '|u1', 'fortran_order': False, ...}.
inline std::string npy_dict(const std::string& descr, const std::string& shape,
                     bool fortran = false) {
  return "{'descr': '" + descr + "', 'fortran_order': " + (fortran ? "True" : "False")
         + ", 'shape': " + shape + ", }";
}

// Writes an .npy file as numpy.save does: magic, version major.0, the header
// length, the dict padded with spaces and a '\n' to a multiple of 64 bytes.
inline void write_npy(const std::string& path, const std::string& dict, const bytes& data,
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
inline const idx_images& train_pixels() {
  static const idx_images images = [] {
    auto read = read_idx_images(test_data_dir() + "/train-images-idx3-ubyte.gz");
    REQUIRE(read);
    return *read;
  }();
  return images;
}

inline const std::vector<uint8_t>& train_labels() {
  static const std::vector<uint8_t> labels = [] {
    auto read = read_idx_labels(test_data_dir() + "/train-labels-idx1-ubyte.gz");
    REQUIRE(read);
    return *read;
  }();
  return labels;
}

// Writes the slice's training half as X (uint8, `shape`) and y (uint8, (2000,)).
inline std::string write_train_npy(const temp_dir& dir,
                                   const std::string& shape = "(2000, 784)") {
  write_npy(dir.file("X.npy"), npy_dict("|u1", shape), train_pixels().pixels);
  write_npy(dir.file("y.npy"), npy_dict("|u1", "(2000,)"), train_labels());
  return dir.file("X.npy") + "," + dir.file("y.npy");
}

inline bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// Checks the error code and that the message names the file and the problem.
template <class T>
inline void check_error(const expected<T>& result, errc code, const std::string& file,
                 const std::string& problem) {
  REQUIRE_FALSE(result);
  INFO("message: " << result.error().message);
  CHECK(result.error().code == code);
  CHECK(contains(result.error().message, file));
  CHECK(contains(result.error().message, problem));
}

inline void check_same(const dataset& loaded, const dataset& expected_set) {
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
inline std::string slice_csv(int rows, bool label_first, const std::string& label_name,
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
inline dataset slice_head(int rows) {
  dataset head = test_slice().train;
  head.count = rows;
  head.inputs.resize(static_cast<size_t>(rows) * head.features);
  head.labels.resize(static_cast<size_t>(rows));
  return head;
}

} // namespace troupe::testing
