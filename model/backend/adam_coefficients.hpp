// Adam's numbers as the update ops take them: the hyperparameters, and one
// step's coefficients with the bias correction folded into alpha.
#pragma once

#include <cstdint>

namespace troupe::detail {

/// Holds the per-step constants of Adam; alpha already carries the bias
/// correction lr * sqrt(1 - b2^t) / (1 - b1^t).
struct adam_coefficients {
  float alpha = 0;
  float beta1 = 0.9f;
  float beta2 = 0.999f;
  float epsilon = 1e-7f;
  /// A float in the memory the step runs in, or null: when it is non-zero
  /// the step leaves weights and moments as they are (a gradient found NaN
  /// or Inf on the device, where the host has not looked yet).
  const float* skip_if = nullptr;
  /// Other threads read the weights between steps (a store shard's
  /// replicas): a CPU step then asks for their cache lines for writing
  /// ahead of its stores (adam_kernel.cpp). A hint: the bits are the same.
  bool weights_shared = false;
};

/// Holds Adam's hyperparameters, for the op that derives each step's
/// coefficients on the device from a step count kept there.
struct adam_hyperparameters {
  float learning_rate = 1e-3f;
  float beta1 = 0.9f;
  float beta2 = 0.999f;
  float epsilon = 1e-7f;
};

/// Returns the coefficients of Adam's step number `step` (1-based).
adam_coefficients adam_step_coefficients(const adam_hyperparameters& h, uint64_t step);

} // namespace troupe::detail
