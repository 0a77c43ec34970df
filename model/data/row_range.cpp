// Consecutive rows of a source, and the validation split.
#include "model/data/row_range.hpp"

#include <cmath>
#include <vector>

#include "model/check.hpp"

namespace troupe::detail {

namespace {

class row_range_source final : public data_source {
public:
  row_range_source(std::shared_ptr<const data_source> whole, size_t first, size_t count)
    : whole_(std::move(whole)), first_(static_cast<uint32_t>(first)), count_(count) {}

  size_t size() const override { return count_; }
  int features() const override { return whole_->features(); }
  int classes() const override { return whole_->classes(); }
  int target_width() const override { return whole_->target_width(); }
  std::string name() const override { return whole_->name(); }

  void gather(const uint32_t* indices, size_t count, float* features_out, int32_t* labels_out,
              float* targets_out) const override {
    if (first_ == 0) {
      whole_->gather(indices, count, features_out, labels_out, targets_out);
      return;
    }
    const auto shifted = shift(indices, count);
    whole_->gather(shifted.data(), count, features_out, labels_out, targets_out);
  }

  void prefetch(const uint32_t* indices, size_t count) const override {
    const auto shifted = shift(indices, count);
    whole_->prefetch(shifted.data(), count);
  }

private:
  std::vector<uint32_t> shift(const uint32_t* indices, size_t count) const {
    std::vector<uint32_t> shifted(indices, indices + count);
    if (first_ != 0)
      for (auto& index : shifted)
        index += first_;
    return shifted;
  }

  std::shared_ptr<const data_source> whole_;
  uint32_t first_;
  size_t count_;
};

} // namespace

std::shared_ptr<const data_source> row_range(std::shared_ptr<const data_source> whole,
                                             size_t first, size_t count) {
  TROUPE_ASSERT(whole && first + count <= whole->size());
  return std::make_shared<row_range_source>(std::move(whole), first, count);
}

size_t training_rows(size_t samples, double fraction) {
  return static_cast<size_t>(std::floor(static_cast<double>(samples) * (1.0 - fraction)));
}

source_pair split_for_validation(const source_pair& data, double fraction) {
  if (fraction <= 0.0)
    return data;
  const size_t samples = data.train->size();
  const size_t rows = training_rows(samples, fraction);
  return source_pair{row_range(data.train, 0, rows), row_range(data.train, rows, samples - rows)};
}

} // namespace troupe::detail
