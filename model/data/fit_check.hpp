// Whether a data set fits a model's inputs and outputs, and when it does not,
// a sentence that names the set, its source and the first sample that is out.
#pragma once

#include <string>

#include <troupe/data_source.hpp>

namespace troupe::detail {

/// What the model takes and gives.
struct model_shape {
  std::string text; // the model's description, for the sentence
  int inputs = 0;
  int outputs = 0;
  bool squared_error = false; // float targets (--loss=mse), not class labels
};

/// Returns why `data`, the `role` set ("training" or "test"), does not fit
/// `model`: labels against float targets, its feature width, or, for class
/// labels, the first sample whose label is not one of the model's outputs
/// (its index and label); "" if it fits.
std::string explain_misfit(const model_shape& model, const data_source& data,
                           const std::string& role);

} // namespace troupe::detail
