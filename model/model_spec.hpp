// The small value that describes a model ("784-128relu-10"), so that a remote
// node can build the same network from a message.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "common/expected.hpp"

namespace troupe::detail {

/// Names the elementwise function applied after a dense layer.
enum class activation { none, relu };

/// Describes one dense layer: its output width and activation.
struct dense_spec {
  int units = 0;
  activation act = activation::none;
};

/// Names what a model's outputs are trained against.
enum class loss_kind {
  softmax_cross_entropy, // logits against a class label (sparse categorical)
  squared_error,         // values against float targets: the mean over outputs
};

/// Describes a multilayer perceptron: input width and dense layers. The last
/// layer's outputs are logits for softmax cross-entropy, or values for the
/// squared error ("784-64relu-1:mse").
struct model_spec {
  int inputs = 0;
  std::vector<dense_spec> layers;
  loss_kind loss = loss_kind::softmax_cross_entropy;

  int classes() const { return layers.empty() ? 0 : layers.back().units; }
  int widest() const;
};

/// Ends the description of a model trained with the squared error.
inline constexpr const char* squared_error_suffix = ":mse";

/// Returns `text` without a trailing squared_error_suffix.
std::string without_loss_suffix(const std::string& text);

/// Parses "784-128relu-10": the input width, then each layer's units with an
/// optional "relu" suffix, then ":mse" for the squared error. The last layer
/// must have no activation.
expected<model_spec> parse_model_spec(const std::string& text);

/// Formats a spec back into the text parse_model_spec reads.
std::string to_string(const model_spec& spec);

/// Hashes the spec's text (FNV-1a 64) so peers can check they train one model.
uint64_t fingerprint(const model_spec& spec);

/// Hashes bytes with FNV-1a 64.
uint64_t fnv1a64(const void* data, size_t size, uint64_t seed = 14695981039346656037ull);

} // namespace troupe::detail
