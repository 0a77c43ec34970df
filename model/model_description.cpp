// Resolving a model description, and what follows from it.
#include "model/model_description.hpp"
#include "model/data/fit_check.hpp"

#include <cctype>

#include "model/builtin_model.hpp"
#include "model/layers/layered_model.hpp"
#include "model/model_registry.hpp"
#include "model/layers/layered_model_on.hpp"
#include "model/parameter_layout.hpp"

namespace troupe::detail {

namespace {

std::string known_models_text() {
  std::string known;
  for (const auto& name : registered_models())
    known += (known.empty() ? "" : ", ") + name;
  return known.empty() ? "none is registered" : "registered: " + known;
}

uint64_t registered_fingerprint(const std::string& text, model& instance) {
  uint64_t hash = fnv1a64(text.data(), text.size());
  const uint64_t shape[3] = {static_cast<uint64_t>(instance.inputs()),
                             static_cast<uint64_t>(instance.outputs()),
                             static_cast<uint64_t>(instance.parameter_count())};
  hash = fnv1a64(shape, sizeof shape, hash);
  std::vector<float> initial(instance.parameter_count());
  instance.initialize(0, initial.data());
  return fnv1a64(initial.data(), initial.size() * sizeof(float), hash);
}

// Says what is wrong with a model's state spans (out of its parameters, or
// out of order), or nothing.
std::string refuse_state_spans(const std::vector<parameter_span>& spans, size_t parameters) {
  size_t end = 0;
  for (const parameter_span& span : spans) {
    if (span.offset < end || span.count > parameters || span.offset > parameters - span.count)
      return "its state spans must lie in order within its " + std::to_string(parameters)
             + " parameters, and [" + std::to_string(span.offset) + ", "
             + std::to_string(span.offset + span.count) + ") does not";
    end = span.offset + span.count;
  }
  return {};
}

} // namespace

bool names_builtin_model(const std::string& text) {
  return !text.empty() && std::isdigit(static_cast<unsigned char>(text[0])) != 0;
}

expected<model_description> model_description::resolve(const std::string& text) {
  model_description d;
  if (names_layered_model(text)) {
    auto spec = parse_stack_spec(text);
    if (!spec)
      return spec.error();
    d.layered_ = true;
    d.text_ = to_string(*spec);
    auto instance = d.instantiate();
    if (!instance)
      return instance.error();
    d.parameter_count_ = (*instance)->parameter_count();
    d.inputs_ = (*instance)->inputs();
    d.classes_ = (*instance)->outputs();
    d.state_spans_ = (*instance)->state_spans();
    d.fingerprint_ = registered_fingerprint(d.text_, **instance);
    return d;
  }
  if (names_builtin_model(text)) {
    auto spec = parse_model_spec(text);
    if (!spec)
      return spec.error();
    d.text_ = to_string(*spec);
    d.parameter_count_ = parameter_layout(*spec).size();
    d.inputs_ = spec->inputs;
    d.classes_ = spec->classes();
    d.fingerprint_ = troupe::detail::fingerprint(*spec);
    d.honours_sample_weights_ = spec->loss == loss_kind::softmax_cross_entropy;
    d.spec_ = std::move(*spec);
    return d;
  }
  const auto colon = text.find(':');
  d.name_ = text.substr(0, colon);
  d.settings_ = colon == std::string::npos ? "" : text.substr(colon + 1);
  d.text_ = text;
  auto instance = d.instantiate();
  if (!instance)
    return instance.error();
  const model& m = **instance;
  if (m.inputs() <= 0 || m.outputs() <= 0 || m.parameter_count() == 0)
    return fail(errc::invalid_argument,
                "model '" + text + "' has " + std::to_string(m.inputs()) + " inputs, "
                  + std::to_string(m.outputs()) + " outputs and "
                  + std::to_string(m.parameter_count())
                  + " parameters: each must be at least 1");
  d.parameter_count_ = m.parameter_count();
  d.inputs_ = m.inputs();
  d.classes_ = m.outputs();
  d.honours_sample_weights_ = m.honours_sample_weights();
  d.state_spans_ = m.state_spans();
  if (auto refused = refuse_state_spans(d.state_spans_, d.parameter_count_); !refused.empty())
    return fail(errc::invalid_argument, "model '" + text + "': " + refused);
  d.fingerprint_ = registered_fingerprint(text, **instance);
  return d;
}

expected<std::unique_ptr<model>> model_description::instantiate() const {
  if (spec_)
    return std::unique_ptr<model>(std::make_unique<builtin_model>(*spec_));
  if (layered_)
    return make_layered_model(text_);
  auto factory = find_model_factory(name_);
  if (!factory)
    return fail(errc::invalid_argument,
                "model '" + text_ + "': no model is registered as '" + name_ + "' ("
                  + known_models_text()
                  + "; a built-in model is written INPUTS-UNITS[relu]-...-CLASSES, e.g. "
                    "784-128relu-10)");
  auto built = (*factory)(settings_);
  if (!built)
    return fail(built.error().code, "model '" + text_ + "': " + built.error().message);
  if (!*built)
    return fail(errc::invalid_argument,
                "model '" + text_ + "': its factory returned no model");
  return std::move(*built);
}

std::string model_description::refuse_device(const std::string& device) const {
  if (device == "cpu")
    return {};
  if (layered_)
    return refuse_layered_device(text_, device);
  if (!spec_ || spec_->loss == loss_kind::squared_error)
    return "model " + text_ + " computes on the host, so its replicas cannot run on " + device
           + " (use --devices=cpu)";
  return {};
}

expected<std::unique_ptr<model>> model_description::instantiate_on(
  const std::string& device) const {
  if (layered_)
    return make_layered_model_on(text_, device);
  return instantiate();
}

std::vector<float> model_description::initial_parameters(uint64_t seed) const {
  if (spec_)
    return glorot_uniform_parameters(parameter_layout(*spec_), seed);
  std::vector<float> params(parameter_count_);
  (*instantiate())->initialize(seed, params.data()); // resolve() built one
  return params;
}

status check_model_fits(const model_description& model, const data_source& data,
                        const std::string& role) {
  if (const model_spec* spec = model.builtin())
    return check_model_fits(*spec, data, role);
  // A registered model takes float targets when it has as many outputs.
  const model_shape shape{model.text(), model.inputs(), model.classes(), data.regression()};
  auto why = explain_misfit(shape, data, role);
  if (why.empty())
    return {};
  return fail(errc::invalid_argument, why);
}

} // namespace troupe::detail
