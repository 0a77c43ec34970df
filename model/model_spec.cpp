// Parsing, printing and fingerprinting of model_spec.
#include "model/model_spec.hpp"

#include <algorithm>
#include <cctype>
#include <sstream>

namespace troupe::detail {

namespace {

constexpr int max_width = 1 << 20;

expected<int> parse_width(const std::string& text, const std::string& whole) {
  if (text.empty() || text.size() > 7
      || !std::all_of(text.begin(), text.end(),
                      [](unsigned char c) { return std::isdigit(c) != 0; }))
    return fail(errc::invalid_argument,
                "model '" + whole + "': '" + text + "' is not a layer width");
  int width = std::stoi(text);
  if (width <= 0 || width > max_width)
    return fail(errc::invalid_argument,
                "model '" + whole + "': width " + text + " is out of range 1.."
                  + std::to_string(max_width));
  return width;
}

} // namespace

int model_spec::widest() const {
  int widest = inputs;
  for (const auto& layer : layers)
    widest = std::max(widest, layer.units);
  return widest;
}

std::string without_loss_suffix(const std::string& text) {
  const std::string mse = squared_error_suffix;
  const bool suffixed =
    text.size() > mse.size() && text.compare(text.size() - mse.size(), mse.size(), mse) == 0;
  return suffixed ? text.substr(0, text.size() - mse.size()) : text;
}

expected<model_spec> parse_model_spec(const std::string& whole) {
  const std::string text = without_loss_suffix(whole);
  const bool squared_error = text.size() != whole.size();
  std::vector<std::string> parts;
  std::stringstream stream(text);
  for (std::string part; std::getline(stream, part, '-');)
    parts.push_back(part);
  if (parts.size() < 2 || text.back() == '-')
    return fail(errc::invalid_argument,
                "model '" + text + "': expected INPUTS-UNITS[relu]-...-CLASSES, e.g. 784-128relu-10");
  model_spec spec;
  auto inputs = parse_width(parts[0], text);
  if (!inputs)
    return inputs.error();
  spec.inputs = *inputs;
  for (size_t i = 1; i < parts.size(); ++i) {
    dense_spec layer;
    std::string width = parts[i];
    const std::string relu = "relu";
    if (width.size() > relu.size()
        && width.compare(width.size() - relu.size(), relu.size(), relu) == 0) {
      layer.act = activation::relu;
      width.resize(width.size() - relu.size());
    }
    auto units = parse_width(width, text);
    if (!units)
      return units.error();
    layer.units = *units;
    spec.layers.push_back(layer);
  }
  if (spec.layers.back().act != activation::none)
    return fail(errc::invalid_argument,
                "model '" + text + "': the last layer gives logits and takes no activation");
  spec.loss = squared_error ? loss_kind::squared_error : loss_kind::softmax_cross_entropy;
  if (!squared_error && spec.classes() < 2)
    return fail(errc::invalid_argument,
                "model '" + text + "': the last layer needs at least 2 classes");
  return spec;
}

std::string to_string(const model_spec& spec) {
  std::string text = std::to_string(spec.inputs);
  for (const auto& layer : spec.layers) {
    text += '-';
    text += std::to_string(layer.units);
    if (layer.act == activation::relu)
      text += "relu";
  }
  if (spec.loss == loss_kind::squared_error)
    text += squared_error_suffix;
  return text;
}

uint64_t fnv1a64(const void* data, size_t size, uint64_t seed) {
  auto bytes = static_cast<const unsigned char*>(data);
  uint64_t hash = seed;
  for (size_t i = 0; i < size; ++i) {
    hash ^= bytes[i];
    hash *= 1099511628211ull;
  }
  return hash;
}

uint64_t fingerprint(const model_spec& spec) {
  auto text = to_string(spec);
  return fnv1a64(text.data(), text.size());
}

} // namespace troupe::detail
