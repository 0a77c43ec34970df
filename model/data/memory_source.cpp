// A dataset held in memory served as a data_source, and the copy of a
// source's rows back into memory.
#include <troupe/data_source.hpp>

#include <algorithm>
#include <numeric>

#include "model/check.hpp"
#include "model/data/dataset.hpp"

namespace troupe::detail {

namespace {

// The classes `data` holds: its own count, or for a classification set
// left with 0 the largest label + 1; 0 for regression.
int classes_of(const dataset& data) {
  if (data.regression())
    return 0;
  if (data.classes > 0 || data.labels.empty())
    return data.classes;
  return std::max(0, *std::max_element(data.labels.begin(), data.labels.end()) + 1);
}

class memory_source final : public data_source {
public:
  explicit memory_source(std::shared_ptr<const dataset> data)
    : data_(std::move(data)), classes_(classes_of(*data_)) {}

  size_t size() const override { return static_cast<size_t>(data_->count); }
  int features() const override { return data_->features; }
  int classes() const override { return classes_; }
  int target_width() const override { return data_->target_width; }
  std::string name() const override { return data_->source; }

  void gather(const uint32_t* indices, size_t count, float* features_out,
              int32_t* labels_out, float* targets_out) const override {
    if (labels_out != nullptr)
      gather_batch(*data_, indices, count, features_out, labels_out);
    else
      gather_features(*data_, indices, count, features_out);
    if (targets_out != nullptr && data_->regression())
      gather_targets(*data_, indices, count, targets_out);
  }

  void prefetch(const uint32_t* indices, size_t count) const override {
    prefetch_rows(*data_, indices, count);
  }

private:
  std::shared_ptr<const dataset> data_;
  int classes_;
};

} // namespace

std::shared_ptr<const data_source> borrowed_source(const dataset& data) {
  return in_memory(std::shared_ptr<const dataset>(std::shared_ptr<const dataset>(), &data));
}

} // namespace troupe::detail

namespace troupe {

using namespace detail;

std::shared_ptr<const data_source> in_memory(std::shared_ptr<const dataset> data) {
  return std::make_shared<const memory_source>(std::move(data));
}

std::shared_ptr<const data_source> in_memory(dataset data) {
  return in_memory(std::make_shared<const dataset>(std::move(data)));
}

dataset data_source::rows(size_t first, size_t count) const {
  TROUPE_ASSERT(first + count <= size());
  dataset out;
  out.count = static_cast<int>(count);
  out.features = features();
  out.classes = classes();
  out.target_width = target_width();
  out.source = name();
  std::vector<uint32_t> indices(count);
  std::iota(indices.begin(), indices.end(), static_cast<uint32_t>(first));
  out.inputs.resize(count * static_cast<size_t>(out.features));
  out.targets.resize(count * static_cast<size_t>(out.target_width));
  if (!regression())
    out.labels.resize(count);
  gather(indices.data(), count, out.inputs.data(), regression() ? nullptr : out.labels.data(),
         regression() ? out.targets.data() : nullptr);
  return out;
}

} // namespace troupe
