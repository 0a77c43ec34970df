// A trained model: evaluation and prediction on the host, the saved-model
// file and the ONNX export.
#include <troupe/fit.hpp>

#include <functional>

#include "model/builtin_model.hpp"
#include "model/export/onnx_export.hpp"
#include "model/export/saved_model.hpp"
#include "model/layers/layer_spec.hpp"
#include "model/layers/layered_model.hpp"
#include "model/model_description.hpp"
#include "model/predict.hpp"
#include "model/source_chunks.hpp"
#include "model/data/dataset.hpp"

namespace troupe {

using namespace detail;

namespace {

// The description resolved, checked against the parameters.
expected<model_description> described_for(const trained_model& m) {
  auto described = model_description::resolve(m.description());
  if (!described)
    return described.error();
  if (described->parameter_count() != m.parameters().size())
    return fail(errc::invalid_argument,
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

// The built-in model's spec; `what` says what only a built-in or layered
// model can do.
expected<model_spec> builtin_spec_for(const model_description& described,
                                      const std::string& what) {
  if (!described.builtin())
    return fail(errc::invalid_argument,
                "model " + described.text()
                  + " is not a built-in sequential or layered model: only those " + what);
  return *described.builtin();
}

status check_features(int inputs, const data_source& data) {
  if (data.features() == inputs)
    return {};
  return fail(errc::invalid_argument,
              "the model takes " + std::to_string(inputs)
                + " features per sample, the data has " + std::to_string(data.features()));
}

// Checks that a dataset's arrays hold what its counts say.
status check_arrays(const dataset& data, bool answers_needed) {
  const size_t count = static_cast<size_t>(data.count);
  if (data.inputs.size() != count * static_cast<size_t>(data.features))
    return fail(errc::invalid_argument,
                "the data has " + std::to_string(data.inputs.size()) + " feature values for "
                  + std::to_string(data.count) + " samples of "
                  + std::to_string(data.features));
  const bool answered =
    data.regression() ? data.targets.size() == count * static_cast<size_t>(data.target_width)
                      : data.labels.size() == count;
  if (answers_needed && !answered)
    return fail(errc::invalid_argument,
                "the data has no label or target for every sample");
  return {};
}

// Writes `compute`'s outputs (`width` per sample) for every sample of `data`.
expected<std::vector<float>>
outputs_for(const data_source& data, int width,
            const std::function<void(const batch&, float*)>& compute) {
  std::vector<float> outputs(data.size() * static_cast<size_t>(width));
  auto walked = for_each_chunk(data, chunk_content::features, [&](const batch& chunk, size_t first) {
    compute(chunk, outputs.data() + first * static_cast<size_t>(width));
  });
  if (!walked)
    return walked.error();
  return outputs;
}

} // namespace

expected<evaluation> trained_model::evaluate(const data_source& data) const {
  auto instance = instance_for(*this);
  if (!instance)
    return instance.error();
  if (auto fits = check_features((*instance)->inputs(), data); !fits)
    return fits.error();
  auto scored = evaluate_source(**instance, parameters_.data(), data);
  if (!scored)
    return scored.error();
  evaluation e;
  e.samples = static_cast<int64_t>(data.size());
  if (e.samples > 0) {
    e.loss = scored->loss_sum / static_cast<double>(e.samples);
    e.accuracy = static_cast<double>(scored->correct) / static_cast<double>(e.samples);
  }
  return e;
}

expected<evaluation> trained_model::evaluate(const dataset& data) const {
  if (auto checked = check_arrays(data, true); !checked)
    return checked.error();
  return evaluate(*borrowed_source(data));
}

expected<std::vector<float>> trained_model::predict(const data_source& data) const {
  auto instance = instance_for(*this);
  if (!instance)
    return instance.error();
  if (auto fits = check_features((*instance)->inputs(), data); !fits)
    return fits.error();
  model& m = **instance;
  return outputs_for(data, m.outputs(), [&](const batch& chunk, float* out) {
    m.predict(parameters_.data(), chunk.features, chunk.count, out);
  });
}

expected<std::vector<float>> trained_model::predict(const dataset& data) const {
  if (auto checked = check_arrays(data, false); !checked)
    return checked.error();
  return predict(*borrowed_source(data));
}

expected<std::vector<float>> trained_model::logits(const data_source& data) const {
  auto described = described_for(*this);
  if (!described)
    return described.error();
  if (names_layered_model(described->text())) {
    auto stack = make_layered_stack(described->text());
    if (!stack)
      return stack.error();
    layered_model& m = **stack;
    if (auto fits = check_features(m.inputs(), data); !fits)
      return fits.error();
    return outputs_for(data, m.outputs(), [&](const batch& chunk, float* out) {
      m.logits(parameters_.data(), chunk.features, chunk.count, out);
    });
  }
  auto spec = builtin_spec_for(*described, "give logits; predict gives its outputs");
  if (!spec)
    return spec.error();
  if (auto fits = check_features(spec->inputs, data); !fits)
    return fits.error();
  return outputs_for(data, spec->classes(), [&](const batch& chunk, float* out) {
    predict_logits(*spec, parameters_.data(), chunk.features, chunk.count, out);
  });
}

expected<std::vector<float>> trained_model::logits(const dataset& data) const {
  if (auto checked = check_arrays(data, false); !checked)
    return checked.error();
  return logits(*borrowed_source(data));
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
  auto described = described_for(*this);
  if (!described)
    return described.error();
  if (names_layered_model(described->text())) {
    auto stack = parse_stack_spec(described->text());
    if (!stack)
      return stack.error();
    return troupe::detail::export_onnx(path, *stack, parameters_.data());
  }
  auto spec = builtin_spec_for(*described, "export to ONNX");
  if (!spec)
    return spec.error();
  return troupe::detail::export_onnx(path, *spec, parameters_.data());
}

expected<trained_model> load_model(const std::string& path) {
  auto file = load_saved_model(path);
  if (!file)
    return file.error();
  return trained_model(file->model, std::move(file->parameters));
}

} // namespace troupe
