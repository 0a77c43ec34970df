// The optimizer a run trains with and its hyperparameters, with Keras's
// defaults and Keras's exact update rules.
#pragma once

#include <string>

namespace troupe {

/// Chooses an optimizer ("adam" or "sgd") and its hyperparameters.
struct optimizer_config {
  std::string name = "adam";
  float learning_rate = 1e-3f;
  float beta1 = 0.9f;    // adam
  float beta2 = 0.999f;  // adam
  float epsilon = 1e-7f; // adam
  float momentum = 0.0f; // sgd
  bool nesterov = false; // sgd
};

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

/// Returns SGD (with optional momentum, Nesterov's if asked) as Keras runs it.
inline optimizer_config sgd(float learning_rate = 0.01f, float momentum = 0.0f,
                            bool nesterov = false) {
  optimizer_config c;
  c.name = "sgd";
  c.learning_rate = learning_rate;
  c.momentum = momentum;
  c.nesterov = nesterov;
  return c;
}

} // namespace optimizers

} // namespace troupe
