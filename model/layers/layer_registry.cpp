// The process-wide table of layers registered by name (troupe::register_layer).
#include "model/layers/layer.hpp"

#include "common/named_registry.hpp"

namespace troupe::detail {

namespace {

named_registry<layer_factory>& table() {
  static named_registry<layer_factory> instance;
  return instance;
}

} // namespace

std::optional<layer_factory> find_layer_factory(const std::string& name) {
  return table().find(name);
}


} // namespace troupe::detail

namespace troupe {

using namespace detail;

std::string tensor_shape::text() const {
  return std::to_string(height) + "x" + std::to_string(width) + "x" + std::to_string(channels);
}

void register_layer(const std::string& name, layer_factory factory) {
  table().put(name, std::move(factory));
}

} // namespace troupe
