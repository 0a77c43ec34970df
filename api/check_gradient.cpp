// The finite-difference gradient check of any troupe::model.
#include <troupe/check_gradient.hpp>

#include <cmath>
#include <vector>

namespace troupe {

namespace {

// The training pass's mean loss, the one the gradient is of (dropout with
// the batch's mask, batch normalization by the batch's statistics).
expected<double> mean_loss(model& m, const std::vector<float>& params, const batch& samples,
                           std::vector<float>& scratch) {
  const double loss = m.gradient(params.data(), samples, scratch.data()).loss_sum / samples.count;
  if (!std::isfinite(loss))
    return fail(errc::invalid_argument, "check_gradient: the model's loss is not finite");
  return loss;
}

// Every weight (the parameters outside the model's state spans), or
// `wanted` of them spread evenly.
std::vector<size_t> parameters_to_check(const model& m, size_t wanted) {
  std::vector<bool> state(m.parameter_count(), false);
  for (const parameter_span& span : m.state_spans())
    for (size_t i = span.offset; i < span.offset + span.count && i < state.size(); ++i)
      state[i] = true;
  std::vector<size_t> weights;
  for (size_t i = 0; i < state.size(); ++i)
    if (!state[i])
      weights.push_back(i);
  if (wanted == 0 || wanted >= weights.size())
    return weights;
  std::vector<size_t> chosen;
  for (size_t k = 0; k < wanted; ++k)
    chosen.push_back(weights[k * weights.size() / wanted]);
  return chosen;
}

// Every label is one of the model's outputs, or the batch has targets.
status check_labels(const model& m, const batch& samples) {
  if (samples.labels == nullptr)
    return samples.targets != nullptr
             ? status{}
             : fail(errc::invalid_argument,
                    "check_gradient: the batch has neither labels nor targets");
  for (size_t i = 0; i < samples.count; ++i)
    if (samples.labels[i] < 0 || samples.labels[i] >= m.outputs())
      return fail(errc::invalid_argument,
                  "check_gradient: sample " + std::to_string(i) + " has label "
                    + std::to_string(samples.labels[i]) + ", but the model has "
                    + std::to_string(m.outputs()) + " outputs (labels 0.."
                    + std::to_string(m.outputs() - 1) + ")");
  return {};
}

} // namespace

expected<gradient_report> check_gradient(model& m, const batch& samples,
                                         const gradient_check_options& options) {
  if (samples.count == 0 || samples.inputs != m.inputs() || samples.features == nullptr)
    return fail(errc::invalid_argument,
                "check_gradient: the batch holds " + std::to_string(samples.count)
                  + " samples of " + std::to_string(samples.inputs)
                  + " features; the model takes " + std::to_string(m.inputs()));
  if (auto fits = check_labels(m, samples); !fits)
    return fits.error();
  std::vector<float> params(m.parameter_count());
  m.initialize(options.seed, params.data());
  std::vector<float> gradient(params.size());
  m.gradient(params.data(), samples, gradient.data());
  gradient_report report;
  std::vector<float> scratch(params.size());
  for (size_t i : parameters_to_check(m, options.max_parameters)) {
    const float saved = params[i];
    params[i] = saved + options.step;
    auto up = mean_loss(m, params, samples, scratch);
    params[i] = saved - options.step;
    auto down = mean_loss(m, params, samples, scratch);
    params[i] = saved;
    if (!up || !down)
      return up ? down.error() : up.error();
    const double numeric = (*up - *down) / (2.0 * options.step);
    const double tolerance = options.absolute + options.relative * std::abs(numeric);
    const double excess = std::abs(gradient[i] - numeric) / tolerance;
    if (report.checked == 0 || excess > report.worst_excess) {
      report.worst_index = i;
      report.worst_analytic = gradient[i];
      report.worst_numeric = numeric;
      report.worst_excess = excess;
    }
    ++report.checked;
  }
  report.passed = report.worst_excess <= 1.0;
  return report;
}

} // namespace troupe
