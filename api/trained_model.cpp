// A trained model: evaluation and prediction on the host, the saved-model
// file and the ONNX export.
#include <troupe/fit.hpp>

#include "model/builtin_model.hpp"
#include "model/export/onnx_export.hpp"
#include "model/export/saved_model.hpp"
#include "model/model_description.hpp"
#include "model/predict.hpp"

namespace troupe {

namespace {

// The description resolved, checked against the parameters.
expected<model_description> described_for(const trained_model& m) {
  auto described = model_description::resolve(m.description());
  if (!described)
    return described.error();
  if (described->parameter_count() != m.parameters().size())
    return fail(model_errc::invalid_argument,
                "model " + described->text() + " has "
                  + std::to_string(described->parameter_count()) + " parameters, not "
                  + std::to_string(m.parameters().size()));
  return described;
}

expected<std::unique_ptr<model>> instance_for(const trained_model& m) {
  auto described = described_for(m);
  if (!described)
    return described.error();
  return described->instantiate();
}

// The built-in model's spec; `what` says what only a built-in model can do.
expected<model_spec> builtin_spec_for(const trained_model& m, const std::string& what) {
  auto described = described_for(m);
  if (!described)
    return described.error();
  if (!described->builtin())
    return fail(model_errc::invalid_argument,
                "model " + described->text()
                  + " is not a built-in sequential model: only those " + what);
  return *described->builtin();
}

status check_features(int inputs, const dataset& data) {
  if (data.features == inputs
      && data.images.size() == static_cast<size_t>(data.count) * data.features)
    return {};
  return fail(model_errc::invalid_argument,
              "the model takes " + std::to_string(inputs)
                + " features per sample, the data has " + std::to_string(data.features));
}

} // namespace

expected<evaluation> trained_model::evaluate(const dataset& data) const {
  auto instance = instance_for(*this);
  if (!instance)
    return instance.error();
  if (auto fits = check_features((*instance)->inputs(), data); !fits)
    return fits.error();
  const bool answered = data.regression()
                          ? data.targets.size() == static_cast<size_t>(data.count) * data.target_width
                          : data.labels.size() == static_cast<size_t>(data.count);
  if (!answered)
    return fail(model_errc::invalid_argument,
                "the data has no label or target for every sample");
  const batch samples{data.images.data(), data.regression() ? nullptr : data.labels.data(),
                      static_cast<size_t>(data.count), data.features,
                      data.regression() ? data.targets.data() : nullptr};
  const batch_result scored = (*instance)->evaluate(parameters_.data(), samples);
  evaluation e;
  e.samples = data.count;
  if (data.count > 0) {
    e.loss = scored.loss_sum / data.count;
    e.accuracy = static_cast<double>(scored.correct) / data.count;
  }
  return e;
}

expected<std::vector<float>> trained_model::predict(const dataset& data) const {
  auto instance = instance_for(*this);
  if (!instance)
    return instance.error();
  if (auto fits = check_features((*instance)->inputs(), data); !fits)
    return fits.error();
  std::vector<float> outputs(static_cast<size_t>(data.count) * (*instance)->outputs());
  (*instance)->predict(parameters_.data(), data.images.data(), static_cast<size_t>(data.count),
                       outputs.data());
  return outputs;
}

expected<std::vector<float>> trained_model::logits(const dataset& data) const {
  auto spec = builtin_spec_for(*this, "give logits; predict gives its outputs");
  if (!spec)
    return spec.error();
  if (auto fits = check_features(spec->inputs, data); !fits)
    return fits.error();
  std::vector<float> values(static_cast<size_t>(data.count) * spec->classes());
  predict_logits(*spec, parameters_.data(), data.images.data(), static_cast<size_t>(data.count),
                 values.data());
  return values;
}

expected<int> trained_model::outputs() const {
  auto described = model_description::resolve(description_);
  if (!described)
    return described.error();
  return described->classes();
}

status trained_model::save(const std::string& path) const {
  auto described = model_description::resolve(description_);
  if (!described)
    return described.error();
  saved_model file;
  file.model = described->text();
  file.inputs = described->inputs();
  file.outputs = described->classes();
  const bool squared_error =
    described->builtin() && described->builtin()->loss == loss_kind::squared_error;
  file.loss = squared_error ? "mean_squared_error" : "sparse_categorical_crossentropy";
  file.parameters = parameters_;
  return save_model(path, file);
}

status trained_model::export_onnx(const std::string& path) const {
  auto spec = builtin_spec_for(*this, "export to ONNX");
  if (!spec)
    return spec.error();
  return troupe::export_onnx(path, *spec, parameters_.data());
}

expected<trained_model> load_model(const std::string& path) {
  auto file = load_saved_model(path);
  if (!file)
    return file.error();
  return trained_model(file->model, std::move(file->parameters));
}

} // namespace troupe
