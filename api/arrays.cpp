// Data files for programs: a labelled dataset or features alone read from a
// source, and tables of results written as .npy or CSV.
#include <troupe/dataset.hpp>

#include <cctype>
#include <cstdio>

#include "model/data/csv_reader.hpp"
#include "model/data/data_source.hpp"
#include "model/data/npy_reader.hpp"
#include "model/data/npy_writer.hpp"
#include "model/atomic_write.hpp"

namespace troupe {

using namespace detail;

namespace {

// Tells whether `path` ends in `extension` (lower case), in any case.
bool has_extension(const std::string& path, const std::string& extension) {
  if (path.size() < extension.size())
    return false;
  const size_t start = path.size() - extension.size();
  for (size_t i = 0; i < extension.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(path[start + i])) != extension[i])
      return false;
  return true;
}

dataset unlabelled(int count, int features, std::vector<float> values,
                   const std::string& source) {
  dataset d;
  d.count = count;
  d.features = features;
  d.classes = 0;
  d.inputs = std::move(values);
  d.source = source;
  return d;
}

// %.9g gives every float's shortest-enough digits to read back the same bits.
std::string csv_text(const std::vector<float>& values, size_t rows, size_t cols) {
  std::string text;
  for (size_t j = 0; j < cols; ++j)
    text += (j > 0 ? ",p" : "p") + std::to_string(j);
  text += '\n';
  char field[32];
  for (size_t i = 0; i < rows; ++i) {
    for (size_t j = 0; j < cols; ++j) {
      std::snprintf(field, sizeof(field), "%.9g", static_cast<double>(values[i * cols + j]));
      if (j > 0)
        text += ',';
      text += field;
    }
    text += '\n';
  }
  return text;
}

} // namespace

expected<dataset> load_data(const std::string& source, data_split split) {
  return load_data_source(source, split);
}

expected<dataset> load_features(const std::string& source) {
  if (has_extension(source, ".npy")) {
    auto read = read_npy_features(source);
    if (!read)
      return read.error();
    return unlabelled(read->count, read->features, std::move(read->values), source);
  }
  if (has_extension(source, ".csv")) {
    auto read = read_csv_features(source);
    if (!read)
      return read.error();
    return unlabelled(read->count, read->features, std::move(read->values), source);
  }
  return fail(errc::invalid_argument,
              "features '" + source + "': give an .npy file (samples, features) or a "
              ".csv file with a header row");
}

status write_array(const std::string& path, const std::vector<float>& values, size_t rows,
                   size_t cols) {
  if (cols == 0 || values.size() % cols != 0 || values.size() / cols != rows)
    return fail(errc::invalid_argument,
                path + ": " + std::to_string(values.size()) + " values do not make "
                  + std::to_string(rows) + " rows of " + std::to_string(cols) + " columns");
  if (has_extension(path, ".npy"))
    return write_file_atomically(path, encode_npy(values.data(), rows, cols));
  if (has_extension(path, ".csv"))
    return write_file_atomically(path, csv_text(values, rows, cols));
  return fail(errc::invalid_argument,
              path + ": the file name must end in .npy or .csv, the formats written");
}

} // namespace troupe
