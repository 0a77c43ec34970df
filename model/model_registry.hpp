// The process-wide table of models registered by name (troupe::register_model).
#pragma once

#include <optional>
#include <string>

#include <troupe/model.hpp>

namespace troupe::detail {

/// Returns the factory registered under `name`, if any.
std::optional<model_factory> find_model_factory(const std::string& name);

} // namespace troupe::detail
