// Top-k accuracy, MAE and MSE over a source, from a model's predictions.
#include "model/metrics.hpp"

#include <cmath>
#include <cstdlib>
#include <optional>

#include "model/source_chunks.hpp"

namespace troupe::detail {

namespace {

// "top_K_accuracy" with K a positive number, or nothing.
std::optional<int> top_k_of(const std::string& name) {
  const std::string head = "top_", tail = "_accuracy";
  if (name.size() <= head.size() + tail.size() || name.compare(0, head.size(), head) != 0
      || name.compare(name.size() - tail.size(), tail.size(), tail) != 0)
    return std::nullopt;
  const std::string digits = name.substr(head.size(), name.size() - head.size() - tail.size());
  if (digits.empty() || digits.size() > 4 || digits.find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  const int k = std::atoi(digits.c_str());
  return k > 0 ? std::optional<int>(k) : std::nullopt;
}

// Adds one chunk's metric sums: right top-k answers, or absolute and
// squared errors over every output.
void add_chunk(const metric_spec& spec, const batch& chunk, const std::vector<float>& outputs,
               int width, double& sum) {
  for (size_t i = 0; i < chunk.count; ++i) {
    const float* row = outputs.data() + i * static_cast<size_t>(width);
    if (spec.what == metric_spec::kind::top_k_accuracy) {
      const float labelled = row[chunk.labels[i]];
      int above = 0; // outputs larger than the label's: ties count in the top k
      for (int j = 0; j < width; ++j)
        above += row[j] > labelled ? 1 : 0;
      sum += above < spec.k ? 1.0 : 0.0;
      continue;
    }
    const float* target = chunk.targets + i * static_cast<size_t>(width);
    for (int j = 0; j < width; ++j) {
      const double error = static_cast<double>(row[j]) - target[j];
      sum += spec.what == metric_spec::kind::mae ? std::abs(error) : error * error;
    }
  }
}

} // namespace

std::string metric_spec::name() const {
  if (what == kind::top_k_accuracy)
    return "top_" + std::to_string(k) + "_accuracy";
  return what == kind::mae ? "mae" : "mse";
}

expected<std::vector<metric_spec>> parse_metrics(const std::string& list) {
  std::vector<metric_spec> specs;
  size_t start = 0;
  while (start < list.size()) {
    size_t end = list.find(',', start);
    if (end == std::string::npos)
      end = list.size();
    const std::string name = list.substr(start, end - start);
    start = end + 1;
    metric_spec spec;
    if (auto k = top_k_of(name)) {
      spec.what = metric_spec::kind::top_k_accuracy;
      spec.k = *k;
    } else if (name == "mse") {
      spec.what = metric_spec::kind::mse;
    } else if (name != "mae") {
      return fail(errc::invalid_argument,
                  "unknown metric '" + name + "' (known: top_K_accuracy for a number K, "
                  "mae, mse)");
    }
    for (const auto& seen : specs)
      if (seen.name() == spec.name())
        return fail(errc::invalid_argument, "metric '" + name + "' is named twice");
    specs.push_back(spec);
  }
  return specs;
}

status check_metrics(const std::vector<metric_spec>& specs, const data_source& data,
                     int outputs) {
  for (const auto& spec : specs) {
    const bool top_k = spec.what == metric_spec::kind::top_k_accuracy;
    if (top_k && data.regression())
      return fail(errc::invalid_argument,
                  "metric " + spec.name() + " scores a classifier, and the data has targets "
                  "(for regression: mae, mse)");
    if (!top_k && !data.regression())
      return fail(errc::invalid_argument,
                  "metric " + spec.name() + " scores a regression, and the data has class "
                  "labels (for a classifier: top_K_accuracy)");
    if (top_k && spec.k > outputs)
      return fail(errc::invalid_argument,
                  "metric " + spec.name() + ": k is larger than the model's "
                    + std::to_string(outputs) + " classes");
  }
  return {};
}

expected<source_score> score_source(model& scorer, const float* parameters,
                                    const data_source& data,
                                    const std::vector<metric_spec>& specs) {
  source_score score;
  score.metrics.assign(specs.size(), 0.0);
  const int width = scorer.outputs();
  std::vector<float> outputs;
  auto walked = for_each_chunk(data, chunk_content::answered, [&](const batch& chunk, size_t) {
    const batch_result scored = scorer.evaluate(parameters, chunk);
    score.sums.loss_sum += scored.loss_sum;
    score.sums.correct += scored.correct;
    if (specs.empty())
      return;
    outputs.resize(chunk.count * static_cast<size_t>(width));
    scorer.predict(parameters, chunk.features, chunk.count, outputs.data());
    for (size_t m = 0; m < specs.size(); ++m)
      add_chunk(specs[m], chunk, outputs, width, score.metrics[m]);
  });
  if (!walked)
    return walked.error();
  for (size_t m = 0; m < specs.size(); ++m) {
    const bool top_k = specs[m].what == metric_spec::kind::top_k_accuracy;
    const double count = static_cast<double>(data.size()) * (top_k ? 1 : width);
    score.metrics[m] = count > 0 ? score.metrics[m] / count : 0.0;
  }
  return score;
}

} // namespace troupe::detail
