// Loads (Fashion-)MNIST splits into datasets: pairs an image file with a label
// file, checks them against each other, and scales pixels to [0, 1].
#include "model/data/dataset.hpp"
#include "model/data/fit_check.hpp"

#include "model/check.hpp"
#include <algorithm>
#include <cstring>
#include <filesystem>

#include "model/data/idx_reader.hpp"

namespace troupe::detail {

namespace {

// Returns dir/NAME.gz if it exists, else dir/NAME, else an error listing both.
expected<std::string> find_file(const std::string& dir, const std::string& name) {
  std::filesystem::path base(dir);
  std::string gz = (base / (name + ".gz")).string();
  std::string plain = (base / name).string();
  std::error_code ec;
  if (std::filesystem::exists(gz, ec))
    return gz;
  if (std::filesystem::exists(plain, ec))
    return plain;
  return fail(errc::io, dir + ": missing " + name + ": looked for " + gz
                                      + " and " + plain);
}

} // namespace

expected<dataset> load_idx_split(const std::string& dir, data_split split) {
  const bool train = split == data_split::train;
  auto images_path = find_file(dir, train ? "train-images-idx3-ubyte" : "t10k-images-idx3-ubyte");
  if (!images_path)
    return images_path.error();
  auto labels_path = find_file(dir, train ? "train-labels-idx1-ubyte" : "t10k-labels-idx1-ubyte");
  if (!labels_path)
    return labels_path.error();
  return load_split(*images_path, *labels_path);
}

std::string default_data_dir() {
  return "/usr/share/datasets/fashion-mnist";
}

expected<dataset> load_split(const std::string& images_path,
                             const std::string& labels_path, int classes) {
  if (classes <= 0 || classes > 256)
    return fail(errc::invalid_argument,
                "load_split: classes must lie in [1, 256], got " + std::to_string(classes));
  auto images = read_idx_images(images_path);
  if (!images)
    return images.error();
  auto labels = read_idx_labels(labels_path);
  if (!labels)
    return labels.error();
  if (labels->size() != static_cast<size_t>(images->count))
    return fail(errc::bad_data,
                labels_path + ": count mismatch: it holds " + std::to_string(labels->size())
                  + " labels but " + images_path + " holds "
                  + std::to_string(images->count) + " images");
  for (size_t i = 0; i < labels->size(); ++i)
    if ((*labels)[i] >= classes)
      return fail(errc::bad_data,
                  labels_path + ": label " + std::to_string((*labels)[i]) + " of sample "
                    + std::to_string(i) + " is out of range [0, " + std::to_string(classes)
                    + ")");
  dataset result;
  result.count = images->count;
  result.features = images->rows * images->cols;
  result.classes = classes;
  result.inputs.resize(images->pixels.size());
  for (size_t i = 0; i < images->pixels.size(); ++i)
    result.inputs[i] = static_cast<float>(images->pixels[i]) / 255.0f;
  result.labels.assign(labels->begin(), labels->end());
  return result;
}

expected<dataset_pair> load_dataset(const std::string& dir) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec))
    return fail(errc::io, dir + ": data directory does not exist");
  auto train = load_idx_split(dir, data_split::train);
  if (!train)
    return train.error();
  auto test = load_idx_split(dir, data_split::test);
  if (!test)
    return test.error();
  if (train->features != test->features)
    return fail(errc::bad_data,
                dir + ": training images have " + std::to_string(train->features)
                  + " pixels but test images have " + std::to_string(test->features));
  return dataset_pair{std::move(*train), std::move(*test)};
}

void gather_targets(const dataset& data, const uint32_t* indices, size_t count,
                    float* targets_out) {
  const size_t width = static_cast<size_t>(data.target_width);
  for (size_t i = 0; i < count; ++i) {
    TROUPE_ASSERT(indices[i] < static_cast<size_t>(data.count));
    const float* row = data.targets.data() + indices[i] * width;
    std::copy(row, row + width, targets_out + i * width);
  }
}

void gather_features(const dataset& data, const uint32_t* indices, size_t count,
                     float* inputs_out) {
  const size_t features = static_cast<size_t>(data.features);
  for (size_t i = 0; i < count; ++i) {
    size_t row = indices[i];
    TROUPE_ASSERT(row < static_cast<size_t>(data.count));
    std::memcpy(inputs_out + i * features, data.input(row), features * sizeof(float));
  }
}

void gather_batch(const dataset& data, const uint32_t* indices, size_t count,
                  float* inputs_out, int32_t* labels_out) {
  gather_features(data, indices, count, inputs_out);
  for (size_t i = 0; i < count; ++i)
    labels_out[i] = data.regression() ? 0 : data.labels[indices[i]];
}

void prefetch_rows(const dataset& data, const uint32_t* indices, size_t count) {
  constexpr size_t line = 64;
  const size_t bytes = static_cast<size_t>(data.features) * sizeof(float);
  for (size_t i = 0; i < count; ++i) {
    if (indices[i] >= static_cast<size_t>(data.count))
      continue;
    const char* row = reinterpret_cast<const char*>(data.input(indices[i]));
    for (size_t offset = 0; offset < bytes; offset += line)
      __builtin_prefetch(row + offset);
  }
}

status check_model_fits(const model_spec& spec, const data_source& data,
                        const std::string& role) {
  const model_shape shape{to_string(spec), spec.inputs, spec.classes(),
                          spec.loss == loss_kind::squared_error};
  auto why = explain_misfit(shape, data, role);
  if (why.empty())
    return {};
  return fail(errc::invalid_argument, why);
}

} // namespace troupe::detail
