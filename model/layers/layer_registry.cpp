// The process-wide table of layers registered by name (troupe::register_layer).
#include "model/layers/layer.hpp"

#include <map>
#include <mutex>

namespace troupe {

namespace {

struct layer_table {
  std::mutex mutex;
  std::map<std::string, layer_factory> factories;
};

layer_table& table() {
  static layer_table instance;
  return instance;
}

} // namespace

std::string tensor_shape::text() const {
  return std::to_string(height) + "x" + std::to_string(width) + "x" + std::to_string(channels);
}

void register_layer(const std::string& name, layer_factory factory) {
  auto& t = table();
  std::lock_guard<std::mutex> lock{t.mutex};
  t.factories[name] = std::move(factory);
}

std::optional<layer_factory> find_layer_factory(const std::string& name) {
  auto& t = table();
  std::lock_guard<std::mutex> lock{t.mutex};
  auto found = t.factories.find(name);
  if (found == t.factories.end())
    return std::nullopt;
  return found->second;
}

} // namespace troupe
