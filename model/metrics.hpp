// The metrics a run scores on its validation data besides loss and
// accuracy, as Keras names them: top-k accuracy of a classifier
// ("top_5_accuracy": the label is among the k largest outputs), and a
// regression's mean absolute and mean squared error ("mae", "mse": over
// every sample and output).
#pragma once

#include <string>
#include <vector>

#include <troupe/data_source.hpp>
#include <troupe/model.hpp>

#include "common/expected.hpp"

namespace troupe::detail {

/// Names one metric: its kind and, for top-k accuracy, k.
struct metric_spec {
  enum class kind { top_k_accuracy, mae, mse };
  kind what = kind::mae;
  int k = 0;

  /// Returns the name it is asked for and reported under ("top_5_accuracy").
  std::string name() const;
};

/// Reads a comma-separated list of metric names; an unknown or repeated
/// name is an invalid_argument error that names it.
expected<std::vector<metric_spec>> parse_metrics(const std::string& list);

/// Checks that every metric of `specs` can score `data` with a model of
/// `outputs` outputs: top-k accuracy on labels with k <= outputs, mae and
/// mse on targets.
status check_metrics(const std::vector<metric_spec>& specs, const data_source& data,
                     int outputs);

/// Holds a model's loss and accuracy sums over a source and each metric's
/// value, in the order of the specs.
struct source_score {
  batch_result sums;
  std::vector<double> metrics;
};

/// Scores `scorer` at `parameters` over every sample of `data`: its
/// evaluation, and each metric of `specs` from its predictions.
expected<source_score> score_source(model& scorer, const float* parameters,
                                    const data_source& data,
                                    const std::vector<metric_spec>& specs);

} // namespace troupe::detail
