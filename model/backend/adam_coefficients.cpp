// Adam's step size for step t, with the bias correction folded in.
#include "model/backend/adam_coefficients.hpp"

#include <cmath>

namespace troupe::detail {

adam_coefficients adam_step_coefficients(const adam_hyperparameters& h, uint64_t step) {
  // The CUDA backend's adam_update_counted computes the same in double.
  const double t = static_cast<double>(step);
  const double correction = std::sqrt(1.0 - std::pow(double{h.beta2}, t))
                            / (1.0 - std::pow(double{h.beta1}, t));
  adam_coefficients c;
  c.alpha = static_cast<float>(h.learning_rate * correction);
  c.beta1 = h.beta1;
  c.beta2 = h.beta2;
  c.epsilon = h.epsilon;
  return c;
}

} // namespace troupe::detail
