// Planning a run, and deriving each actor's config from it.
#include "actors/run/run_plan.hpp"

#include "messages/errors.hpp"
#include "model/backend/backend.hpp"
#include "model/checkpoint.hpp"
#include "model/data/batch_plan.hpp"
#include "model/model_description.hpp"
#include "model/network.hpp"
#include "model/optim/averaged_state.hpp"
#include "model/parameter_layout.hpp"

namespace troupe::detail {

namespace {

// The device of each replica: the pool round-robin; "auto" opens devices to
// see which exist.
std::vector<std::string> assign_devices(const device_plan& plan, uint32_t replicas) {
  std::vector<std::string> pool = plan.pool;
  if (plan.automatic) {
    for (int i = 0; i < 64; ++i) {
      auto probe = "cuda:" + std::to_string(i);
      if (!make_backend(probe))
        break;
      pool.push_back(probe);
    }
    if (pool.empty())
      pool.push_back("cpu");
  }
  std::vector<std::string> assigned;
  for (uint32_t i = 0; i < replicas; ++i)
    assigned.push_back(pool[i % pool.size()]);
  return assigned;
}

// Starts the store from --resume's checkpoint: it must fit the run, and an
// epoch must be left to train.
caf::error resume_from(run_plan& plan, size_t train_count) {
  const run_config& c = plan.config;
  auto saved = read_checkpoint(c.resume_path);
  if (!saved)
    return to_caf_error(saved.error());
  auto fits = check_compatible(*saved, c.model, resume_settings(c), plan.parameter_count,
                               c.resume_path);
  if (!fits)
    return to_caf_error(fits.error());
  const batch_plan epoch_plan(train_count, c.batch_size, c.replicas);
  // A checkpoint written once its epoch was complete resumes at the next; so
  // does a periodic one taken after the epoch's last round (or a format-1
  // file, which has no flag: its async epoch_round counts pushes, >= rounds).
  const bool epoch_done = saved->epoch_complete || saved->epoch_round >= epoch_plan.rounds();
  plan.first_epoch = static_cast<uint32_t>(saved->epoch + (epoch_done ? 1 : 0));
  plan.resume_round = epoch_done ? 0 : saved->epoch_round;
  if (plan.first_epoch >= c.epochs)
    return make_troupe_error(troupe_errc::bad_config,
                             "checkpoint " + c.resume_path + " is of a run that finished epoch "
                               + std::to_string(plan.first_epoch)
                               + ", nothing is left of --epochs=" + std::to_string(c.epochs)
                               + ": pass --epochs=" + std::to_string(plan.first_epoch + 1)
                               + " or more to train on");
  plan.start.parameters = shared_floats{std::move(saved->params)};
  plan.start.optimizer_state = shared_floats{std::move(saved->optimizer_state)};
  plan.start.version = saved->version;
  plan.start.optimizer_steps = saved->optimizer_steps;
  plan.start.round = saved->round;
  plan.start.learning_rate_factor = saved->learning_rate_factor;
  if (saved->residuals.size() == size_t{c.replicas} * plan.parameter_count)
    plan.resume_residuals = std::move(saved->residuals);
  return caf::none;
}

} // namespace

caf::expected<run_plan> plan_run(const run_config& checked, size_t train_count) {
  run_plan plan;
  plan.config = checked;
  plan.train_rows = train_count;
  plan.traits = traits_of(checked.policy);
  plan.devices = assign_devices(checked.devices, checked.replicas);
  if (checked.store_device != "cpu" && checked.store_nodes.empty())
    if (auto opened = make_backend(checked.store_device); !opened)
      return make_troupe_error(troupe_errc::bad_config, "--store-device=" + checked.store_device
                                                          + ": " + opened.error().message);
  const auto described = *model_description::resolve(checked.model); // checked
  plan.parameter_count = described.parameter_count();
  plan.state_spans = described.state_spans();
  plan.ranges = *split_into_shards(plan.parameter_count, checked.store_shards); // checked
  if (checked.resume_path.empty()) {
    plan.start.parameters = checked.start_parameters.size() > 0
                              ? checked.start_parameters
                              : shared_floats{described.initial_parameters(checked.seed)};
    return plan;
  }
  if (auto err = resume_from(plan, train_count))
    return err;
  return plan;
}

store_config store_config_for(const run_plan& plan, uint32_t shard, uint64_t membership) {
  const run_config& c = plan.config;
  const shard_range range = plan.ranges[shard];
  const store_start& start = plan.start;
  store_config s;
  s.policy = c.policy;
  s.on_replica_loss = c.on_replica_loss;
  s.optimizer = c.optimizer;
  s.device = c.store_device;
  s.shard = shard;
  s.shards = c.store_shards;
  s.parameter_count = plan.parameter_count;
  s.initial_parameters = start.parameters.slice(range.offset, range.count);
  s.initial_version = start.version;
  if (start.optimizer_state.size() > 0)
    s.initial_optimizer_state = shared_floats{
      slice_optimizer_state(start.optimizer_state.data(), start.optimizer_state.size(),
                            plan.parameter_count, range)};
  s.initial_optimizer_steps = start.optimizer_steps;
  s.initial_round = start.round;
  s.learning_rate_factor = start.learning_rate_factor;
  s.state_spans = spans_within(plan.state_spans, range.offset, range.count);
  s.checkpoint_every = c.checkpoint_every;
  s.snapshot_every = c.snapshot_every;
  s.pin_core = c.pin_cores;
  s.trace = !c.trace_path.empty();
  s.membership = membership;
  s.wire = c.wire;
  return s;
}

replica_config replica_config_for(const run_plan& plan, uint32_t index, uint64_t membership) {
  const run_config& c = plan.config;
  replica_config r;
  r.index = index;
  r.replicas = c.replicas;
  r.model = c.model;
  r.device = plan.devices[index];
  r.store_device = c.store_device;
  r.data_dir = c.data_dir;
  r.seed = c.seed;
  r.global_batch = c.batch_size;
  r.step_timeout_ms = c.step_timeout_ms;
  r.pin_core = c.pin_cores;
  r.slowdown = index == c.slow.index ? c.slow.factor : 1.0f;
  r.trace = !c.trace_path.empty();
  r.membership = membership;
  r.train_rows = c.validation_split > 0 ? plan.train_rows : 0;
  r.class_weights = c.class_weights;
  // Without rounds each push is a step: its replica knows the whole gradient.
  r.gradient_norm = c.optimizer.global_clipnorm > 0.0f && !plan.traits.steps_per_round;
  r.wire = c.wire;
  r.coding.coded_answers = !c.whole_answers;
  r.coding.masked_pushes = !c.whole_pushes;
  r.coding.pushes_ahead = c.pushes_ahead;
  return r;
}

checkpoint_target checkpoint_target_for(const run_plan& plan) {
  const run_config& c = plan.config;
  return checkpoint_target{c.checkpoint_path, c.model, resume_settings(c), c.optimizer.name,
                           plan.parameter_count, c.store_shards};
}

} // namespace troupe::detail
