// The reference weighted sum, on the CPU's add kernel.
#include "model/backend/weighted_sum.hpp"

#include "model/backend/cpu/adam_kernel.hpp"

namespace troupe::detail {

void weighted_gradient_sum(const std::vector<weighted_gradient>& terms, size_t offset,
                           size_t count, float* out) {
  for (size_t t = 0; t < terms.size(); ++t)
    weighted_add_kernel(out, terms[t].gradient + offset, terms[t].weight, count, t == 0);
}

} // namespace troupe::detail
