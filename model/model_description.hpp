// What the runtime knows of the model a run trains, resolved from the run's
// model description: the built-in sequential MLP ("784-128relu-10"), which
// the backends' kernels run, or a model registered by name (troupe::model),
// which computes on the host. Nothing else in the runtime asks which it is.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <troupe/model.hpp>

#include "common/expected.hpp"
#include "model/data/dataset.hpp"
#include "model/model_spec.hpp"

namespace troupe::detail {

/// Holds a resolved model description and answers for its model.
class model_description {
public:
  /// Resolves "784-128relu-10" (built-in), a layered model's text
  /// ("28x28x1-conv32k3relu-maxpool2-flatten-10", on the host) or
  /// "name[:settings]" (registered).
  static expected<model_description> resolve(const std::string& text);

  /// Returns the built-in model's spec, or null for a registered model.
  const model_spec* builtin() const { return spec_ ? &*spec_ : nullptr; }

  /// Returns the description in its one spelling ("784-128relu-10").
  const std::string& text() const { return text_; }

  size_t parameter_count() const { return parameter_count_; }
  int inputs() const { return inputs_; }
  int classes() const { return classes_; }

  /// Says why the model cannot compute on `device` (a registered model, or a
  /// built-in one trained with the squared error, computes on the host only;
  /// a layered model on cpu or cuda:N), or nothing when it can.
  std::string refuse_device(const std::string& device) const;

  /// Builds a fresh instance that computes on `device` (layered models; any
  /// other model computes where instantiate() builds it).
  expected<std::unique_ptr<model>> instantiate_on(const std::string& device) const;

  /// Tells whether it is a layered model (a description such as
  /// "28x28x1-conv32k3relu-..."), which computes on cpu or cuda:N
  /// (model/layers/layered_model_on.hpp).
  bool layered() const { return layered_; }

  /// Tells whether the model trains on sample weights (class weights): the
  /// built-in cross-entropy model does, a registered one where it says so.
  bool honours_sample_weights() const { return honours_sample_weights_; }

  /// Returns the spans of its parameters that are state the store averages
  /// rather than optimizes (model::state_spans), in order.
  const std::vector<parameter_span>& state_spans() const { return state_spans_; }

  /// Builds a fresh instance: each replica computes on its own.
  expected<std::unique_ptr<model>> instantiate() const;

  /// Returns the initial parameters drawn from `seed`.
  std::vector<float> initial_parameters(uint64_t seed) const;

  /// Hashes what must agree between processes: the description, the shape
  /// and, for a registered model, the initial parameters of a fixed seed
  /// (so that two builds of a same-named model that differ are told apart).
  uint64_t fingerprint() const { return fingerprint_; }

private:
  std::string text_;
  std::optional<model_spec> spec_;
  std::string name_;      // registered: the name before ':'
  std::string settings_;  // registered: the text after ':'
  size_t parameter_count_ = 0;
  int inputs_ = 0;
  int classes_ = 0;
  uint64_t fingerprint_ = 0;
  bool honours_sample_weights_ = false;
  std::vector<parameter_span> state_spans_;
  bool layered_ = false; // a layered model's text (model/layers/layer_spec.hpp)
};

/// Tells whether `text` describes the built-in model (it starts with its
/// input width) rather than a registered one.
bool names_builtin_model(const std::string& text);

/// Checks that a model's input width and outputs fit `data` (every label is
/// one of its outputs); the error names the `role` set ("training" or
/// "test"), its source and the first sample that does not fit.
status check_model_fits(const model_description& model, const data_source& data,
                        const std::string& role = "training");

} // namespace troupe::detail
