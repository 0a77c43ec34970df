// The registry of named models, and make_model over it and the built-in MLP.
#include "model/model_registry.hpp"

#include <algorithm>

#include "common/named_registry.hpp"

#include "model/model_description.hpp"

namespace troupe::detail {

namespace {

named_registry<model_factory>& table() {
  static named_registry<model_factory> instance;
  return instance;
}

} // namespace

std::optional<model_factory> find_model_factory(const std::string& name) {
  return table().find(name);
}


} // namespace troupe::detail

namespace troupe {

using namespace detail;

void register_model(const std::string& name, model_factory factory) {
  table().put(name, std::move(factory));
}

std::vector<std::string> registered_models() {
  auto names = table().names();
  std::sort(names.begin(), names.end());
  return names;
}

expected<std::unique_ptr<model>> make_model(const std::string& description) {
  auto resolved = model_description::resolve(description);
  if (!resolved)
    return resolved.error();
  return resolved->instantiate();
}

} // namespace troupe
