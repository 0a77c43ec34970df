// Inference on the CPU: a trained MLP's logits and probabilities for a set of
// samples, computed with the same backend ops network trains with.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "model/model_spec.hpp"

namespace troupe::detail {

/// Computes the logits of `count` samples with the CPU (Eigen) backend, in
/// chunks of at most predict_chunk_rows rows. params: parameter_layout(spec)
/// floats; features: (count, spec.inputs); logits_out: (count, spec.classes()).
/// The logits have the bits network's forward pass computes for these rows.
void predict_logits(const model_spec& spec, const float* params, const float* features,
                    size_t count, float* logits_out);

/// Bounds the rows predict_logits computes at once, and so its memory.
inline constexpr size_t predict_chunk_rows = 1000;

/// Turns each row of logits into probabilities in place (softmax after
/// subtracting the row's maximum, so large logits do not overflow).
/// values: (rows, classes).
void softmax_rows(float* values, size_t rows, int classes);

/// Returns each row's index of its largest value, the first one on a tie
/// (as the training accuracy counts). values: (rows, classes).
std::vector<int32_t> argmax_rows(const float* values, size_t rows, int classes);

} // namespace troupe::detail
