// The one check of a run's configuration, and the settings a resumed run
// must share with the run it continues.
#include "actors/config/run_config.hpp"

#include <fmt/core.h>

#include "actors/policy/policy_registry.hpp"
#include "actors/replica/store_group.hpp"
#include "actors/runtime/core_pinning.hpp"
#include "messages/errors.hpp"
#include "model/backend/backend.hpp"
#include "model/class_weights.hpp"
#include "model/data/batch_plan.hpp"
#include "model/data/row_range.hpp"
#include "model/metrics.hpp"
#include "model/model_description.hpp"
#include "model/optim/lr_schedule.hpp"
#include "model/optim/optimizer.hpp"
#include "model/parameter_layout.hpp"
#include "model/shard_layout.hpp"

namespace troupe::detail {

namespace {

caf::error bad_config(const std::string& why) {
  return make_troupe_error(troupe_errc::bad_config, why);
}

// The replica count: given, or one per core here, or nodes x per node.
caf::error settle_replicas(run_config& c) {
  if (!c.nodes.empty()) {
    if (c.replicas_per_node == 0)
      return bad_config("--replicas-per-node must be at least 1");
    const auto placed = static_cast<uint32_t>(c.nodes.size()) * c.replicas_per_node;
    if (c.replicas != 0 && c.replicas != placed)
      return bad_config("--replicas=" + std::to_string(c.replicas) + " does not fit --nodes: "
                        + std::to_string(c.nodes.size()) + " node(s) x --replicas-per-node="
                        + std::to_string(c.replicas_per_node) + " run "
                        + std::to_string(placed)
                        + " replicas (drop --replicas, or change --replicas-per-node)");
    c.replicas = placed;
  }
  if (c.replicas == 0)
    c.replicas = usable_cores();
  if (c.slow.factor != 1.0f && c.slow.index >= c.replicas)
    return bad_config("--slow-replica: replica " + std::to_string(c.slow.index)
                      + " does not exist (--replicas=" + std::to_string(c.replicas) + ")");
  if (c.batch_size < c.replicas)
    return bad_config("--batch-size=" + std::to_string(c.batch_size)
                      + " is smaller than --replicas=" + std::to_string(c.replicas)
                      + " (the batch is global: each replica takes its share)");
  return caf::none;
}

caf::error check_policy(const run_config& c) {
  if (auto err = check_policy_spec(c.policy))
    return err;
  const auto backups = c.policy.settings.backup_replicas;
  if (backups >= c.replicas && backups > 0)
    return bad_config("--backup-replicas=" + std::to_string(backups)
                      + " leaves no replica to close a round (--replicas="
                      + std::to_string(c.replicas) + ")");
  if (c.on_replica_loss == replica_loss_action::respawn
      && !find_policy(c.policy.name)->traits(c.policy.settings).respawns)
    return bad_config("--on-replica-loss=respawn: a replica of " + c.policy.name
                      + " mode cannot be respawned (a round closes without the late "
                        "replicas' shares); use abort or continue");
  if (c.respawn_timeout_ms > 0 && !c.accept_joins)
    return bad_config("--respawn-timeout waits for a node to join: it needs --accept-joins");
  if (c.respawn_timeout_ms >= c.step_timeout_ms && c.respawn_timeout_ms > 0)
    return bad_config("--respawn-timeout=" + std::to_string(c.respawn_timeout_ms)
                      + " must be shorter than --step-timeout="
                      + std::to_string(c.step_timeout_ms)
                      + ": the other replicas give up on their round after that");
  if (c.accept_joins && c.on_replica_loss != replica_loss_action::respawn)
    return bad_config("--accept-joins moves replicas onto a joining node as a respawn "
                      "does: it needs --on-replica-loss=respawn");
  if (c.snapshot_every > 0 && !heals_store(c))
    return bad_config("--snapshot-every keeps the snapshots a healing store rolls back to: it "
                      "needs the store on nodes (--nodes or --store-nodes) or --wire=int8 on "
                      "nodes, and --on-replica-loss=respawn");
  return caf::none;
}

caf::error check_training(const run_config& c) {
  if (c.epochs == 0)
    return bad_config("--epochs must be at least 1");
  if (c.step_timeout_ms == 0)
    return bad_config("--step-timeout must be positive");
  if (auto why = refuse_optimizer_config(c.optimizer); !why.empty())
    return bad_config(why);
  if (c.checkpoint_every > 0 && c.checkpoint_path.empty())
    return bad_config("--checkpoint-every needs --checkpoint=PATH");
  for (const auto& device : c.devices.pool)
    if (!names_a_device(device))
      return bad_config("--devices: '" + device
                        + "' is not a device (expected cpu, cuda:N or auto)");
  return caf::none;
}

// --store-device names a device, whose kind the optimizer can step on.
caf::error check_store_device(const run_config& c) {
  const std::string& device = c.store_device;
  if (!names_a_device(device))
    return bad_config("--store-device: '" + device
                      + "' is not a device (expected cpu or cuda:N)");
  if (device != "cpu" && c.wire != float_codec::fp32)
    return bad_config(std::string{"--wire="} + codec_name(c.wire) + " rounds on the host: use "
                      "--store-device=cpu, or --wire=fp32 with --store-device=" + device);
  if (device == "cpu" || steps_on_device(c.optimizer))
    return caf::none;
  if (c.optimizer.global_clipnorm != 0.0f)
    return bad_config("--store-device=" + device + " cannot clip by global norm (the shards "
                      "clip on the host): use --global-clipnorm=0, or --store-device=cpu");
  if (find_optimizer_kind(c.optimizer.name)->steps_on_device)
    return bad_config("--store-device=" + device + " steps " + c.optimizer.name
                      + " without weight decay only (the decay is a pass on the host): use "
                        "--weight-decay=0, or --store-device=cpu");
  std::string on_device;
  for (const auto& kind : optimizer_kinds())
    if (kind.steps_on_device)
      on_device += (on_device.empty() ? "" : " or ") + kind.name;
  return bad_config("--store-device=" + device + " steps " + on_device + " only: use --optimizer="
                    + on_device + ", or --store-device=cpu for " + c.optimizer.name);
}

// A warm-up longer than the whole run is refused: the run's optimizer steps
// are epochs x rounds, times the replicas where each push steps.
// --validation-split against the training data: a fraction in [0, 1) that
// leaves samples both to train on and to validate.
caf::error check_validation_split(const run_config& c, size_t samples) {
  const double f = c.validation_split;
  const std::string given = fmt::format("--validation-split={}", f);
  if (!(f >= 0.0 && f < 1.0))
    return bad_config(given + ": takes a fraction of the training data in [0, 1)");
  if (f == 0.0)
    return caf::none;
  const size_t rows = training_rows(samples, f);
  if (rows == 0 || rows == samples)
    return bad_config(given + " leaves " + std::to_string(rows) + " of the "
                      + std::to_string(samples) + " training samples to train on and "
                      + std::to_string(samples - rows)
                      + " to validate; each needs at least one");
  return caf::none;
}

// --extra-metrics: known names that fit the data and the model.
caf::error check_extra_metrics(const run_config& c, const data_source& train, int outputs) {
  auto specs = parse_metrics(c.extra_metrics);
  if (!specs)
    return bad_config("--extra-metrics=" + c.extra_metrics + ": " + specs.error().message);
  if (auto fits = check_metrics(*specs, train, outputs); !fits)
    return bad_config("--extra-metrics=" + c.extra_metrics + ": " + fits.error().message);
  return caf::none;
}

caf::error check_warmup_fits(const run_config& c, size_t samples) {
  const lr_schedule& s = c.optimizer.schedule;
  if (!warms_up(s))
    return caf::none;
  const uint64_t rounds = batch_plan(samples, c.batch_size, c.replicas).rounds();
  const bool per_round = find_policy(c.policy.name)->traits(c.policy.settings).steps_per_round;
  const uint64_t steps = c.epochs * rounds * (per_round ? 1 : c.replicas);
  if (s.warmup_steps <= steps)
    return caf::none;
  return bad_config("--lr-schedule=" + to_setting_text(s) + ": warmup_steps="
                    + std::to_string(s.warmup_steps) + " is longer than the whole run, "
                    + std::to_string(steps) + " optimizer steps (--epochs="
                    + std::to_string(c.epochs) + " x " + std::to_string(rounds) + " rounds"
                    + (per_round ? "" : " x --replicas=" + std::to_string(c.replicas))
                    + "): warm up over fewer steps, or train longer");
}

// With replica nodes and a cpu store, the store's shards run on those nodes
// unless --store-nodes names others or here: a replica node's half of the
// rounds' traffic then never leaves it. Under --on-replica-loss=continue the
// store stays here, where a node's death cannot take a shard with it.
void settle_store_layout(run_config& c) {
  if (c.store_nodes.empty() && !c.nodes.empty() && !c.store_here && c.store_device == "cpu"
      && c.on_replica_loss != replica_loss_action::continue_run)
    c.store_nodes = c.nodes;
}

// The number of store shards: given, or the default; one the model cannot
// split is refused.
caf::error settle_store_shards(run_config& c, size_t parameter_count) {
  if (c.store_shards == 0)
    c.store_shards = default_store_shards(c.replicas, usable_cores(), c.store_nodes.size(),
                                          c.store_device != "cpu");
  if (auto ranges = split_into_shards(parameter_count, c.store_shards); !ranges)
    return bad_config("--store-shards: " + ranges.error().message);
  return caf::none;
}

// --class-weights fit the data's classes, the model trains on them and the
// replicas compute on the host; the weights get one entry per class.
caf::error settle_class_weights(run_config& c, const model_description& model,
                                const data_source& train) {
  if (c.class_weights.empty())
    return caf::none;
  const int classes = train.regression() ? 0 : train.classes();
  if (auto why = refuse_class_weights(c.class_weights, classes); !why.empty())
    return bad_config(why);
  if (!model.honours_sample_weights())
    return bad_config("--class-weights: model " + model.text()
                      + " does not say it honours sample weights "
                        "(model::honours_sample_weights), so they would be ignored");
  for (const auto& device : c.devices.pool)
    if (device != "cpu")
      return bad_config("--class-weights weighs samples on cpu replicas only: use "
                        "--devices=cpu, not " + device);
  c.class_weights = class_weights_for(std::move(c.class_weights), classes);
  return caf::none;
}

// A model with state (batch normalization's moving statistics) has it
// averaged by host shards that do not clip it.
caf::error check_model_state(const run_config& c, const model_description& model) {
  if (model.state_spans().empty())
    return caf::none;
  const std::string has = "model " + model.text()
                          + " has state (batch normalization's moving statistics), ";
  if (c.optimizer.global_clipnorm != 0.0f)
    return bad_config("--global-clipnorm: " + has + "which clipping by global norm would "
                      "scale: use --global-clipnorm=0");
  if (c.store_device != "cpu")
    return bad_config("--store-device=" + c.store_device + ": " + has
                      + "which the store averages on the host: use --store-device=cpu");
  return caf::none;
}

} // namespace

caf::expected<checked_run_config> check_run_config(run_config config, const source_pair* data) {
  if (auto err = settle_replicas(config))
    return err;
  settle_store_layout(config);
  if (auto err = check_policy(config))
    return err;
  if (heals_store(config) && config.snapshot_every == 0)
    config.snapshot_every = default_snapshot_every;
  if (auto err = check_training(config))
    return err;
  auto described = model_description::resolve(config.model);
  if (!described)
    return to_caf_error(described.error());
  if (!data || !data->train || !data->test || data->train->size() == 0
      || data->test->size() == 0)
    return make_troupe_error(troupe_errc::bad_data, "no training or test data");
  if (auto fits = check_model_fits(*described, *data->train, "training"); !fits)
    return to_caf_error(fits.error());
  if (auto fits = check_model_fits(*described, *data->test, "test"); !fits)
    return to_caf_error(fits.error());
  if (!config.devices.automatic)
    for (const auto& device : config.devices.pool)
      if (auto refused = described->refuse_device(device); !refused.empty())
        return bad_config("--devices: " + refused);
  if (auto err = check_validation_split(config, data->train->size()))
    return err;
  if (auto err = check_extra_metrics(config, *data->train, described->classes()))
    return err;
  const size_t train_rows = config.validation_split > 0
                              ? training_rows(data->train->size(), config.validation_split)
                              : data->train->size();
  if (auto err = check_warmup_fits(config, train_rows))
    return err;
  if (auto err = settle_class_weights(config, *described, *data->train))
    return err;
  if (auto err = check_store_device(config))
    return err;
  if (auto err = check_model_state(config, *described))
    return err;
  if (config.start_parameters.size() > 0 && !config.resume_path.empty())
    return make_troupe_error(troupe_errc::bad_config,
                             "--start-from and --resume: a resumed run goes on from its "
                             "checkpoint's parameters and optimizer; give one of them");
  if (config.start_parameters.size() > 0
      && config.start_parameters.size() != described->parameter_count())
    return make_troupe_error(troupe_errc::bad_config,
                             "--start-from: " + std::to_string(config.start_parameters.size())
                               + " parameters, but model " + described->text() + " has "
                               + std::to_string(described->parameter_count()));
  if (auto err = settle_store_shards(config, described->parameter_count()))
    return err;
  return checked_run_config{std::move(config)};
}

bool heals_store(const run_config& c) {
  const bool has_nodes = !c.nodes.empty() || c.accept_joins.has_value();
  return (!c.store_nodes.empty() || (c.wire == float_codec::int8 && has_nodes))
         && c.on_replica_loss == replica_loss_action::respawn;
}

std::vector<setting_text> resume_settings(const run_config& c) {
  auto described = model_description::resolve(c.model); // one spelling of the model
  std::vector<setting_text> all{{"model", described ? described->text() : c.model}};
  for (auto& s : settings_text(c.policy))
    all.push_back(std::move(s));
  all.push_back({"replicas", std::to_string(c.replicas)});
  all.push_back({"batch-size", std::to_string(c.batch_size)});
  all.push_back({"seed", std::to_string(c.seed)});
  for (auto& s : settings_text(c.optimizer))
    all.push_back(std::move(s));
  if (c.validation_split > 0) // the samples trained on, and so the rounds of an epoch
    all.push_back({"validation-split", std::to_string(c.validation_split)});
  // Named only when set, so a checkpoint of a run without them still resumes.
  if (auto weights = class_weights_text(c.class_weights); !weights.empty())
    all.push_back({"class-weights", std::move(weights)});
  if (c.wire != float_codec::fp32)
    all.push_back({"wire", codec_name(c.wire)});
  return all;
}

caf::expected<checked_run_config> check_run_config(run_config config,
                                                   const dataset_pair* data) {
  if (!data)
    return check_run_config(std::move(config), static_cast<const source_pair*>(nullptr));
  const source_pair sources{borrowed_source(data->train), borrowed_source(data->test)};
  return check_run_config(std::move(config), &sources);
}

} // namespace troupe::detail
