// The sequential builder: layers to Troupe's description text, then fit,
// evaluate and predict through the trained model.
#include <troupe/sequential.hpp>

#include <algorithm>
#include <optional>
#include <utility>

#include "model/layers/activations.hpp"
#include "model/layers/layer_spec.hpp"
#include "model/model_spec.hpp"

namespace troupe {

using namespace detail;

namespace {

error bad_layer(size_t index, const layer& l, const std::string& why) {
  return fail(errc::invalid_argument, "layer " + std::to_string(index) + " (" + l.kind
                                              + " " + std::to_string(l.units) + ", '"
                                              + l.activation + "'): " + why);
}

const char* const known_activations =
  "relu, tanh, sigmoid, leaky_relu, elu, gelu, linear, or softmax on the output";

// The activation a layer names, or why it names none Troupe knows.
expected<activation_kind> activation_of(size_t i, const layer& l) {
  auto act = find_activation(l.activation);
  if (!act)
    return bad_layer(i, l, std::string("unknown activation (") + known_activations + ")");
  return *act;
}

// The kinds of layer_spec.hpp, by the names `layer::kind` gives them.
std::optional<layer_kind> kind_of(const std::string& name) {
  static const std::pair<const char*, layer_kind> kinds[] = {
    {"dense", layer_kind::dense},
    {"conv2d", layer_kind::conv2d},
    {"max_pool2d", layer_kind::max_pool2d},
    {"average_pool2d", layer_kind::average_pool2d},
    {"global_average_pool2d", layer_kind::global_average_pool2d},
    {"flatten", layer_kind::flatten},
    {"dropout", layer_kind::dropout},
    {"activation", layer_kind::activation},
    {"layer_normalization", layer_kind::layer_normalization},
    {"batch_normalization", layer_kind::batch_normalization},
    {"custom", layer_kind::custom}};
  for (const auto& [known, kind] : kinds)
    if (name == known)
      return kind;
  return std::nullopt;
}

// A layer as layer_spec.hpp describes it, or why it is none.
expected<layer_spec> spec_of(size_t i, const layer& l, bool last) {
  auto kind = kind_of(l.kind);
  if (!kind)
    return bad_layer(i, l, "unknown kind (dense, conv2d, max_pool2d, average_pool2d, "
                           "global_average_pool2d, flatten, dropout, activation, "
                           "layer_normalization, batch_normalization, custom)");
  const bool activated = *kind == layer_kind::dense || *kind == layer_kind::conv2d
                         || *kind == layer_kind::activation;
  if (!activated && l.activation != "linear")
    return bad_layer(i, l, "takes no activation");
  const bool output = last && *kind == layer_kind::dense;
  if (output && l.activation != "softmax" && l.activation != "linear")
    return bad_layer(i, l, "the output layer takes softmax (or linear: logits)");
  auto act = output ? expected<activation_kind>(activation_kind::none) : activation_of(i, l);
  if (!act)
    return act.error();
  if (*kind == layer_kind::activation && *act == activation_kind::none)
    return bad_layer(i, l, "an activation layer needs an activation");
  if (*kind == layer_kind::conv2d && l.padding != "valid" && l.padding != "same")
    return bad_layer(i, l, "padding '" + l.padding + "' is not valid or same");
  layer_spec spec;
  spec.kind = *kind;
  spec.units = l.units;
  spec.kernel = l.size;
  spec.stride = *kind == layer_kind::conv2d ? l.strides : 1;
  spec.same = l.padding == "same";
  spec.act = *act;
  spec.rate = l.rate;
  spec.name = l.name;
  spec.settings = l.settings;
  return spec;
}

} // namespace

sequential::sequential(int inputs, std::vector<layer> layers)
  : inputs_(inputs), layers_(std::move(layers)) {}

sequential::sequential(std::vector<int> input_shape, std::vector<layer> layers)
  : inputs_(0), input_shape_(std::move(input_shape)), layers_(std::move(layers)) {}

// A stack beyond the MLP's dense layers with relu: an image input, another
// kind of layer or another activation.
bool sequential::layered() const {
  return !input_shape_.empty()
         || std::any_of(layers_.begin(), layers_.end(), [](const layer& l) {
              return l.kind != "dense"
                     || (l.activation != "relu" && l.activation != "linear"
                         && l.activation != "softmax");
            });
}

expected<std::string> sequential::layered_description() const {
  const bool spatial = std::any_of(layers_.begin(), layers_.end(), [](const layer& l) {
    return l.kind != "dense" && l.kind != "dropout" && l.kind != "activation"
           && l.kind != "custom" && l.kind != "layer_normalization"
           && l.kind != "batch_normalization";
  });
  if (input_shape_.size() != 3 && (spatial || !input_shape_.empty()))
    return fail(errc::invalid_argument,
                "a stack with conv2d, pooling or flatten takes an input shape "
                "(height, width, channels)");
  const std::vector<int> shape = input_shape_.empty() ? std::vector<int>{1, 1, inputs_}
                                                      : input_shape_;
  if (squared_error())
    return fail(errc::invalid_argument,
                "a stack beyond dense layers with relu trains with "
                "sparse_categorical_crossentropy");
  stack_spec stack;
  stack.input = tensor_shape{shape[0], shape[1], shape[2]};
  for (size_t i = 0; i < layers_.size(); ++i) {
    auto spec = spec_of(i, layers_[i], i + 1 == layers_.size());
    if (!spec)
      return spec.error();
    stack.layers.push_back(std::move(*spec));
  }
  // Parsed back, so that the shapes are checked and named as for --model.
  const std::string text = to_string(stack);
  auto spec = parse_stack_spec(text);
  if (!spec)
    return spec.error();
  return to_string(*spec);
}

expected<std::string> sequential::description() const {
  if (layers_.empty())
    return fail(errc::invalid_argument, "a sequential model needs at least one layer");
  if (layered())
    return layered_description();
  std::string text = std::to_string(inputs_);
  for (size_t i = 0; i < layers_.size(); ++i) {
    const layer& l = layers_[i];
    const bool last = i + 1 == layers_.size();
    text += "-" + std::to_string(l.units);
    if (l.activation == "relu" && !last)
      text += "relu";
    else if (l.activation == "softmax" && !last)
      return bad_layer(i, l, "softmax is built in for the output layer only");
    else if (l.activation != "linear" && l.activation != "softmax" && l.activation != "relu")
      return bad_layer(i, l, "unknown activation (relu, linear, or softmax on the output)");
    else if (last && l.activation == "relu")
      return bad_layer(i, l, "the output layer takes softmax (or linear: logits)");
    else if (last && squared_error() && l.activation == "softmax")
      return bad_layer(i, l, "a model trained with mse gives values: a linear output layer");
  }
  if (squared_error())
    text += ":mse";
  auto spec = parse_model_spec(text);
  if (!spec)
    return spec.error();
  return to_string(*spec);
}

sequential& sequential::compile(optimizer_config optimizer, std::string loss,
                                std::vector<std::string> metrics) {
  optimizer_ = std::move(optimizer);
  loss_ = std::move(loss);
  metrics_ = std::move(metrics);
  return *this;
}

bool sequential::squared_error() const {
  return loss_ == "mse" || loss_ == "mean_squared_error";
}

status sequential::check_compiled() const {
  if (loss_ != "sparse_categorical_crossentropy" && !squared_error())
    return fail(errc::invalid_argument,
                "loss '" + loss_ + "': a sequential model trains with "
                  "sparse_categorical_crossentropy (class labels) or mse (float targets)");
  for (const auto& metric : metrics_)
    if (metric == "accuracy" && squared_error())
      return fail(errc::invalid_argument,
                  "metric 'accuracy' scores a classifier: a model trained with mse reports "
                  "its loss and, asked for, mae or mse");
  return {};
}

// The compiled metrics beyond accuracy, as --extra-metrics lists them (Keras's
// "sparse_top_k_categorical_accuracy" is its k = 5).
std::string sequential::extra_metrics() const {
  std::string list;
  for (const auto& metric : metrics_) {
    if (metric == "accuracy")
      continue;
    const bool keras_top_k = metric == "sparse_top_k_categorical_accuracy";
    list += (list.empty() ? "" : ",") + (keras_top_k ? std::string("top_5_accuracy") : metric);
  }
  return list;
}

expected<history> sequential::fit(const dataset& train, const dataset& validation,
                                  const fit_options& options) {
  return fit(in_memory(train), in_memory(validation), options);
}

expected<history> sequential::fit(std::shared_ptr<const data_source> train,
                                  std::shared_ptr<const data_source> validation,
                                  const fit_options& options) {
  if (auto compiled = check_compiled(); !compiled)
    return compiled.error();
  auto text = description();
  if (!text)
    return text.error();
  fit_options with_metrics = options;
  if (const auto compiled = extra_metrics(); !compiled.empty() && !options.has("extra-metrics"))
    with_metrics.extra_metrics(compiled);
  auto result =
    troupe::fit(*text, optimizer_, std::move(train), std::move(validation), with_metrics);
  if (result)
    trained_ = result->model;
  return result;
}

status sequential::check_trained(const std::string& what) const {
  if (trained_.parameters().empty())
    return fail(errc::invalid_argument, what + ": the model is not trained (fit it first)");
  return {};
}

expected<evaluation> sequential::evaluate(const data_source& data) const {
  if (auto trained = check_trained("evaluate"); !trained)
    return trained.error();
  return trained_.evaluate(data);
}

expected<evaluation> sequential::evaluate(const dataset& data) const {
  if (auto trained = check_trained("evaluate"); !trained)
    return trained.error();
  return trained_.evaluate(data);
}

expected<std::vector<float>> sequential::predict(const data_source& data) const {
  if (auto trained = check_trained("predict"); !trained)
    return trained.error();
  return trained_.predict(data);
}

expected<std::vector<float>> sequential::predict(const dataset& data) const {
  if (auto trained = check_trained("predict"); !trained)
    return trained.error();
  return trained_.predict(data);
}

} // namespace troupe
