// troupe::fit: a run's options set on a program's, checked once against the
// data, then the coordinator's fit in an actor system of their own.
#include <troupe/fit.hpp>

#include <algorithm>
#include <cstdio>
#include <memory>

#include <troupe/callbacks.hpp>

#include <caf/actor_system.hpp>

#include "actors/config/run_config.hpp"
#include "actors/run/coordinator.hpp"
#include "api/console_report.hpp"
#include "api/errors.hpp"
#include "api/option_values.hpp"
#include "api/program_config.hpp"
#include "api/stop.hpp"
#include "common/settings_fields.hpp"
#include "messages/errors.hpp"
#include "model/data/row_range.hpp"
#include "model/layers/layer_spec.hpp"
#include "model/metrics.hpp"
#include "model/model_description.hpp"

namespace troupe {

using namespace detail;

namespace {

// `model` (a built-in description) trained with `loss` instead.
expected<std::string> description_with_loss(const std::string& model, const std::string& loss) {
  if (!names_builtin_model(model))
    return fail(errc::invalid_argument,
                "--loss: model " + model + " is registered and computes its own loss");
  if (names_layered_model(model))
    return fail(errc::invalid_argument,
                "--loss=" + loss + ": model " + model
                  + " has layers beyond dense ones, which train with softmax cross-entropy");
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
  unless_given("global-clipnorm", c.optimizer.global_clipnorm, compiled.global_clipnorm);
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
  e.learning_rate = r.learning_rate;
  for (const auto& [name, value] : r.test_metrics)
    e.metrics.emplace_back("val_" + name, value);
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

// The parameters the run starts from: --start-from's saved model or
// fit_options::start_from's, which must be the model trained; none: its
// initialization.
expected<std::vector<float>> start_parameters(const program_config& cfg,
                                              const fit_options& options,
                                              const std::string& model) {
  if (!cfg.start_from.empty() && options.start_model() != nullptr)
    return fail(errc::invalid_argument,
                "--start-from and fit_options::start_from: give the model to start from once");
  const trained_model* from = options.start_model();
  expected<trained_model> loaded = trained_model{};
  if (!cfg.start_from.empty()) {
    loaded = load_model(cfg.start_from);
    if (!loaded)
      return fail(loaded.error().code, "--start-from: " + loaded.error().message);
    from = &*loaded;
  }
  if (from == nullptr)
    return std::vector<float>{};
  auto theirs = model_description::resolve(from->description());
  auto ours = model_description::resolve(model);
  if (!theirs || !ours || theirs->text() != ours->text())
    return fail(errc::invalid_argument,
                "--start-from: the saved model is " + from->description()
                  + ", but this fit trains " + model);
  return from->parameters();
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
  apply_compiled(*config, description, optimizer, options.names());
  if (!cfg.loss.empty()) {
    auto with_loss = description_with_loss(config->model, cfg.loss);
    if (!with_loss)
      return with_loss.error();
    config->model = *with_loss;
  }
  auto start = start_parameters(cfg, options, config->model);
  if (!start)
    return start.error();
  if (!start->empty())
    config->start_parameters = shared_floats{std::move(*start)};
  if (!train.name().empty())
    config->data_dir = train.name(); // what nodes open, and what the banner names
  else if (!config->nodes.empty() && !options.has("data-dir"))
    return fail(errc::invalid_argument,
                "--nodes: nodes open the training data by its name, and this training set "
                "has none: it was built in memory (load it with load_data, serve it as a "
                "registered data source, or name its --data-dir)");
  else if (!options.has("data-dir"))
    config->data_dir = "memory";
  return *config;
}

// The sources a fit reads: without a validation source, a validation split
// validates on the training source's last rows.
expected<source_pair> fit_sources(std::shared_ptr<const data_source> train,
                                  std::shared_ptr<const data_source> validation,
                                  const run_config& config) {
  if (!validation && config.validation_split > 0)
    validation = train; // unused: the split validates
  else if (!validation)
    return fail(errc::invalid_argument,
                "fit: the validation source is null (without one, give a validation_split)");
  return source_pair{std::move(train), std::move(validation)};
}

// The figures this fit's epochs report, by their Keras names.
std::vector<std::string> reported_metric_names(reported_metrics scores, const run_config& c) {
  std::vector<std::string> names{"loss", "val_loss"};
  if (scores == reported_metrics::loss_and_accuracy)
    names = {"loss", "accuracy", "val_loss", "val_accuracy"};
  names.push_back("learning_rate");
  if (auto specs = parse_metrics(c.extra_metrics))
    for (const auto& spec : *specs)
      names.push_back("val_" + spec.name());
  return names;
}

status check_callbacks(const fit_options& options, reported_metrics scores,
                       const run_config& c) {
  const auto metrics = reported_metric_names(scores, c);
  for (const auto& each : options.callbacks) {
    if (!each)
      return fail(errc::invalid_argument, "fit_options::callbacks holds a null callback");
    if (auto checked = each->check(metrics); !checked)
      return checked;
  }
  return {};
}

// The caller's callbacks on an epoch, on fit()'s thread: every one hears it,
// and the run stops if any says so.
epoch_steering steering_for(const fit_options& options, const std::string& description,
                            std::vector<epoch_result>& epochs, bool& stopped) {
  return [&options, description, &epochs, &stopped](const epoch_record& r,
                                                    const std::vector<float>& params) {
    epochs.push_back(result_of(r));
    const auto& epoch = epochs.back();
    epoch_verdict verdict;
    verdict.stop = options.on_epoch && options.on_epoch(epoch) == fit_action::stop;
    if (!options.callbacks.empty()) {
      const trained_model model(description, params);
      double factor = 1.0;
      for (const auto& each : options.callbacks) {
        verdict.stop = each->on_epoch_end(epoch, model) == fit_action::stop || verdict.stop;
        factor *= each->learning_rate_factor(epoch);
      }
      verdict.learning_rate_factor = static_cast<float>(factor);
    }
    stopped = stopped || verdict.stop;
    return verdict;
  };
}

// The banner, and the line that says where a fine-tuning run starts from.
void print_start(const std::string& program, const program_config& cfg,
                 const run_config& checked, const source_pair& data) {
  print_banner(program, checked, split_for_validation(data, checked.validation_split));
  if (checked.start_parameters.size() > 0)
    std::printf("Fine-tuning: starts from the weights of %s with a fresh %s\n",
                cfg.start_from.empty() ? "the model given" : cfg.start_from.c_str(),
                checked.optimizer.name.c_str());
}

// The files a fit writes its figures to as it goes: --metrics, --tensorboard.
struct fit_logs {
  std::unique_ptr<metrics_log> metrics;
  std::unique_ptr<tensorboard_log> tensorboard;
};

expected<fit_logs> open_logs(const program_config& cfg) {
  fit_logs logs;
  if (!cfg.metrics.empty()) {
    auto log = metrics_log::open(cfg.metrics);
    if (!log)
      return fail(errc::io, describe(log.error()));
    logs.metrics = std::make_unique<metrics_log>(std::move(*log));
  }
  if (!cfg.tensorboard.empty()) {
    auto opened = tensorboard_log::open(cfg.tensorboard);
    if (!opened)
      return opened.error();
    logs.tensorboard = std::move(*opened);
  }
  return logs;
}

// --save and --export-onnx, carried out.
status write_model_files(const program_config& cfg, const trained_model& model) {
  if (!cfg.save.empty())
    if (auto saved = model.save(cfg.save); !saved)
      return fail(errc::io, "--save: " + saved.error().message);
  if (!cfg.export_onnx.empty())
    if (auto exported = model.export_onnx(cfg.export_onnx); !exported)
      return fail(exported.error().code, "--export-onnx: " + exported.error().message);
  return {};
}

} // namespace

expected<history> fit(const std::string& description, const optimizer_config& optimizer,
                      const dataset& train, const dataset& validation,
                      const fit_options& options) {
  return fit(description, optimizer, in_memory(train), in_memory(validation), options);
}

expected<history> fit(const std::string& description, const optimizer_config& optimizer,
                      std::shared_ptr<const data_source> train,
                      std::shared_ptr<const data_source> validation,
                      const fit_options& options) {
  program_config cfg(options.program, "");
  if (auto err = apply_options(detail::option_access::values(options), cfg))
    return invalid_option(err);
  if (!train)
    return fail(errc::invalid_argument, "fit: the training source is null");
  auto config = run_config_for(cfg, description, optimizer, *train, options);
  if (!config)
    return config.error();
  auto sources = fit_sources(std::move(train), std::move(validation), *config);
  if (!sources)
    return sources.error();
  const source_pair& data = *sources;
  auto checked = check_run_config(*config, &data);
  if (!checked)
    return invalid_option(checked.error());
  const auto scores =
    data.train->regression() ? reported_metrics::loss : reported_metrics::loss_and_accuracy;
  if (auto ok = check_callbacks(options, scores, *checked); !ok)
    return ok.error();
  auto logs = open_logs(cfg);
  if (!logs)
    return logs.error();
  const bool quiet = options.is_quiet();
  if (!quiet)
    print_start(options.program, cfg, *checked, data);
  std::vector<epoch_result> epochs;
  auto observer =
    make_console_observer(cfg, *checked, scores, logs->metrics.get(), logs->tensorboard.get(),
                          quiet);
  bool stopped = false;
  observer.on_epoch_end = steering_for(options, checked->model, epochs, stopped);
  observer.stop_asked = [asked_before = stop_requests_so_far()] {
    return stop_requests_so_far() != asked_before;
  };
  const signal_stops signals{options.stops_on_signals()};
  caf::actor_system system{cfg};
  auto result = run_training(system, *checked, data, std::move(observer));
  if (!result)
    return run_failure(result.error());
  auto done = history_of(*result, std::move(epochs), checked->model);
  if (!quiet) {
    print_summary(cfg, *checked, scores, *result);
    if (stopped && done.epochs.back().epoch < checked->epochs)
      std::printf("Stopped by a callback after epoch %u of %u\n", done.epochs.back().epoch,
                  checked->epochs);
  }
  if (logs->metrics)
    logs->metrics->write_summary(*result, *checked);
  for (const auto& each : options.callbacks)
    each->on_train_end(done);
  if (auto written = write_model_files(cfg, done.model); !written)
    return written.error();
  return done;
}

} // namespace troupe
