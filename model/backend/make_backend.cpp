// The backend factory: the one place that knows which backends were built.
#include <string>

#include "model/backend/backend.hpp"
#include "model/backend/cpu/eigen_backend.hpp"
#ifdef TROUPE_HAVE_CUDA
#  include "model/backend/cuda/cuda_backend.hpp"
#endif

namespace troupe {

expected<std::unique_ptr<backend>> make_backend(const std::string& device) {
  if (device == "cpu")
    return make_eigen_backend();
  const std::string cuda_prefix = "cuda:";
  if (device.compare(0, cuda_prefix.size(), cuda_prefix) == 0) {
    const std::string index_text = device.substr(cuda_prefix.size());
    if (index_text.empty() || index_text.size() > 4
        || index_text.find_first_not_of("0123456789") != std::string::npos)
      return fail(model_errc::invalid_argument,
                  "device '" + device + "': expected cuda:N with N a device index");
#ifdef TROUPE_HAVE_CUDA
    return make_cuda_backend(std::stoi(index_text));
#else
    return fail(model_errc::device_error,
                "device '" + device
                  + "': CUDA support was not built into Troupe (configure with "
                    "nvcc available and -DTROUPE_CUDA=ON)");
#endif
  }
  return fail(model_errc::invalid_argument,
              "unknown device '" + device + "' (expected cpu or cuda:N)");
}

} // namespace troupe
