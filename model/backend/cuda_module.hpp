// The CUDA backend as a module loaded at run time (libtroupe_cuda, built
// whenever nvcc is found): libtroupe and every program start and train on
// a host without CUDA's libraries, and the first cuda:N device asked for
// loads it, or says why it cannot.
#pragma once

#include <memory>
#include <string>

#include <troupe/model.hpp>

#include "common/expected.hpp"
#include "model/backend/backend.hpp"
#include "model/layers/layer_spec.hpp"

namespace troupe::detail {

/// What the module gives: its entry points, as plain function pointers.
struct cuda_module {
  // A backend on CUDA device `index` (make_cuda_backend).
  expected<std::unique_ptr<backend>> (*make_backend)(int index);
  // `spec`'s stack on device `index`, initialized by `reference` (the host's).
  expected<std::unique_ptr<model>> (*make_layered_model)(const stack_spec& spec,
                                                         std::unique_ptr<model> reference,
                                                         int index);
};

/// The name of the entry point the module exports (extern "C"), which
/// returns its cuda_module.
constexpr const char* cuda_module_entry = "troupe_cuda_module_v1";

/// Tells whether this build made the module (nvcc was found).
bool cuda_module_built();

/// Loads the module once: next to the library or program that holds this
/// code, else by the dynamic linker's search path; later calls give the
/// first outcome. A build without it, or a module that does not load (its
/// CUDA libraries missing), is a device_error that says which and why.
expected<const cuda_module*> load_cuda_module();

} // namespace troupe::detail
