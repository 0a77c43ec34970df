// The optimizer factory, the one list of the optimizers a run can name, and
// what every optimizer does unless it does better.
#include <algorithm>

#include "model/optim/adam.hpp"
#include "model/optim/optimizer.hpp"
#include "model/optim/sgd.hpp"

namespace troupe {

void optimizer::apply_weighted_sum(float* weights, const std::vector<weighted_gradient>& terms) {
  std::vector<float> gradient(size());
  weighted_gradient_sum(terms, 0, gradient.size(), gradient.data());
  apply(weights, gradient.data());
}

const std::vector<optimizer_kind>& optimizer_kinds() {
  static const std::vector<optimizer_kind> kinds = {
    {"adam", true},  // its loop is a backend op (backend::adam_update)
    {"sgd", false},
  };
  return kinds;
}

const optimizer_kind* find_optimizer_kind(const std::string& name) {
  const auto& kinds = optimizer_kinds();
  auto found = std::find_if(kinds.begin(), kinds.end(),
                            [&name](const optimizer_kind& kind) { return kind.name == name; });
  return found == kinds.end() ? nullptr : &*found;
}

expected<std::unique_ptr<optimizer>> make_optimizer(const optimizer_config& config, size_t size,
                                                    backend* device) {
  if (!(config.learning_rate > 0.0f))
    return fail(model_errc::invalid_argument,
                "learning rate must be positive, got " + std::to_string(config.learning_rate));
  const optimizer_kind* kind = find_optimizer_kind(config.name);
  if (kind == nullptr) {
    std::string known;
    for (const auto& k : optimizer_kinds())
      known += (known.empty() ? "" : " or ") + k.name;
    return fail(model_errc::invalid_argument,
                "unknown optimizer '" + config.name + "' (expected " + known + ")");
  }
  if (device != nullptr && !kind->steps_on_device)
    return fail(model_errc::invalid_argument,
                config.name + " steps on the host only, not on " + device->name());
  if (config.name == "adam")
    return device != nullptr ? std::unique_ptr<optimizer>{new adam(config, size, *device)}
                             : std::unique_ptr<optimizer>{new adam(config, size)};
  return std::unique_ptr<optimizer>{new sgd(config, size)};
}

} // namespace troupe
