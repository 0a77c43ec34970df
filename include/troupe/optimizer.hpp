// The optimizer a run trains with, its hyperparameters and its learning-rate
// schedule, with Keras's defaults and Keras 3's exact update rules.
#pragma once

#include <troupe/export.hpp>

#include <cstdint>
#include <string>
#include <utility>

namespace troupe {

/// Describes how the learning rate follows the optimizer's step t (0 for the
/// first step, as Keras's `optimizer.iterations`), starting from the
/// optimizer's learning_rate (Keras's `initial_learning_rate`). The rate is a
/// function of t alone, so every store shard computes the same one.
struct TROUPE_API lr_schedule {
  std::string kind = "constant"; // constant, step, exponential or cosine
  uint64_t every = 0;            // step: lr * factor^floor(t / every)
  float factor = 1.0f;           // step
  uint64_t decay_steps = 0;      // exponential, cosine
  float decay_rate = 1.0f;       // exponential: lr * decay_rate^(t / decay_steps)
  bool staircase = false;        // exponential: the exponent floor(t / decay_steps)
  float alpha = 0.0f;            // cosine: the last rate as a fraction of the first
  uint64_t warmup_steps = 0;     // cosine: first from lr linearly to warmup_target
  float warmup_target = 0.0f;    // cosine, with warmup_steps: where the decay starts
};

/// Chooses an optimizer ("adam", "adamw", "sgd" or "rmsprop"), its
/// hyperparameters and its learning-rate schedule.
struct TROUPE_API optimizer_config {
  std::string name = "adam";
  float learning_rate = 1e-3f;
  float beta1 = 0.9f;        // adam, adamw
  float beta2 = 0.999f;      // adam, adamw
  float epsilon = 1e-7f;     // adam, adamw, rmsprop
  float momentum = 0.0f;     // sgd, rmsprop
  bool nesterov = false;     // sgd
  float rho = 0.9f;          // rmsprop: decay of the mean square
  bool centered = false;     // rmsprop: divide by the gradient's variance
  float weight_decay = 0.0f; // every optimizer: w -= lr * weight_decay * w before each step
  // Every optimizer (Keras's global_clipnorm): the step's whole gradient g,
  // all store shards' slices together, is scaled by
  // global_clipnorm / max(||g||, global_clipnorm) before the step; 0: off.
  float global_clipnorm = 0.0f;
  lr_schedule schedule;
};

namespace schedules {

/// Returns the constant learning rate.
inline lr_schedule constant() {
  return lr_schedule{};
}

/// Returns the rate times `factor` every `every` steps: lr * factor^floor(t / every).
inline lr_schedule step_decay(uint64_t every, float factor) {
  lr_schedule s;
  s.kind = "step";
  s.every = every;
  s.factor = factor;
  return s;
}

/// Returns Keras's ExponentialDecay: lr * decay_rate^(t / decay_steps), the
/// exponent rounded down with `staircase`.
inline lr_schedule exponential_decay(uint64_t decay_steps, float decay_rate,
                                     bool staircase = false) {
  lr_schedule s;
  s.kind = "exponential";
  s.decay_steps = decay_steps;
  s.decay_rate = decay_rate;
  s.staircase = staircase;
  return s;
}

/// Returns Keras's CosineDecay: with `warmup_steps`, first a linear warm-up
/// from the learning rate to `warmup_target`, then a cosine over
/// `decay_steps` from there (else from the learning rate) down to `alpha`
/// times it.
inline lr_schedule cosine_decay(uint64_t decay_steps, float alpha = 0.0f,
                                uint64_t warmup_steps = 0, float warmup_target = 0.0f) {
  lr_schedule s;
  s.kind = "cosine";
  s.decay_steps = decay_steps;
  s.alpha = alpha;
  s.warmup_steps = warmup_steps;
  s.warmup_target = warmup_target;
  return s;
}

} // namespace schedules

namespace optimizers {

/// Returns Adam with Keras's defaults, or the rates given.
inline optimizer_config adam(float learning_rate = 1e-3f, float beta1 = 0.9f,
                             float beta2 = 0.999f, float epsilon = 1e-7f) {
  optimizer_config c;
  c.learning_rate = learning_rate;
  c.beta1 = beta1;
  c.beta2 = beta2;
  c.epsilon = epsilon;
  return c;
}

/// Returns AdamW (Adam with decoupled weight decay) with Keras's defaults.
inline optimizer_config adamw(float learning_rate = 1e-3f, float weight_decay = 0.004f,
                              float beta1 = 0.9f, float beta2 = 0.999f,
                              float epsilon = 1e-7f) {
  optimizer_config c = adam(learning_rate, beta1, beta2, epsilon);
  c.name = "adamw";
  c.weight_decay = weight_decay;
  return c;
}

/// Returns SGD (with optional momentum, Nesterov's if asked, and decoupled
/// weight decay) as Keras runs it.
inline optimizer_config sgd(float learning_rate = 0.01f, float momentum = 0.0f,
                            bool nesterov = false, float weight_decay = 0.0f) {
  optimizer_config c;
  c.name = "sgd";
  c.learning_rate = learning_rate;
  c.momentum = momentum;
  c.nesterov = nesterov;
  c.weight_decay = weight_decay;
  return c;
}

/// Returns RMSprop with Keras's defaults, or the settings given.
inline optimizer_config rmsprop(float learning_rate = 1e-3f, float rho = 0.9f,
                                float momentum = 0.0f, float epsilon = 1e-7f,
                                bool centered = false, float weight_decay = 0.0f) {
  optimizer_config c;
  c.name = "rmsprop";
  c.learning_rate = learning_rate;
  c.rho = rho;
  c.momentum = momentum;
  c.epsilon = epsilon;
  c.centered = centered;
  c.weight_decay = weight_decay;
  return c;
}

/// Returns `optimizer` with its gradient clipped by global norm (Keras's
/// global_clipnorm): scaled by clipnorm / max(||g||, clipnorm) before each step.
inline optimizer_config with_global_clipnorm(optimizer_config optimizer, float clipnorm) {
  optimizer.global_clipnorm = clipnorm;
  return optimizer;
}

/// Returns `optimizer` with its learning rate following `schedule`.
inline optimizer_config with_schedule(optimizer_config optimizer, lr_schedule schedule) {
  optimizer.schedule = std::move(schedule);
  return optimizer;
}

} // namespace optimizers

} // namespace troupe
