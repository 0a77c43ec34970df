// The module's one exported symbol: its entry points for libtroupe
// (model/backend/cuda_module.hpp), which loads it at run time.
#include "model/backend/cuda/cuda_backend.hpp"
#include "model/backend/cuda/cuda_layered_model.hpp"
#include "model/backend/cuda_module.hpp"

namespace troupe::detail {

namespace {

expected<std::unique_ptr<model>> layered_model(const stack_spec& spec,
                                               std::unique_ptr<model> reference, int index) {
  auto made = make_cuda_layered_model(spec, std::move(reference), index);
  if (!made)
    return made.error();
  return std::unique_ptr<model>(std::move(*made));
}

const cuda_module entry_points{make_cuda_backend, layered_model};

} // namespace

} // namespace troupe::detail

extern "C" __attribute__((visibility("default"))) const troupe::detail::cuda_module*
troupe_cuda_module_v1() {
  return &troupe::detail::entry_points;
}
