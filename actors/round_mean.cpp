// The round reduction shared by sync and delayed.
#include "actors/round_mean.hpp"

#include <utility>
#include <vector>

namespace troupe {

void apply_round_mean(const std::map<uint32_t, gradient_push>& pushes, store_port& store) {
  uint64_t total = 0;
  std::vector<std::pair<float, const float*>> terms; // (weight, gradient) in replica order
  for (const auto& entry : pushes)
    total += entry.second.batch_size;
  for (const auto& entry : pushes)
    if (entry.second.batch_size > 0)
      terms.emplace_back(static_cast<float>(entry.second.batch_size) / static_cast<float>(total),
                         entry.second.gradient.data());
  if (terms.empty())
    return;
  if (terms.size() == 1) {
    store.apply_step(terms.front().second);
    return;
  }
  // Each block of the sum is made just before the optimizer steps it.
  store.apply_step_blocks([&terms](size_t offset, size_t count, float* __restrict sum) {
    const float* __restrict g = terms.front().second + offset;
    const float first_weight = terms.front().first;
    for (size_t i = 0; i < count; ++i)
      sum[i] = first_weight * g[i];
    for (size_t t = 1; t < terms.size(); ++t) {
      const float weight = terms[t].first;
      const float* __restrict h = terms[t].second + offset;
      for (size_t i = 0; i < count; ++i)
        sum[i] += weight * h[i];
    }
  });
}

} // namespace troupe
