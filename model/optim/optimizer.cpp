// The optimizer factory, the one list of the optimizers a run can name, the
// checks of their settings, and what every optimizer does unless it does
// better.
#include <algorithm>
#include <cmath>

#include "model/optim/adam.hpp"
#include "model/optim/lr_schedule.hpp"
#include "model/optim/optimizer.hpp"
#include "model/optim/rmsprop.hpp"
#include "model/optim/sgd.hpp"

namespace troupe::detail {

namespace {

// The settings only RMSprop reads.
std::string refuse_rmsprop(const optimizer_config& c) {
  if (!(c.rho >= 0.0f && c.rho < 1.0f))
    return "--rho must be at least 0 and below 1, got " + to_setting_text(c.rho);
  if (!(c.epsilon > 0.0f && std::isfinite(c.epsilon)))
    return "--epsilon must be positive for rmsprop (it is added under the root), got "
           + to_setting_text(c.epsilon);
  if (!(c.momentum >= 0.0f && std::isfinite(c.momentum)))
    return "--momentum must be 0 or more, got " + to_setting_text(c.momentum);
  return {};
}

} // namespace

void optimizer::apply_weighted_sum(float* weights, const std::vector<weighted_gradient>& terms) {
  std::vector<float> gradient(size());
  weighted_gradient_sum(terms, 0, gradient.size(), gradient.data());
  apply(weights, gradient.data());
}

const std::vector<optimizer_kind>& optimizer_kinds() {
  static const std::vector<optimizer_kind> kinds = {
    {"adam", true, 0.0f},     // its loop is a backend op (backend::adam_update)
    {"adamw", false, 0.004f}, // adam after the weight decay's host pass
    {"sgd", false, 0.0f},
    {"rmsprop", false, 0.0f},
  };
  return kinds;
}

const optimizer_kind* find_optimizer_kind(const std::string& name) {
  const auto& kinds = optimizer_kinds();
  auto found = std::find_if(kinds.begin(), kinds.end(),
                            [&name](const optimizer_kind& kind) { return kind.name == name; });
  return found == kinds.end() ? nullptr : &*found;
}

std::string optimizer_names() {
  std::vector<std::string> names;
  for (const auto& kind : optimizer_kinds())
    names.push_back(kind.name);
  return choices_text(names);
}

std::string refuse_optimizer_config(const optimizer_config& c) {
  if (find_optimizer_kind(c.name) == nullptr)
    return "--optimizer: '" + c.name + "' (expected " + optimizer_names() + ")";
  const float lr = c.learning_rate;
  if (!(std::isfinite(lr) && (lr > 0.0f || (lr == 0.0f && warms_up(c.schedule)))))
    return "--lr must be positive, got " + to_setting_text(lr)
           + (lr == 0.0f ? " (0 only where a cosine schedule warms up from it)" : "");
  if (!(c.weight_decay >= 0.0f && std::isfinite(c.weight_decay)))
    return "--weight-decay must be 0 or more, got " + to_setting_text(c.weight_decay);
  if (!(c.global_clipnorm >= 0.0f && std::isfinite(c.global_clipnorm)))
    return "--global-clipnorm must be 0 (off) or more, got " + to_setting_text(c.global_clipnorm);
  if (c.name == "rmsprop")
    if (auto why = refuse_rmsprop(c); !why.empty())
      return why;
  return refuse_lr_schedule(c);
}

bool steps_on_device(const optimizer_config& config) {
  const optimizer_kind* kind = find_optimizer_kind(config.name);
  return kind != nullptr && kind->steps_on_device && config.weight_decay == 0.0f
         && config.global_clipnorm == 0.0f;
}

expected<std::unique_ptr<optimizer>> make_optimizer(const optimizer_config& config, size_t size,
                                                    backend* device) {
  if (auto why = refuse_optimizer_config(config); !why.empty())
    return fail(errc::invalid_argument, why);
  if (device != nullptr && !steps_on_device(config))
    return fail(errc::invalid_argument,
                config.name + (config.weight_decay != 0.0f ? " with weight decay" : "")
                  + (config.global_clipnorm != 0.0f ? " with --global-clipnorm" : "")
                  + " steps on the host only, not on " + device->name());
  if (config.name == "adam" || config.name == "adamw")
    return device != nullptr ? std::unique_ptr<optimizer>{new adam(config, size, *device)}
                             : std::unique_ptr<optimizer>{new adam(config, size)};
  if (config.name == "rmsprop")
    return std::unique_ptr<optimizer>{new rmsprop(config, size)};
  return std::unique_ptr<optimizer>{new sgd(config, size)};
}

} // namespace troupe::detail
