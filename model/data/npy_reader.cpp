// Reads .npy files: checks the magic and version, parses the header's Python
// dict strictly, checks the dtype and the data size against the shape, then
// converts the elements to features or labels.
#include "model/data/npy_reader.hpp"

#include <climits>
#include <cmath>
#include <cstring>

#include "model/data/file_bytes.hpp"
#include "model/data/npy_header.hpp"

namespace troupe::detail {

namespace {

constexpr char npy_magic[] = "\x93NUMPY";
constexpr size_t npy_magic_size = 6;

error format_error(const std::string& path, const std::string& what) {
  return fail(errc::bad_data, path + ": " + what);
}

uint64_t load_le(const uint8_t* p, int size) {
  uint64_t v = 0;
  for (int i = size - 1; i >= 0; --i)
    v = (v << 8) | p[i];
  return v;
}

// Names a dtype numpy may write that this reader does not take.
std::string dtype_name(char kind, int size) {
  switch (kind) {
    case 'c': return "complex";
    case 'U': case 'S': case 'a': return "a string dtype";
    case 'O': return "Python objects";
    case 'b': case '?': return "bool";
    case 'M': case 'm': return "datetime";
    case 'V': return "raw bytes (void)";
    case 'f': return "float" + std::to_string(size * 8);
    case 'i': case 'u': return "an integer of " + std::to_string(size) + " bytes";
    default: return "unknown";
  }
}

// Splits a descr such as "<f4" into kind and size, and rejects what this
// reader does not read: other kinds, other sizes, big-endian data.
status parse_dtype(const std::string& path, const std::string& descr, npy_array& array) {
  const std::string supported =
    ": features must be float32 ('<f4'), float64 ('<f8') or uint8 ('|u1'), labels an "
    "integer dtype (i1, i2, i4, i8, u1, u2, u4, u8)";
  size_t i = 0;
  char order = 0;
  if (!descr.empty() && std::strchr("<>|=", descr[0]) != nullptr)
    order = descr[i++];
  const char kind = i < descr.size() ? descr[i++] : 0;
  const std::string digits = descr.substr(i);
  int size = 0;
  if (!digits.empty() && digits.size() <= 2
      && digits.find_first_not_of("0123456789") == std::string::npos)
    size = std::stoi(digits);
  const bool known_size = kind == 'f' ? size == 4 || size == 8
                                      : size == 1 || size == 2 || size == 4 || size == 8;
  if ((kind != 'f' && kind != 'i' && kind != 'u') || !known_size)
    return format_error(path, "unsupported dtype '" + descr + "' (" + dtype_name(kind, size)
                                + ")" + supported);
  if (size > 1 && order == '>')
    return format_error(path, "big-endian dtype '" + descr
                                + "' is not supported: save it little-endian, e.g. "
                                  "np.save(path, a.astype('<"
                                + std::string(1, kind) + digits + "'))");
  if (size > 1 && order != '<')
    return format_error(path, "dtype '" + descr + "' does not say little-endian ('<"
                                + std::string(1, kind) + digits + "')");
  array.kind = kind;
  array.item_size = size;
  return {};
}

// Checks the magic and version; returns where the header text starts and its length.
expected<std::pair<size_t, size_t>> locate_header(const std::string& path,
                                                  const std::vector<uint8_t>& bytes) {
  if (bytes.size() < npy_magic_size + 2
      || std::memcmp(bytes.data(), npy_magic, npy_magic_size) != 0)
    return format_error(path, "not an .npy file: it does not start with the magic "
                              "\"\\x93NUMPY\"");
  const int major = bytes[6];
  const int minor = bytes[7];
  if (major < 1 || major > 3 || minor != 0)
    return format_error(path, "unsupported .npy format version " + std::to_string(major) + "."
                                + std::to_string(minor) + " (this reader knows 1.0, 2.0, 3.0)");
  const size_t length_size = major == 1 ? 2 : 4;
  const size_t start = npy_magic_size + 2 + length_size;
  if (bytes.size() < start)
    return format_error(path, "truncated: the file ends inside the header length");
  const size_t length = load_le(bytes.data() + npy_magic_size + 2, static_cast<int>(length_size));
  if (bytes.size() - start < length)
    return format_error(path, "truncated: the header length says " + std::to_string(length)
                                + " bytes but only " + std::to_string(bytes.size() - start)
                                + " follow");
  return std::make_pair(start, length);
}

// Checks that the data after the header holds exactly the shape's elements.
status check_data_size(const std::string& path, const npy_array& array, uint64_t payload) {
  uint64_t needed = static_cast<uint64_t>(array.item_size);
  for (uint64_t dim : array.shape) {
    if (dim != 0 && needed > UINT64_MAX / dim)
      return format_error(path, "shape " + shape_to_string(array.shape) + " is too large");
    needed *= dim;
  }
  const std::string what = "shape " + shape_to_string(array.shape) + " of '" + array.descr
                           + "' needs " + std::to_string(needed) + " bytes of data but ";
  if (payload < needed)
    return format_error(path, "truncated: " + what + "only " + std::to_string(payload)
                                + " follow the header");
  if (payload > needed)
    return format_error(path, what + std::to_string(payload)
                                + " follow the header (trailing bytes: several arrays "
                                  "saved into one file?)");
  return {};
}

// Checks the dimension of the samples and returns it as an int.
expected<int> sample_count(const std::string& path, const npy_array& array) {
  if (array.shape[0] == 0)
    return format_error(path, "holds no samples: shape " + shape_to_string(array.shape));
  if (array.shape[0] > INT_MAX)
    return format_error(path, std::to_string(array.shape[0])
                                + " samples are too many: over INT_MAX");
  return static_cast<int>(array.shape[0]);
}

// Reads element i as a float; uint8 as IDX pixels are scaled, float64 rounded.
float element_as_float(const npy_array& array, size_t i, double& wide) {
  const uint8_t* data = array.data.data();
  if (array.kind == 'u')
    return wide = static_cast<float>(data[i]) / 255.0f;
  if (array.item_size == 4) {
    const uint32_t bits = static_cast<uint32_t>(load_le(data + 4 * i, 4));
    float value = 0;
    std::memcpy(&value, &bits, sizeof value);
    return wide = value;
  }
  const uint64_t bits = load_le(data + 8 * i, 8);
  std::memcpy(&wide, &bits, sizeof wide);
  return static_cast<float>(wide);
}

// Converts the elements to floats and checks that each is finite.
status convert_features(const std::string& path, const npy_array& array,
                        npy_features& out) {
  const size_t features = static_cast<size_t>(out.features);
  for (size_t sample = 0; sample < static_cast<size_t>(out.count); ++sample)
    for (size_t feature = 0; feature < features; ++feature) {
      const size_t i = sample * features + feature;
      double wide = 0;
      const float value = element_as_float(array, i, wide);
      if (!std::isfinite(value)) {
        const std::string where = "feature " + std::to_string(feature) + " of sample "
                                  + std::to_string(sample) + " is not finite";
        if (std::isfinite(wide))
          return format_error(path, where + " as a float: " + std::to_string(wide)
                                      + " is out of float range");
        return format_error(path, where + " ("
                                    + (std::isnan(wide) ? "nan" : wide > 0 ? "inf" : "-inf")
                                    + ")");
      }
      out.values[i] = value;
    }
  return {};
}

} // namespace

std::string shape_to_string(const std::vector<uint64_t>& shape) {
  std::string text = "(";
  for (size_t i = 0; i < shape.size(); ++i)
    text += (i > 0 ? ", " : "") + std::to_string(shape[i]);
  return text + (shape.size() == 1 ? ",)" : ")");
}

expected<npy_array> read_npy(const std::string& path) {
  auto bytes = read_file_bytes(path);
  if (!bytes)
    return bytes.error();
  auto where = locate_header(path, *bytes);
  if (!where)
    return where.error();
  const auto [start, length] = *where;
  const std::string text(reinterpret_cast<const char*>(bytes->data()) + start, length);
  auto header = parse_npy_header(path, text);
  if (!header)
    return header.error();
  if (header->fortran_order)
    return format_error(path, "the array is in Fortran order (fortran_order: True); save a "
                              "C-order copy, e.g. np.save(path, np.ascontiguousarray(a))");
  npy_array array;
  array.descr = header->descr;
  array.shape = header->shape;
  auto dtype = parse_dtype(path, array.descr, array);
  if (!dtype)
    return dtype.error();
  auto sized = check_data_size(path, array, bytes->size() - start - length);
  if (!sized)
    return sized.error();
  bytes->erase(bytes->begin(), bytes->begin() + static_cast<std::ptrdiff_t>(start + length));
  array.data = std::move(*bytes);
  return array;
}

expected<npy_features> read_npy_features(const std::string& path) {
  auto array = read_npy(path);
  if (!array)
    return array.error();
  if (array->kind == 'i' || (array->kind == 'u' && array->item_size != 1))
    return format_error(path, "features have the integer dtype '" + array->descr
                                + "'; they must be float32 ('<f4'), float64 ('<f8') or "
                                  "uint8 ('|u1')");
  if (array->shape.size() < 2)
    return format_error(path, "features must be at least 2-D (samples, features), got shape "
                                + shape_to_string(array->shape)
                                + "; one feature per sample is X.reshape(-1, 1)");
  auto count = sample_count(path, *array);
  if (!count)
    return count.error();
  uint64_t features = 1;
  for (size_t i = 1; i < array->shape.size(); ++i)
    features *= array->shape[i]; // cannot overflow: check_data_size bounded the product
  if (features == 0)
    return format_error(path, "has no features per sample: shape "
                                + shape_to_string(array->shape));
  if (features > INT_MAX)
    return format_error(path, std::to_string(features)
                                + " features per sample are too many: over INT_MAX");
  npy_features result;
  result.count = *count;
  result.features = static_cast<int>(features);
  result.values.resize(static_cast<size_t>(result.count) * features);
  auto converted = convert_features(path, *array, result);
  if (!converted)
    return converted.error();
  return result;
}

expected<npy_features> npy_targets(const std::string& path, const npy_array& array) {
  if (array.kind != 'f')
    return format_error(path, "targets have the dtype '" + array.descr
                                + "'; they must be float32 ('<f4') or float64 ('<f8')");
  if (array.shape.empty() || array.shape.size() > 2)
    return format_error(path, "targets must be 1-D (samples,) or 2-D (samples, outputs), "
                              "got shape " + shape_to_string(array.shape));
  auto count = sample_count(path, array);
  if (!count)
    return count.error();
  const uint64_t width = array.shape.size() == 2 ? array.shape[1] : 1;
  if (width == 0 || width > INT_MAX)
    return format_error(path, "has " + std::to_string(width) + " targets per sample");
  npy_features result;
  result.count = *count;
  result.features = static_cast<int>(width);
  result.values.resize(static_cast<size_t>(result.count) * width);
  auto converted = convert_features(path, array, result);
  if (!converted)
    return converted.error();
  return result;
}

expected<std::vector<int32_t>> read_npy_labels(const std::string& path) {
  auto array = read_npy(path);
  if (!array)
    return array.error();
  if (array->kind == 'f')
    return format_error(path, "labels have the float dtype '" + array->descr
                                + "'; they must be integers, e.g. y.astype(np.int64)");
  if (array->shape.size() != 1)
    return format_error(path, "labels must be 1-D (samples), got shape "
                                + shape_to_string(array->shape) + "; flatten with y.ravel()");
  auto count = sample_count(path, *array);
  if (!count)
    return count.error();
  const int size = array->item_size;
  std::vector<int32_t> labels(static_cast<size_t>(*count));
  for (size_t i = 0; i < labels.size(); ++i) {
    const uint64_t raw = load_le(array->data.data() + i * static_cast<size_t>(size), size);
    const int shift = 64 - 8 * size;
    // Sign-extends a signed element of `size` bytes to 64 bits.
    const int64_t value = array->kind == 'i'
                            ? static_cast<int64_t>(raw << shift) >> shift
                            : static_cast<int64_t>(raw);
    if (array->kind == 'i' && value < 0)
      return format_error(path, "label " + std::to_string(value) + " of sample "
                                  + std::to_string(i) + " is negative");
    if ((array->kind == 'u' && raw >= INT32_MAX) || value >= INT32_MAX)
      return format_error(path, "label " + std::to_string(raw) + " of sample "
                                  + std::to_string(i)
                                  + " is too large: labels must be below 2147483647");
    labels[i] = static_cast<int32_t>(value);
  }
  return labels;
}

} // namespace troupe::detail
