// Reading and writing a layered model's text, with its shapes checked.
#include "model/layers/layer_spec.hpp"

#include <cctype>
#include <cstdlib>
#include <algorithm>
#include <optional>

#include "model/layers/layer_ops.hpp"

namespace troupe::detail {

namespace {

// Reads a positive integer at `pos`, moving past it.
std::optional<int> read_count(const std::string& token, size_t& pos) {
  size_t end = pos;
  while (end < token.size() && std::isdigit(static_cast<unsigned char>(token[end])) != 0)
    ++end;
  if (end == pos || end - pos > 7)
    return std::nullopt;
  const int value = std::atoi(token.substr(pos, end - pos).c_str());
  pos = end;
  return value > 0 ? std::optional<int>(value) : std::nullopt;
}

bool read_literal(const std::string& token, size_t& pos, const char* literal) {
  const std::string text = literal;
  if (token.compare(pos, text.size(), text) != 0)
    return false;
  pos += text.size();
  return true;
}

std::optional<tensor_shape> parse_shape(const std::string& token) {
  size_t pos = 0;
  auto h = read_count(token, pos);
  if (!h || !read_literal(token, pos, "x"))
    return std::nullopt;
  auto w = read_count(token, pos);
  if (!w || !read_literal(token, pos, "x"))
    return std::nullopt;
  auto c = read_count(token, pos);
  if (!c || pos != token.size())
    return std::nullopt;
  return tensor_shape{*h, *w, *c};
}

// One layer's token, its syntax alone.
// "@name" or "@name(settings)": a registered layer's token.
std::optional<layer_spec> parse_custom(const std::string& token) {
  layer_spec l;
  l.kind = layer_kind::custom;
  const size_t open = token.find('(');
  l.name = token.substr(1, open == std::string::npos ? std::string::npos : open - 1);
  if (open != std::string::npos) {
    if (token.back() != ')')
      return std::nullopt;
    l.settings = token.substr(open + 1, token.size() - open - 2);
  }
  const bool named = !l.name.empty() && std::all_of(l.name.begin(), l.name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
  });
  return named ? std::optional<layer_spec>(l) : std::nullopt;
}

// Reads a convolution's "kK[sS][same]" after its filter count into `l`.
bool read_convolution(const std::string& token, size_t& pos, layer_spec& l) {
  l.kind = layer_kind::conv2d;
  auto kernel = read_literal(token, pos, "k") ? read_count(token, pos) : std::nullopt;
  if (!kernel)
    return false;
  l.kernel = *kernel;
  const bool strided = pos + 1 < token.size() && token[pos] == 's'
                       && std::isdigit(static_cast<unsigned char>(token[pos + 1])) != 0;
  if (strided && read_literal(token, pos, "s")) { // not the s of "sigmoid"
    auto stride = read_count(token, pos);
    if (!stride)
      return false;
    l.stride = *stride;
  }
  l.same = read_literal(token, pos, "same");
  return true;
}

std::optional<layer_spec> parse_layer(const std::string& token) {
  if (!token.empty() && token[0] == '@')
    return parse_custom(token);
  layer_spec l;
  size_t pos = 0;
  static const std::pair<const char*, layer_kind> bare[] = {
    {"flatten", layer_kind::flatten},
    {"globalavgpool", layer_kind::global_average_pool2d},
    {"layernorm", layer_kind::layer_normalization},
    {"batchnorm", layer_kind::batch_normalization}};
  for (const auto& [name, kind] : bare)
    if (token == name) {
      l.kind = kind;
      return l;
    }
  if (auto act = find_activation(token); act && !token.empty() && token != "linear") {
    l.kind = layer_kind::activation;
    l.act = *act;
    return l;
  }
  if (read_literal(token, pos, "dropout")) {
    char* end = nullptr;
    l.kind = layer_kind::dropout;
    l.rate = std::strtof(token.c_str() + pos, &end);
    if (end == token.c_str() + pos || *end != '\0')
      return std::nullopt;
    return l;
  }
  const bool average = read_literal(token, pos, "avgpool");
  if (average || read_literal(token, pos, "maxpool")) {
    l.kind = average ? layer_kind::average_pool2d : layer_kind::max_pool2d;
    auto pool = read_count(token, pos);
    if (!pool || pos != token.size())
      return std::nullopt;
    l.kernel = *pool;
    return l;
  }
  const bool conv = read_literal(token, pos, "conv");
  auto units = read_count(token, pos);
  if (!units)
    return std::nullopt;
  l.units = *units;
  if (conv && !read_convolution(token, pos, l))
    return std::nullopt;
  const std::string rest = token.substr(pos);
  auto act = find_activation(rest);
  if (!act || rest == "linear")
    return std::nullopt;
  l.act = *act;
  return l;
}

std::string layer_text(const layer_spec& l) {
  switch (l.kind) {
  case layer_kind::conv2d:
    return "conv" + std::to_string(l.units) + "k" + std::to_string(l.kernel) +
           (l.stride != 1 ? "s" + std::to_string(l.stride) : "") + (l.same ? "same" : "") +
           activation_name(l.act);
  case layer_kind::max_pool2d:
    return "maxpool" + std::to_string(l.kernel);
  case layer_kind::average_pool2d:
    return "avgpool" + std::to_string(l.kernel);
  case layer_kind::global_average_pool2d:
    return "globalavgpool";
  case layer_kind::flatten:
    return "flatten";
  case layer_kind::activation:
    return activation_name(l.act);
  case layer_kind::layer_normalization:
    return "layernorm";
  case layer_kind::batch_normalization:
    return "batchnorm";
  case layer_kind::dropout: {
    std::string rate = std::to_string(l.rate);
    while (rate.size() > 1 && rate.back() == '0')
      rate.pop_back();
    if (rate.back() == '.')
      rate.pop_back();
    return "dropout" + rate;
  }
  case layer_kind::custom:
    return "@" + l.name + (l.settings.empty() ? "" : "(" + l.settings + ")");
  case layer_kind::dense:
    break;
  }
  return std::to_string(l.units) + activation_name(l.act);
}

// A registered layer over `in`, or why there is none.
expected<std::unique_ptr<layer_op>> make_custom_layer(const layer_spec& l, tensor_shape in) {
  auto factory = find_layer_factory(l.name);
  if (!factory)
    return fail(errc::invalid_argument,
                "no layer is registered as '" + l.name + "' (register_layer)");
  auto op = (*factory)(l.settings, in);
  if (!op)
    return fail(op.error().code, "layer " + l.name + ": " + op.error().message);
  if (!*op || (*op)->output_shape().size() == 0)
    return fail(errc::invalid_argument,
                "layer " + l.name + ": its factory returned no layer, or one with no outputs");
  return std::move(*op);
}

// The shape after `l` over `in`, or why it does not fit.
expected<tensor_shape> shape_after(const layer_spec& l, tensor_shape in) {
  const auto refuse = [&](const std::string& why) -> expected<tensor_shape> {
    return fail(errc::invalid_argument, why + " (input " + in.text() + ")");
  };
  switch (l.kind) {
  case layer_kind::conv2d:
    if (!l.same && (l.kernel > in.height || l.kernel > in.width))
      return refuse("the kernel " + std::to_string(l.kernel) + "x" + std::to_string(l.kernel) +
                    " is larger than its input" +
                    (in.flat() ? ": a conv2d needs a spatial input, not a flat one" : ""));
    return tensor_shape{conv2d_output_side(in.height, l.kernel, l.stride, l.same),
                        conv2d_output_side(in.width, l.kernel, l.stride, l.same), l.units};
  case layer_kind::global_average_pool2d:
    return tensor_shape{1, 1, in.channels};
  case layer_kind::activation:
  case layer_kind::layer_normalization:
  case layer_kind::batch_normalization:
    return in;
  case layer_kind::max_pool2d:
  case layer_kind::average_pool2d:
    if (l.kernel > in.height || l.kernel > in.width)
      return refuse("the pool " + std::to_string(l.kernel) + "x" + std::to_string(l.kernel) +
                    " is larger than its input");
    return tensor_shape{in.height / l.kernel, in.width / l.kernel, in.channels};
  case layer_kind::flatten:
    return tensor_shape{1, 1, static_cast<int>(in.size())};
  case layer_kind::dropout:
    if (!(l.rate >= 0.0f && l.rate < 1.0f))
      return refuse("the dropout rate " + std::to_string(l.rate) + " is outside [0, 1)");
    return in;
  case layer_kind::dense:
    if (!in.flat())
      return refuse("a dense layer needs a flat input: put a flatten before it");
    return tensor_shape{1, 1, l.units};
  case layer_kind::custom: {
    auto op = make_custom_layer(l, in);
    if (!op)
      return op.error();
    return (*op)->output_shape();
  }
  }
  return in;
}

// Splits at each '-' outside parentheses.
std::vector<std::string> split_tokens(const std::string& text) {
  std::vector<std::string> tokens{""};
  int depth = 0;
  for (char c : text) {
    depth += c == '(' ? 1 : c == ')' ? -1 : 0;
    if (c == '-' && depth == 0)
      tokens.emplace_back();
    else
      tokens.back() += c;
  }
  return tokens;
}

} // namespace

bool names_layered_model(const std::string& text) {
  const auto dash = text.find('-');
  const std::string first = text.substr(0, dash);
  return !first.empty() && std::isdigit(static_cast<unsigned char>(first[0])) != 0 &&
         first.find('x') != std::string::npos;
}

expected<stack_spec> parse_stack_spec(const std::string& text) {
  const std::vector<std::string> tokens = split_tokens(text);
  stack_spec spec;
  auto input = parse_shape(tokens.front());
  if (!input)
    return fail(errc::invalid_argument, "model " + text + ": the input '" +
                                                tokens.front() + "' is not HxWxC");
  spec.input = *input;
  tensor_shape shape = spec.input;
  for (size_t i = 1; i < tokens.size(); ++i) {
    const std::string where =
      "model " + text + ": layer " + std::to_string(i - 1) + " ('" + tokens[i] + "')";
    auto l = parse_layer(tokens[i]);
    if (!l)
      return fail(errc::invalid_argument,
                  where + " is not convFkK[sS][ACT], maxpoolP, avgpoolP, globalavgpool, "
                          "flatten, dropoutR, layernorm, batchnorm, ACT or UNITS[ACT] (ACT: relu, tanh, sigmoid, "
                          "leaky_relu, elu, gelu)");
    auto next = shape_after(*l, shape);
    if (!next)
      return fail(next.error().code, where + ": " + next.error().message);
    spec.layers.push_back(*l);
    shape = *next;
  }
  if (spec.layers.empty() || spec.layers.back().kind != layer_kind::dense ||
      spec.layers.back().act != activation_kind::none)
    return fail(errc::invalid_argument,
                "model " + text + ": the last layer must be a dense layer without an "
                                  "activation (its outputs are the logits of a softmax)");
  return spec;
}

std::string to_string(const stack_spec& spec) {
  std::string text = spec.input.text();
  for (const auto& l : spec.layers)
    text += "-" + layer_text(l);
  return text;
}

expected<std::vector<std::unique_ptr<layer_op>>> make_layer_ops(const stack_spec& spec) {
  std::vector<std::unique_ptr<layer_op>> ops;
  tensor_shape shape = spec.input;
  for (const auto& l : spec.layers) {
    switch (l.kind) {
    case layer_kind::custom: {
      auto op = make_custom_layer(l, shape);
      if (!op)
        return op.error();
      ops.push_back(std::move(*op));
      break;
    }
    case layer_kind::conv2d:
      ops.push_back(make_conv2d(shape, l.units, l.kernel, l.stride, l.same, l.act));
      break;
    case layer_kind::max_pool2d:
      ops.push_back(make_max_pool2d(shape, l.kernel));
      break;
    case layer_kind::average_pool2d:
      ops.push_back(make_average_pool2d(shape, l.kernel));
      break;
    case layer_kind::global_average_pool2d:
      ops.push_back(make_global_average_pool2d(shape));
      break;
    case layer_kind::activation:
      ops.push_back(make_activation(shape, l.act));
      break;
    case layer_kind::layer_normalization:
      ops.push_back(make_layer_normalization(shape));
      break;
    case layer_kind::batch_normalization:
      ops.push_back(make_batch_normalization(shape));
      break;
    case layer_kind::flatten:
      ops.push_back(make_flatten(shape));
      break;
    case layer_kind::dropout:
      ops.push_back(make_dropout(shape, l.rate));
      break;
    case layer_kind::dense:
      ops.push_back(make_dense(shape, l.units, l.act));
      break;
    }
    shape = ops.back()->output_shape();
  }
  return ops;
}

} // namespace troupe::detail
