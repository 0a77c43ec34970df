// Builds a layered model on a named device: the host's layered_model on
// "cpu", the layers' CUDA twins on "cuda:N" in a build with the CUDA backend.
#pragma once

#include <memory>
#include <string>

#include <troupe/model.hpp>

#include "common/expected.hpp"

namespace troupe::detail {

/// Builds the layered model `text` describes (layer_spec.hpp) to compute on
/// `device`: "cpu" or "cuda:N". On CUDA it keeps its parameters, activations
/// and scratch on the device and copies each call's parameters and batch in
/// and its results out. Fails when the text does not parse, the device
/// cannot be opened, this build has no CUDA backend, or a layer (named by its
/// index and token) has no CUDA implementation.
expected<std::unique_ptr<model>> make_layered_model_on(const std::string& text,
                                                       const std::string& device);

/// Says why the layered model `text` cannot compute on `device` (a device
/// that is not cpu or cuda:N, a build without CUDA, a layer without a CUDA
/// implementation, named by its index and token), without opening the
/// device; an empty string when it can.
std::string refuse_layered_device(const std::string& text, const std::string& device);

} // namespace troupe::detail
