// The registry of named models, and make_model over it and the built-in MLP.
#include "model/model_registry.hpp"

#include <map>
#include <mutex>

#include "model/model_description.hpp"

namespace troupe {

namespace {

struct model_table {
  std::mutex lock;
  std::map<std::string, model_factory> factories;
};

model_table& table() {
  static model_table instance;
  return instance;
}

} // namespace

void register_model(const std::string& name, model_factory factory) {
  auto& t = table();
  std::lock_guard<std::mutex> guard(t.lock);
  t.factories[name] = std::move(factory);
}

std::vector<std::string> registered_models() {
  auto& t = table();
  std::lock_guard<std::mutex> guard(t.lock);
  std::vector<std::string> names;
  for (const auto& entry : t.factories)
    names.push_back(entry.first);
  return names;
}

std::optional<model_factory> find_model_factory(const std::string& name) {
  auto& t = table();
  std::lock_guard<std::mutex> guard(t.lock);
  auto found = t.factories.find(name);
  if (found == t.factories.end())
    return std::nullopt;
  return found->second;
}

expected<std::unique_ptr<model>> make_model(const std::string& description) {
  auto resolved = model_description::resolve(description);
  if (!resolved)
    return resolved.error();
  return resolved->instantiate();
}

} // namespace troupe
