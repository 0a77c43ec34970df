// Learning-rate schedules as Keras defines them, each a function of the
// optimizer's step t alone (0 for the first step), so that every store shard,
// a respawned one and a resumed run compute the same rate:
//   constant     lr
//   step         lr * factor^floor(t / every)
//   exponential  lr * decay_rate^(t / decay_steps)   (staircase: the exponent's floor)
//   cosine       lr * ((1 - alpha) * (1 + cos(pi * s / decay_steps)) / 2 + alpha),
//                s = min(t, decay_steps); with warmup_steps W (Keras's CosineDecay):
//                lr + (warmup_target - lr) * t / W while t < W, then the cosine of
//                t - W from warmup_target instead of lr
#pragma once

#include <cstdint>
#include <string>

#include "common/optimizer_config.hpp"

namespace troupe::detail {

/// Returns the learning rate of optimizer step `step` (0 for the first, as
/// Keras's `optimizer.iterations`): computed in double, rounded once to
/// float; the constant schedule returns config.learning_rate itself.
float scheduled_learning_rate(const optimizer_config& config, uint64_t step);

/// Returns `config` with its rates (the learning rate and a cosine's
/// warm-up target) times `factor`, as a callback that reduces the rate on a
/// plateau leaves them; `config` itself for a factor of 1.
optimizer_config with_learning_rate_factor(optimizer_config config, float factor);

/// Says what is wrong with `config`'s schedule in a sentence naming
/// --lr-schedule, or returns an empty string when nothing is.
std::string refuse_lr_schedule(const optimizer_config& config);

/// Tells whether `schedule` warms up (a cosine with warmup_steps), so that
/// the learning rate it starts from may be 0.
bool warms_up(const lr_schedule& schedule);

} // namespace troupe::detail
