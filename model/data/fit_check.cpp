// Explaining why a data set does not fit a model.
#include "model/data/fit_check.hpp"

#include <algorithm>
#include <numeric>
#include <vector>

namespace troupe::detail {

namespace {

std::string set_name(const data_source& data, const std::string& role) {
  return "the " + role + " data" + (data.name().empty() ? "" : " (" + data.name() + ")");
}

// The first sample whose label lies outside [0, outputs), read in chunks.
std::string first_label_out(const data_source& data, int outputs) {
  constexpr size_t chunk = 1024;
  std::vector<uint32_t> indices(chunk);
  std::vector<float> features(chunk * static_cast<size_t>(std::max(data.features(), 1)));
  std::vector<int32_t> labels(chunk);
  for (size_t first = 0; first < data.size(); first += chunk) {
    const size_t count = std::min(chunk, data.size() - first);
    std::iota(indices.begin(), indices.begin() + static_cast<long>(count),
              static_cast<uint32_t>(first));
    data.gather(indices.data(), count, features.data(), labels.data(), nullptr);
    for (size_t i = 0; i < count; ++i)
      if (labels[i] < 0 || labels[i] >= outputs)
        return "label " + std::to_string(labels[i]) + " at sample " + std::to_string(first + i)
               + " (counting from 0)";
  }
  return "a label of " + std::to_string(data.classes() - 1);
}

} // namespace

std::string explain_misfit(const model_shape& model, const data_source& data,
                           const std::string& role) {
  const std::string where = set_name(data, role);
  const std::string what = "model " + model.text;
  if (data.regression() != model.squared_error)
    return where + " has " + (data.regression() ? "float targets" : "class labels") + ", but "
           + what + (model.squared_error ? " trains on float targets (--loss=mse)"
                                         : " classifies (float targets train with --loss=mse)");
  if (data.features() != model.inputs)
    return where + " has " + std::to_string(data.features()) + " features per sample, but "
           + what + " takes " + std::to_string(model.inputs) + " inputs";
  if (data.regression()) {
    if (data.target_width() == model.outputs)
      return "";
    return where + " has " + std::to_string(data.target_width()) + " targets per sample, but "
           + what + " has " + std::to_string(model.outputs) + " outputs";
  }
  if (data.classes() <= model.outputs)
    return "";
  return where + " has " + first_label_out(data, model.outputs) + ", but " + what + " has "
         + std::to_string(model.outputs) + " outputs: labels must lie in 0.."
         + std::to_string(model.outputs - 1);
}

} // namespace troupe::detail
