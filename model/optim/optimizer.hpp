// Optimizers over flat parameter buffers, as the variable store applies them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/expected.hpp"
#include "common/optimizer_config.hpp"
#include "model/backend/weighted_sum.hpp"

namespace troupe::detail {

class backend; // model/backend/backend.hpp

/// Updates a flat weight buffer from a flat gradient, keeping its own state.
class optimizer {
public:
  virtual ~optimizer() = default;

  /// Applies one step: weights and gradient have size() floats.
  void apply(float* weights, const float* gradient) { apply_scaled(weights, gradient, 1.0f); }

  /// Applies one step with the learning rate times `lr_scale` (a staleness-
  /// aware step); a scale of 1 gives apply()'s bits.
  virtual void apply_scaled(float* weights, const float* gradient, float lr_scale) = 0;

  /// Applies one step with the gradient weighted_gradient_sum(terms) (a
  /// round's mean), fused with the step where the optimizer can: the same
  /// bits as apply() on that sum, which is what the default does.
  virtual void apply_weighted_sum(float* weights, const std::vector<weighted_gradient>& terms);

  /// Makes the next step leave everything as it is if *flag (in the memory
  /// the step runs in) is non-zero when it runs; false where the optimizer
  /// cannot (then callers check before they step).
  virtual bool skip_next_step_if(const float* flag) {
    (void) flag;
    return false;
  }

  /// Multiplies the learning rate of every later step by `factor`: the
  /// schedule's rates (the learning rate and a cosine's warm-up target)
  /// times it; a factor of 1 gives the schedule's own bits.
  virtual void set_learning_rate_factor(float factor) = 0;

  /// Says that other threads read the weights between steps (a store
  /// shard's replicas in its process), which an optimizer may step
  /// differently for, with the same bits.
  virtual void set_weights_shared(bool shared) { (void) shared; }

  /// Returns how many steps were applied.
  virtual uint64_t steps() const = 0;

  /// Returns the state as flat floats (for checkpoints), steps excluded.
  virtual std::vector<float> state() const = 0;

  /// Restores state() and the step count; false if the size does not fit.
  virtual bool restore(const std::vector<float>& state, uint64_t steps) = 0;

  virtual size_t size() const = 0;
};

/// Describes one optimizer make_optimizer builds.
struct optimizer_kind {
  std::string name;      // optimizer_config::name
  bool steps_on_device;  // it can keep its state and step on a device backend
  float weight_decay;    // Keras's default for it
};

/// Lists the optimizers make_optimizer builds, for option checks and help.
const std::vector<optimizer_kind>& optimizer_kinds();

/// Returns the kind named `name`, or null.
const optimizer_kind* find_optimizer_kind(const std::string& name);

/// Names the optimizers as a sentence does: "adam, adamw, sgd or rmsprop".
std::string optimizer_names();

/// Says what is wrong with `config` in a sentence naming the option (an
/// unknown optimizer or schedule, a learning rate that is not positive,
/// negative weight decay or global_clipnorm, rho outside [0, 1), a bad
/// schedule parameter), or
/// returns an empty string when nothing is.
std::string refuse_optimizer_config(const optimizer_config& config);

/// Tells whether an optimizer of `config` can keep its state and step on a
/// device backend: a kind that can, without weight decay (a host pass) and
/// without clipping by global norm (the store clips on the host).
bool steps_on_device(const optimizer_config& config);

/// Creates the optimizer that `config` names, for `size` parameters: on the
/// host, or with `device` set in that backend's memory (only where
/// steps_on_device(config); elsewhere, and for a config
/// refuse_optimizer_config refuses, an invalid_argument error).
expected<std::unique_ptr<optimizer>> make_optimizer(const optimizer_config& config, size_t size,
                                                    backend* device = nullptr);

} // namespace troupe::detail
