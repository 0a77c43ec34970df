// One layer of a layered model (model/layers/layered_model.hpp): the public
// interface (<troupe/layer.hpp>) the built-in layers implement, and the
// registry of layers of one's own.
#pragma once

#include <optional>
#include <string>

#include <troupe/layer.hpp>

namespace troupe::detail {

/// Returns the factory registered under `name`, if any.
std::optional<layer_factory> find_layer_factory(const std::string& name);

} // namespace troupe::detail
