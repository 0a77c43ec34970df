// troupe::fit: a run's options parsed as a program's, checked against the
// data, then the coordinator's fit in an actor system of their own.
#include <troupe/fit.hpp>

#include <algorithm>
#include <memory>

#include <caf/actor_system.hpp>

#include "actors/config/run_config.hpp"
#include "actors/run/coordinator.hpp"
#include "api/console_report.hpp"
#include "api/errors.hpp"
#include "api/program_config.hpp"
#include "messages/errors.hpp"
#include "model/model_description.hpp"

namespace troupe {

namespace {

// `model` (a built-in description) trained with `loss` instead.
expected<std::string> description_with_loss(const std::string& model, const std::string& loss) {
  if (!names_builtin_model(model))
    return fail(model_errc::invalid_argument,
                "--loss: model " + model + " is registered and computes its own loss");
  const std::string base = without_loss_suffix(model);
  return loss == "mse" ? base + squared_error_suffix : base;
}

// What the program compiled, where the options do not say otherwise.
void apply_compiled(run_config& c, const std::string& description,
                    const optimizer_config& compiled, const std::vector<std::string>& given) {
  auto unless_given = [&given](const char* name, auto& field, const auto& value) {
    if (std::find(given.begin(), given.end(), name) == given.end())
      field = value;
  };
  unless_given("model", c.model, description);
  unless_given("optimizer", c.optimizer.name, compiled.name);
  unless_given("lr", c.optimizer.learning_rate, compiled.learning_rate);
  unless_given("beta1", c.optimizer.beta1, compiled.beta1);
  unless_given("beta2", c.optimizer.beta2, compiled.beta2);
  unless_given("epsilon", c.optimizer.epsilon, compiled.epsilon);
  unless_given("momentum", c.optimizer.momentum, compiled.momentum);
  unless_given("nesterov", c.optimizer.nesterov, compiled.nesterov);
  unless_given("rho", c.optimizer.rho, compiled.rho);
  unless_given("centered", c.optimizer.centered, compiled.centered);
  unless_given("weight-decay", c.optimizer.weight_decay, compiled.weight_decay);
  unless_given("lr-schedule", c.optimizer.schedule, compiled.schedule);
}

epoch_result result_of(const epoch_record& r) {
  epoch_result e;
  e.epoch = r.epoch;
  e.loss = r.train_loss;
  e.accuracy = r.train_accuracy;
  e.val_loss = r.test_loss;
  e.val_accuracy = r.test_accuracy;
  e.samples = r.samples;
  e.seconds = r.seconds;
  e.samples_per_second = r.samples_per_second;
  e.live_replicas = r.live_replicas;
  return e;
}

history history_of(const fit_summary& s, std::vector<epoch_result> epochs,
                   const std::string& description) {
  history h;
  h.epochs = std::move(epochs);
  h.model = trained_model(description, s.params.to_vector());
  h.val_loss = s.test_loss;
  h.val_accuracy = s.test_accuracy;
  h.samples_per_second = s.samples_per_second;
  h.steps = s.version;
  h.params_fnv1a64 = s.params_fnv1a64;
  h.mode = s.mode;
  h.replicas = s.replicas;
  return h;
}

// The run the options describe, with what the program compiled, reading
// its training data where `train` came from.
expected<run_config> run_config_for(const program_config& cfg, const std::string& description,
                                     const optimizer_config& optimizer,
                                     const data_source& train, const fit_options& options) {
  if (auto err = cfg.check_output_options())
    return invalid_option(err);
  auto config = cfg.run.to_run_config();
  if (!config)
    return invalid_option(config.error());
  apply_compiled(*config, description, optimizer, option_names(options.arguments()));
  if (!cfg.loss.empty()) {
    auto with_loss = description_with_loss(config->model, cfg.loss);
    if (!with_loss)
      return with_loss.error();
    config->model = *with_loss;
  }
  if (!train.name().empty())
    config->data_dir = train.name(); // what nodes open, and what the banner names
  else if (!config->nodes.empty() && !options.has("data-dir"))
    return fail(model_errc::invalid_argument,
                "--nodes: nodes open the training data by its name, and this training set "
                "has none: it was built in memory (load it with load_data, serve it as a "
                "registered data source, or name its --data-dir)");
  else if (!options.has("data-dir"))
    config->data_dir = "memory";
  return *config;
}

} // namespace

fit_options& fit_options::set(const std::string& name, const std::string& value) {
  arguments_.push_back("--" + name + "=" + value);
  return *this;
}

bool fit_options::has(const std::string& name) const {
  const auto names = option_names(arguments_);
  return std::find(names.begin(), names.end(), name) != names.end();
}

expected<history> fit(const std::string& description, const optimizer_config& optimizer,
                      const dataset& train, const dataset& validation,
                      const fit_options& options) {
  return fit(description, optimizer, in_memory(train), in_memory(validation), options);
}

expected<history> fit(const std::string& description, const optimizer_config& optimizer,
                      std::shared_ptr<const data_source> train,
                      std::shared_ptr<const data_source> validation,
                      const fit_options& options) {
  if (!train || !validation)
    return fail(model_errc::invalid_argument,
                std::string("fit: the ") + (train ? "validation" : "training") + " source is null");
  program_config cfg(options.program, "");
  if (auto err = cfg.parse_options(options.arguments()))
    return invalid_option(err);
  auto config = run_config_for(cfg, description, optimizer, *train, options);
  if (!config)
    return config.error();
  const source_pair data{std::move(train), std::move(validation)};
  auto checked = check_run_config(*config, &data);
  if (!checked)
    return invalid_option(checked.error());
  std::unique_ptr<metrics_log> metrics;
  if (!cfg.metrics.empty()) {
    auto log = metrics_log::open(cfg.metrics);
    if (!log)
      return fail(model_errc::io_error, describe(log.error()));
    metrics = std::make_unique<metrics_log>(std::move(*log));
  }
  print_banner(options.program, *checked, data);
  std::vector<epoch_result> epochs;
  const auto scores =
    data.train->regression() ? reported_metrics::loss : reported_metrics::loss_and_accuracy;
  auto observer = make_console_observer(cfg, *checked, scores, metrics.get(),
                                        [&epochs, &options](const epoch_record& r) {
                                          epochs.push_back(result_of(r));
                                          if (options.on_epoch)
                                            options.on_epoch(epochs.back());
                                        });
  caf::actor_system system{cfg};
  auto result = fit(system, *checked, data, std::move(observer));
  if (!result)
    return run_failure(result.error());
  print_summary(cfg, scores, *result);
  if (metrics)
    metrics->write_summary(*result, *checked);
  return history_of(*result, std::move(epochs), checked->model);
}

} // namespace troupe
