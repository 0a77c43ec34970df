// The backend factory: the one place that knows which backends were built.
#include <string>

#include "common/named_registry.hpp"
#include "model/backend/backend.hpp"
#include "model/backend/cpu/eigen_backend.hpp"
#include "model/backend/cuda_module.hpp"

namespace troupe::detail {

namespace {

named_registry<device_factory>& extra_kinds() {
  static named_registry<device_factory> kinds;
  return kinds;
}

// The factory of a registered kind that `device` ("kind:N") names, and N.
std::pair<device_factory, int> registered_kind(const std::string& device) {
  const auto colon = device.find(':');
  if (colon == std::string::npos || colon + 1 == device.size() || device.size() - colon > 5
      || device.find_first_not_of("0123456789", colon + 1) != std::string::npos)
    return {};
  auto found = extra_kinds().find(device.substr(0, colon));
  if (!found)
    return {};
  return {*found, std::stoi(device.substr(colon + 1))};
}

} // namespace

void register_device_kind(const std::string& kind, device_factory factory) {
  extra_kinds().put(kind, std::move(factory));
}

std::string device_kind(const std::string& device) {
  return device.substr(0, device.find(':'));
}

bool names_a_device(const std::string& device) {
  return device == "cpu" || device.rfind("cuda:", 0) == 0 || registered_kind(device).first;
}

expected<std::unique_ptr<backend>> make_backend(const std::string& device) {
  if (device == "cpu")
    return make_eigen_backend();
  if (auto [factory, index] = registered_kind(device); factory)
    return factory(index);
  const std::string cuda_prefix = "cuda:";
  if (device.compare(0, cuda_prefix.size(), cuda_prefix) == 0) {
    const std::string index_text = device.substr(cuda_prefix.size());
    if (index_text.empty() || index_text.size() > 4
        || index_text.find_first_not_of("0123456789") != std::string::npos)
      return fail(errc::invalid_argument,
                  "device '" + device + "': expected cuda:N with N a device index");
    auto cuda = load_cuda_module();
    if (!cuda)
      return fail(errc::device, "device '" + device + "': " + cuda.error().message);
    return (*cuda)->make_backend(std::stoi(index_text));
  }
  return fail(errc::invalid_argument,
              "unknown device '" + device + "' (expected cpu or cuda:N)");
}

} // namespace troupe::detail
