// The sequential builder: layers to Troupe's description text, then fit,
// evaluate and predict through the trained model.
#include <troupe/sequential.hpp>

#include <algorithm>

#include "model/layers/activations.hpp"
#include "model/layers/layer_spec.hpp"
#include "model/model_spec.hpp"

namespace troupe {

namespace {

model_error bad_layer(size_t index, const layer& l, const std::string& why) {
  return fail(model_errc::invalid_argument, "layer " + std::to_string(index) + " (" + l.kind
                                              + " " + std::to_string(l.units) + ", '"
                                              + l.activation + "'): " + why);
}

const char* const known_activations =
  "relu, tanh, sigmoid, leaky_relu, elu, gelu, linear, or softmax on the output";

// The activation's token suffix, or why it has none.
expected<std::string> activation_token(size_t i, const layer& l) {
  auto act = find_activation(l.activation);
  if (!act)
    return bad_layer(i, l, std::string("unknown activation (") + known_activations + ")");
  return std::string(activation_name(*act));
}

// A layer's token in a layered model's text (model/layers/layer_spec.hpp).
expected<std::string> layered_token(size_t i, const layer& l, bool last) {
  if (l.kind != "dense" && l.kind != "conv2d" && l.kind != "activation"
      && l.activation != "linear")
    return bad_layer(i, l, "takes no activation");
  if (last && l.kind == "dense")
    return l.activation == "softmax" || l.activation == "linear"
             ? expected<std::string>(std::to_string(l.units))
             : bad_layer(i, l, "the output layer takes softmax (or linear: logits)");
  auto act = activation_token(i, l);
  if (!act)
    return act;
  if (l.kind == "conv2d" && l.padding != "valid" && l.padding != "same")
    return bad_layer(i, l, "padding '" + l.padding + "' is not valid or same");
  if (l.kind == "conv2d")
    return "conv" + std::to_string(l.units) + "k" + std::to_string(l.size)
           + (l.strides != 1 ? "s" + std::to_string(l.strides) : "")
           + (l.padding == "same" ? "same" : "") + *act;
  if (l.kind == "activation")
    return act->empty() ? bad_layer(i, l, "an activation layer needs an activation") : act;
  if (l.kind == "max_pool2d" || l.kind == "average_pool2d")
    return (l.kind == "max_pool2d" ? "maxpool" : "avgpool") + std::to_string(l.size);
  if (l.kind == "global_average_pool2d")
    return std::string("globalavgpool");
  if (l.kind == "flatten")
    return std::string("flatten");
  if (l.kind == "layer_normalization")
    return std::string("layernorm");
  if (l.kind == "custom")
    return "@" + l.name + (l.settings.empty() ? "" : "(" + l.settings + ")");
  if (l.kind == "dropout")
    return "dropout" + std::to_string(l.rate);
  if (l.kind != "dense")
    return bad_layer(i, l, "unknown kind (dense, conv2d, max_pool2d, average_pool2d, "
                           "global_average_pool2d, flatten, dropout, activation, "
                           "layer_normalization, custom)");
  return std::to_string(l.units) + *act;
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
           && l.kind != "custom" && l.kind != "layer_normalization";
  });
  if (input_shape_.size() != 3 && (spatial || !input_shape_.empty()))
    return fail(model_errc::invalid_argument,
                "a stack with conv2d, pooling or flatten takes an input shape "
                "(height, width, channels)");
  const std::vector<int> shape = input_shape_.empty() ? std::vector<int>{1, 1, inputs_}
                                                      : input_shape_;
  if (squared_error())
    return fail(model_errc::invalid_argument,
                "a stack beyond dense layers with relu trains with "
                "sparse_categorical_crossentropy");
  std::string text = std::to_string(shape[0]) + "x" + std::to_string(shape[1]) + "x"
                     + std::to_string(shape[2]);
  for (size_t i = 0; i < layers_.size(); ++i) {
    auto token = layered_token(i, layers_[i], i + 1 == layers_.size());
    if (!token)
      return token.error();
    text += "-" + *token;
  }
  auto spec = parse_stack_spec(text);
  if (!spec)
    return spec.error();
  return to_string(*spec);
}

expected<std::string> sequential::description() const {
  if (layers_.empty())
    return fail(model_errc::invalid_argument, "a sequential model needs at least one layer");
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
    return fail(model_errc::invalid_argument,
                "loss '" + loss_ + "': a sequential model trains with "
                  "sparse_categorical_crossentropy (class labels) or mse (float targets)");
  for (const auto& metric : metrics_)
    if (metric == "accuracy" && squared_error())
      return fail(model_errc::invalid_argument,
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
    return fail(model_errc::invalid_argument, what + ": the model is not trained (fit it first)");
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
