// Datasets built from arrays in memory.
#include <troupe/dataset.hpp>

#include <algorithm>
#include <cmath>

namespace troupe {

expected<dataset> make_dataset(std::vector<float> features, std::vector<int32_t> labels,
                               int width, int classes) {
  if (width <= 0 || features.size() != labels.size() * static_cast<size_t>(width))
    return fail(model_errc::invalid_argument,
                "make_dataset: " + std::to_string(features.size()) + " features for "
                  + std::to_string(labels.size()) + " labels of width "
                  + std::to_string(width) + " (expected labels x width)");
  for (size_t i = 0; i < features.size(); ++i)
    if (!std::isfinite(features[i]))
      return fail(model_errc::invalid_argument,
                  "make_dataset: sample " + std::to_string(i / width) + " holds a non-finite "
                    "feature (column " + std::to_string(i % width) + ")");
  const int32_t largest = labels.empty() ? 0 : *std::max_element(labels.begin(), labels.end());
  const int32_t smallest = labels.empty() ? 0 : *std::min_element(labels.begin(), labels.end());
  const int wanted = classes > 0 ? classes : largest + 1;
  if (smallest < 0 || largest >= wanted)
    return fail(model_errc::invalid_argument,
                "make_dataset: labels run from " + std::to_string(smallest) + " to "
                  + std::to_string(largest) + ", outside [0, " + std::to_string(wanted) + ")");
  dataset d;
  d.count = static_cast<int>(labels.size());
  d.features = width;
  d.classes = wanted;
  d.images = std::move(features);
  d.labels = std::move(labels);
  return d;
}

} // namespace troupe
