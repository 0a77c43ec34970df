// Reads NumPy .npy files as numpy.save writes them (format 1.0, 2.0 or 3.0,
// C order, little-endian), and turns them into features or labels.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/expected.hpp"

namespace troupe::detail {

/// Holds one C-order array of an .npy file: its element type, its shape and
/// its elements as the file stores them.
struct npy_array {
  std::string descr;           // as the header spells it, e.g. "<f4"
  char kind = 0;               // 'f' float, 'i' signed or 'u' unsigned integer
  int item_size = 0;           // bytes per element: 1, 2, 4 or 8
  std::vector<uint64_t> shape; // empty for a scalar
  std::vector<uint8_t> data;   // product(shape) * item_size bytes, little-endian
};

/// Holds a feature matrix read from an .npy file.
struct npy_features {
  int count = 0;
  int features = 0;
  std::vector<float> values; // (count, features)
};

/// Reads an .npy file holding a C-order array of little-endian floats (f4, f8)
/// or integers (i1..i8, u1..u8). Every problem is an error naming the file:
/// missing, not .npy, unknown version, malformed header, unsupported dtype,
/// big-endian, Fortran order, truncated, trailing bytes.
expected<npy_array> read_npy(const std::string& path);

/// Reads features shaped (samples, features), or (samples, a, b, ...) with the
/// trailing dimensions flattened, stored as float32, float64 (rounded to
/// float) or uint8 (scaled to [0, 1] as IDX pixels are). Every value must be
/// finite; the error names the first sample that is not.
expected<npy_features> read_npy_features(const std::string& path);

/// Converts a float array `path` held, (samples,) or (samples, outputs),
/// into regression targets (finite floats; `features` is the outputs).
expected<npy_features> npy_targets(const std::string& path, const npy_array& array);

/// Reads labels shaped (samples) of any integer dtype; each must lie in
/// [0, INT32_MAX), so that max label + 1 classes fit an int.
expected<std::vector<int32_t>> read_npy_labels(const std::string& path);

/// Writes a shape as Python prints a tuple: "(2000, 784)", "(5,)", "()".
std::string shape_to_string(const std::vector<uint64_t>& shape);

} // namespace troupe::detail
