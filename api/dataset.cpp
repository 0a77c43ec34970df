// Datasets built from arrays in memory.
#include <troupe/dataset.hpp>

#include <algorithm>
#include <cmath>

namespace troupe {

namespace {

// Every one of `values` (rows of `width`) finite, or the first that is not.
status check_finite(const std::vector<float>& values, int width, const std::string& who,
                    const char* what) {
  for (size_t i = 0; i < values.size(); ++i)
    if (!std::isfinite(values[i]))
      return fail(errc::invalid_argument,
                  who + ": sample " + std::to_string(i / width) + " holds a non-finite " + what
                    + " (column " + std::to_string(i % width) + ")");
  return {};
}

} // namespace

expected<dataset> make_dataset(std::vector<float> features, std::vector<int32_t> labels,
                               int width, int classes) {
  if (width <= 0 || features.size() != labels.size() * static_cast<size_t>(width))
    return fail(errc::invalid_argument,
                "make_dataset: " + std::to_string(features.size()) + " features for "
                  + std::to_string(labels.size()) + " labels of width "
                  + std::to_string(width) + " (expected labels x width)");
  if (auto finite = check_finite(features, width, "make_dataset", "feature"); !finite)
    return finite.error();
  const int32_t largest = labels.empty() ? 0 : *std::max_element(labels.begin(), labels.end());
  const int32_t smallest = labels.empty() ? 0 : *std::min_element(labels.begin(), labels.end());
  const int wanted = classes > 0 ? classes : largest + 1;
  if (smallest < 0 || largest >= wanted)
    return fail(errc::invalid_argument,
                "make_dataset: labels run from " + std::to_string(smallest) + " to "
                  + std::to_string(largest) + ", outside [0, " + std::to_string(wanted) + ")");
  dataset d;
  d.count = static_cast<int>(labels.size());
  d.features = width;
  d.classes = wanted;
  d.inputs = std::move(features);
  d.labels = std::move(labels);
  return d;
}

expected<dataset> make_regression_dataset(std::vector<float> features,
                                          std::vector<float> targets, int width,
                                          int target_width) {
  const std::string who = "make_regression_dataset";
  if (width <= 0 || target_width <= 0 || features.size() % static_cast<size_t>(width) != 0
      || targets.size() != features.size() / width * static_cast<size_t>(target_width))
    return fail(errc::invalid_argument,
                who + ": " + std::to_string(features.size()) + " features of width "
                  + std::to_string(width) + " and " + std::to_string(targets.size())
                  + " targets of width " + std::to_string(target_width)
                  + " are not the same number of samples");
  if (auto finite = check_finite(features, width, who, "feature"); !finite)
    return finite.error();
  if (auto finite = check_finite(targets, target_width, who, "target"); !finite)
    return finite.error();
  dataset d;
  d.count = static_cast<int>(features.size() / width);
  d.features = width;
  d.classes = 0;
  d.inputs = std::move(features);
  d.targets = std::move(targets);
  d.target_width = target_width;
  return d;
}

} // namespace troupe
