// The one place a layered model chooses between the host and CUDA.
#include "model/layers/layered_model_on.hpp"

#include "model/layers/layer_spec.hpp"
#include "model/layers/layered_model.hpp"

#include "model/backend/cuda_module.hpp"
#include "model/layers/cuda_twins.hpp"

namespace troupe::detail {

namespace {

// The index N of "cuda:N", or -1.
int cuda_index(const std::string& device) {
  const std::string prefix = "cuda:";
  if (device.compare(0, prefix.size(), prefix) != 0)
    return -1;
  const std::string digits = device.substr(prefix.size());
  if (digits.empty() || digits.size() > 4 ||
      digits.find_first_not_of("0123456789") != std::string::npos)
    return -1;
  return std::stoi(digits);
}

// Why the stack cannot run on CUDA: its first layer without a twin, or nothing.
std::string refuse_cuda_layers(const std::string& text, const stack_spec& spec) {
  for (size_t i = 0; i < spec.layers.size(); ++i)
    if (!has_cuda_twin(spec.layers[i].kind)) {
      const stack_spec alone{spec.input, {spec.layers[i]}};
      const std::string token = to_string(alone).substr(spec.input.text().size() + 1);
      return "model " + text + ": layer " + std::to_string(i) + " ('" + token +
             "') has no CUDA implementation; run this model on cpu";
    }
  return {};
}

// The stack on CUDA device `index`: its layers checked first, then the module
// loaded (a stack it cannot run is refused without it).
expected<std::unique_ptr<model>> on_cuda(const std::string& text, const std::string& device,
                                         int index) {
  auto spec = parse_stack_spec(text);
  if (!spec)
    return spec.error();
  if (auto refused = refuse_cuda_layers(text, *spec); !refused.empty())
    return fail(errc::invalid_argument, refused);
  auto cuda = load_cuda_module();
  if (!cuda)
    return fail(errc::device, "device '" + device + "': " + cuda.error().message);
  auto reference = make_layered_model(text);
  if (!reference)
    return reference.error();
  return (*cuda)->make_layered_model(*spec, std::move(*reference), index);
}

} // namespace

expected<std::unique_ptr<model>> make_layered_model_on(const std::string& text,
                                                       const std::string& device) {
  if (device == "cpu")
    return make_layered_model(text);
  const int index = cuda_index(device);
  if (index < 0)
    return fail(errc::invalid_argument,
                "device '" + device + "': a layered model runs on cpu or cuda:N");
  return on_cuda(text, device, index);
}

std::string refuse_layered_device(const std::string& text, const std::string& device) {
  if (device == "cpu")
    return {};
  if (cuda_index(device) < 0)
    return "device '" + device + "': a layered model runs on cpu or cuda:N";
  if (!cuda_module_built())
    return "device '" + device + "': this build has no CUDA backend (configure with nvcc "
                                 "available and -DTROUPE_CUDA=ON)";
  auto spec = parse_stack_spec(text);
  if (!spec)
    return spec.error().message;
  return refuse_cuda_layers(text, *spec);
}

} // namespace troupe::detail
