// Reading a whole data source in chunks of rows.
#include "model/source_chunks.hpp"

#include <algorithm>
#include <numeric>
#include <vector>

#include "model/data/source_registry.hpp"

namespace troupe::detail {

status for_each_chunk(const data_source& data, chunk_content content,
                      const std::function<void(const batch& chunk, size_t first)>& visit) {
  const size_t width = static_cast<size_t>(data.features());
  const bool answered = content == chunk_content::answered;
  const bool regression = answered && data.regression();
  const bool labelled = answered && !data.regression();
  std::vector<uint32_t> indices;
  std::vector<float> features(evaluation_rows * width);
  std::vector<int32_t> labels(labelled ? evaluation_rows : 0);
  std::vector<float> targets(regression ? evaluation_rows * data.target_width() : 0);
  for (size_t first = 0; first < data.size(); first += evaluation_rows) {
    const size_t rows = std::min(evaluation_rows, data.size() - first);
    indices.resize(rows);
    std::iota(indices.begin(), indices.end(), static_cast<uint32_t>(first));
    data.gather(indices.data(), rows, features.data(), labelled ? labels.data() : nullptr,
                regression ? targets.data() : nullptr);
    if (labelled)
      if (auto checked = check_gathered_labels(data, indices.data(), labels.data(), rows);
          !checked)
        return checked;
    visit(batch{features.data(), labelled ? labels.data() : nullptr, rows,
                data.features(), regression ? targets.data() : nullptr},
          first);
  }
  return {};
}

expected<batch_result> evaluate_source(model& scorer, const float* parameters,
                                       const data_source& data) {
  batch_result total;
  auto walked = for_each_chunk(data, chunk_content::answered, [&](const batch& chunk, size_t) {
    const batch_result scored = scorer.evaluate(parameters, chunk);
    total.loss_sum += scored.loss_sum;
    total.correct += scored.correct;
  });
  if (!walked)
    return walked.error();
  return total;
}

} // namespace troupe::detail
