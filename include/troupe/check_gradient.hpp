// A finite-difference check of a model's gradient, for testing a model
// before training it.
#pragma once

#include <troupe/export.hpp>

#include <cstddef>
#include <cstdint>
#include <string>

#include <troupe/expected.hpp>
#include <troupe/model.hpp>

namespace troupe {

/// Holds the outcome of a gradient check.
struct TROUPE_API gradient_report {
  size_t checked = 0;       // parameters compared
  size_t worst_index = 0;   // the parameter that differed most
  double worst_analytic = 0;
  double worst_numeric = 0;
  double worst_excess = 0;  // |analytic - numeric| / tolerance there; <= 1 passes
  bool passed = false;
};

/// Sets how a gradient check perturbs and compares. The default tolerance,
/// 2e-4 + 1e-2 * |numeric| per parameter, passes Troupe's own layers (float
/// arithmetic) and fails a small model that adds an L2 penalty of 1e-3 to
/// its loss but leaves it out of its gradient.
struct TROUPE_API gradient_check_options {
  uint64_t seed = 7;      // the parameters checked: m.initialize(seed)
  float step = 1e-3f;     // central difference: (L(p + step) - L(p - step)) / 2 step
  double absolute = 2e-4; // tolerance: absolute + relative * |numeric|
  double relative = 1e-2;
  size_t max_parameters = 0; // 0: every parameter; else that many, evenly spread
};

/// Compares m.gradient() on `samples` with central differences of the mean
/// loss m.gradient() reports, the training pass's (dropout with the batch's
/// mask, batch normalization by the batch's statistics), weight by weight;
/// the floats of m.state_spans() are not a loss's gradient and are skipped.
/// A model with a penalty (L2, ...) must report it in its loss as in its
/// gradient.
/// An error when the batch does not fit the model (its width, a label
/// outside 0..outputs()-1) or the model's calls make no sense (a loss that
/// is not finite); otherwise the report says whether every parameter was
/// within the tolerance.
TROUPE_API expected<gradient_report> check_gradient(model& m, const batch& samples,
                                         const gradient_check_options& options = {});

} // namespace troupe
