// The learning rate of each optimizer step, and the checks of a schedule's
// parameters.
#include "model/optim/lr_schedule.hpp"

#include <algorithm>
#include <cmath>

#include "model/check.hpp"

namespace troupe::detail {

namespace {

constexpr double pi = 3.14159265358979323846;

// Keras's CosineDecay::_decay_function: `step` steps into a decay of
// `decay_steps` from `from`.
double cosine_decayed(double from, double step, double decay_steps, double alpha) {
  const double cosine = 0.5 * (1.0 + std::cos(pi * (step / decay_steps)));
  return from * ((1.0 - alpha) * cosine + alpha);
}

double cosine_rate(const lr_schedule& s, double lr, double t) {
  const double decay_steps = static_cast<double>(s.decay_steps);
  if (s.warmup_steps == 0)
    return cosine_decayed(lr, std::min(t, decay_steps), decay_steps, s.alpha);
  const double warmup_steps = static_cast<double>(s.warmup_steps);
  const double target = s.warmup_target;
  t = std::min(t, decay_steps + warmup_steps);
  if (t < warmup_steps)
    return (target - lr) * (t / warmup_steps) + lr;
  return cosine_decayed(target, t - warmup_steps, decay_steps, s.alpha);
}

bool positive(float x) {
  return x > 0.0f && std::isfinite(x);
}

std::string bad(const lr_schedule& s, const std::string& why) {
  return "--lr-schedule=" + to_setting_text(s) + ": " + why;
}

std::string refuse_cosine(const lr_schedule& s) {
  if (!(s.alpha >= 0.0f && s.alpha <= 1.0f))
    return bad(s, "alpha must be between 0 and 1, got " + to_setting_text(s.alpha));
  if (s.warmup_steps > 0 && !positive(s.warmup_target))
    return bad(s, "a warm-up needs a positive warmup_target (the rate it climbs to)");
  if (s.warmup_steps == 0 && s.warmup_target != 0.0f)
    return bad(s, "warmup_target needs warmup_steps (how many steps climb to it)");
  return {};
}

} // namespace

float scheduled_learning_rate(const optimizer_config& config, uint64_t step) {
  const lr_schedule& s = config.schedule;
  const double lr = config.learning_rate;
  const double t = static_cast<double>(step);
  // refuse_lr_schedule, which make_optimizer asks, keeps these from 0.
  TROUPE_ASSERT(s.kind != "step" || s.every > 0);
  TROUPE_ASSERT((s.kind != "exponential" && s.kind != "cosine") || s.decay_steps > 0);
  if (s.kind == "step")
    return static_cast<float>(lr * std::pow(double{s.factor}, static_cast<double>(step / s.every)));
  if (s.kind == "exponential") {
    double exponent = t / static_cast<double>(s.decay_steps);
    if (s.staircase)
      exponent = std::floor(exponent);
    return static_cast<float>(lr * std::pow(double{s.decay_rate}, exponent));
  }
  if (s.kind == "cosine")
    return static_cast<float>(cosine_rate(s, lr, t));
  return config.learning_rate;
}

optimizer_config with_learning_rate_factor(optimizer_config config, float factor) {
  if (factor != 1.0f) {
    config.learning_rate *= factor;
    config.schedule.warmup_target *= factor;
  }
  return config;
}

std::string refuse_lr_schedule(const optimizer_config& config) {
  const lr_schedule& s = config.schedule;
  if (s.kind == "constant")
    return {};
  if (s.kind == "step") {
    if (s.every == 0)
      return bad(s, "every must be at least 1");
    if (!positive(s.factor))
      return bad(s, "factor must be positive, got " + to_setting_text(s.factor));
    return {};
  }
  if (s.kind == "exponential" || s.kind == "cosine") {
    if (s.decay_steps == 0)
      return bad(s, "decay_steps must be at least 1");
    if (s.kind == "cosine")
      return refuse_cosine(s);
    if (!positive(s.decay_rate))
      return bad(s, "decay_rate must be positive, got " + to_setting_text(s.decay_rate));
    return {};
  }
  return "--lr-schedule: unknown schedule '" + s.kind + "' (expected "
         + choices_text(lr_schedule_kinds()) + ")";
}

bool warms_up(const lr_schedule& schedule) {
  return schedule.kind == "cosine" && schedule.warmup_steps > 0;
}

} // namespace troupe::detail
