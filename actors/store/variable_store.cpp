// The variable store actor: its message handlers around a shard's state
// (store_state.hpp), and how a shard is set up and spawned, here or on a node.
#include "actors/store/variable_store.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <caf/all.hpp>

#include "actors/cluster/host_lanes.hpp"
#include "actors/runtime/core_pinning.hpp"
#include "actors/runtime/known_peers.hpp"
#include "actors/runtime/node_fault.hpp"
#include "actors/runtime/spawn_arguments.hpp"
#include "actors/runtime/trace_clock.hpp"
#include "actors/store/norm_exchange.hpp"
#include "actors/store/push_intake.hpp"
#include "actors/store/replica_watch.hpp"
#include "actors/store/store_state.hpp"
#include "messages/errors.hpp"
#include "model/backend/device_buffers.hpp"
#include "model/optim/averaged_state.hpp"
#include "model/shard_layout.hpp"

namespace troupe::detail {

namespace {

// Everything a shard starts with, built and checked before spawning.
struct store_setup {
  store_config options;
  shard_range range;
  shared_parameter_buffers shared_params; // in-place sync buffers, or none
  checkpoint_writer_actor writer;
  caf::actor owner; // the coordinator: a shard on a node ends with it
  std::shared_ptr<backend> device; // with a store device: where the shard steps
  std::unique_ptr<optimizer> optim;
  std::unique_ptr<update_policy> policy;
};

// What the shard is at now, for the coordinator's epoch records.
store_stats current_stats(store_state& st) {
  st.stats.version = st.version;
  st.stats.live_replicas = st.replicas.live();
  st.stats.staleness_reported = st.traits.reports_staleness;
  st.stats.dropped = st.policy->report().dropped;
  st.stats.waited_on = st.policy->report().waited_on;
  st.stats.membership = st.settings.membership;
  auto answer = st.stats;
  st.stats.trace.clear(); // each span is shipped once
  return answer;
}

// Moves what the setup built into the state.
void start_shard(store_pointer self, store_setup& setup) {
  auto& st = self->state;
  st.range = setup.range;
  st.version = setup.options.initial_version;
  st.traits = traits_of(setup.options.policy);
  if (setup.shared_params)
    st.buffers = std::make_unique<shard_buffers>(st.range, setup.shared_params,
                                                 st.traits.history_depth);
  else
    st.buffers = std::make_unique<shard_buffers>(st.range, setup.options.initial_parameters.data(),
                                                 setup.device, st.traits.history_depth);
  if (setup.device) {
    st.verdicts = std::make_unique<device_verdicts>(setup.device, setup.options.shard);
    st.uploads = std::make_unique<device_buffer_pool>(setup.device, st.range.count);
  }
  if (setup.options.pin_core) // then detached: this runs on the shard's own thread
    pin_this_thread(setup.options.shard);
  st.optim = std::move(setup.optim);
  // The answers' readers, maybe on other cores, hold the lines a step in
  // place writes; a step into the other shared buffer writes none they hold.
  st.optim->set_weights_shared(!st.buffers->steps_shared_buffers());
  st.policy = std::move(setup.policy);
  st.writer = std::move(setup.writer);
  st.settings = setup.options;
  st.settings.initial_parameters = shared_floats{};
  st.settings.initial_optimizer_state = shared_floats{};
  st.policy->set_next_round(setup.options.initial_round);
  st.epoch_first_round = setup.options.initial_round;
}

// Answers with `answer()` unless a clipped step waits for its norm: then the
// message stays in the mailbox, in order, until the step has run
// (clip_gate.hpp).
template <class T, class Answer>
caf::result<T> in_turn(store_pointer self, Answer answer) {
  if (self->state.waits_for_norm())
    return caf::skip;
  return answer();
}

// The parameters a shard answers the coordinator with while a clipped step
// waits for its norm: of the round of that step, which is not applied yet
// (a respawn orders its new replica from there, as every other shard does).
caf::expected<params_msg> settled(store_pointer self, caf::expected<params_msg> params) {
  if (params && self->state.waits_for_norm())
    params->round = self->state.gate->waiting_round();
  return params;
}

// Answers with `answer()`, or with the error of the last step on the store
// device if it was refused.
template <class T, class Answer>
caf::result<T> checked(store_pointer self, Answer answer) {
  if (auto err = self->state.check_device_verdict())
    return err;
  caf::expected<T> value = answer();
  if (!value)
    return value.error();
  return std::move(*value);
}

// A lane from the sender's process to this one (host_lanes.hpp), where this
// process has lanes.
caf::result<std::string> accept_lane(store_pointer self, const std::string& key,
                                     const std::string& ring, uint64_t capacity) {
  auto* lanes = host_lanes::of(self->system());
  const auto& sender = self->current_sender();
  if (lanes == nullptr || !sender)
    return make_troupe_error(troupe_errc::bad_config, "this process takes no lanes");
  auto name = lanes->accept_link(key, ring, capacity, sender->node());
  if (!name)
    return name.error();
  return std::move(*name);
}

store_actor::behavior_type variable_store(store_pointer self,
                                          std::shared_ptr<store_setup> setup) {
  start_shard(self, *setup);
  start_norm_exchange(self);
  const auto owner = setup->owner.address();
  if (setup->owner)
    self->monitor(setup->owner);
  self->set_down_handler([self, owner](caf::down_msg& msg) { on_down(self, owner, msg); });
  return {
    [self](push_atom, push_msg& push) {
      return in_turn<params_msg>(self, [&] { return take_push(self, push); });
    },
    [self](params_atom, uint64_t version) {
      return checked<params_msg>(self, [&] { return settled(self, self->state.answer_at(version)); });
    },
    [self](params_atom) {
      return checked<params_msg>(self, [&] { return settled(self, self->state.masters_value()); });
    },
    [self](await_atom, uint64_t round) { return await_round(self, round); },
    [self](halt_atom) { return halt_shard(self); },
    [self](halt_atom, uint64_t until) { return halt_shard_at(self, until); },
    [self](rate_atom, float factor) -> caf::result<bool> {
      if (self->state.waits_for_norm())
        return caf::skip;
      if (!(std::isfinite(factor) && factor > 0.0f))
        return make_troupe_error(troupe_errc::bad_config,
                                 "a learning-rate factor of " + std::to_string(factor)
                                   + " is not a positive number");
      self->state.settings.learning_rate_factor = factor;
      self->state.optim->set_learning_rate_factor(factor);
      return true;
    },
    [self](epoch_atom, uint64_t epoch, uint64_t first_round) -> caf::result<void> {
      if (self->state.waits_for_norm())
        return caf::skip;
      self->state.epoch = epoch;
      self->state.epoch_first_round = first_round;
      return caf::unit;
    },
    [self](save_atom) {
      return in_turn<checkpoint_part>(self, [&] {
        return checked<checkpoint_part>(self, [&] {
          self->state.rounds_since_checkpoint = 0; // the periodic count starts over
          return self->state.part(true);          // asked for at an epoch's end
        });
      });
    },
    [self](stats_atom) {
      return in_turn<store_stats>(self, [&] { return current_stats(self->state); });
    },
    [self](watch_atom, uint32_t index, replica_actor& replica, uint64_t membership) {
      return watch_replica(self, index, replica, membership);
    },
    [self](peers_atom, std::vector<caf::actor>& shards) { take_siblings(self, shards); },
    [self](norm_atom, const norm_msg& sum) { take_sibling_sum(self, sum); },
    [self](lane_atom, const std::string& key, const std::string& ring, uint64_t capacity) {
      return accept_lane(self, key, ring, capacity);
    },
  };
}

// The shard's optimizer: on the host, or with a store device in that
// device's memory (`device` is then set to its backend).
caf::expected<std::unique_ptr<optimizer>> make_shard_optimizer(const store_config& options,
                                                               size_t count,
                                                               std::shared_ptr<backend>& device) {
  if (options.device != "cpu") {
    auto opened = make_backend(options.device);
    if (!opened)
      return make_troupe_error(troupe_errc::device_failure,
                               "store shard " + std::to_string(options.shard) + " on "
                                 + options.device + ": " + opened.error().message);
    device = std::move(*opened);
  }
  auto optim = make_optimizer(options.optimizer, count, device.get());
  if (!optim)
    return to_caf_error(optim.error());
  if (!options.state_spans.empty() && device)
    return make_troupe_error(troupe_errc::bad_config,
                             "store shard " + std::to_string(options.shard)
                               + " averages the model's state on the host, not on "
                               + options.device);
  return with_averaged_state(std::move(*optim), options.state_spans);
}

caf::expected<std::shared_ptr<store_setup>> make_store_setup(store_config options,
                                                             checkpoint_writer_actor writer) {
  const auto bad = [&options](const std::string& why) {
    return make_troupe_error(troupe_errc::bad_config,
                             "store shard " + std::to_string(options.shard) + " " + why);
  };
  if (options.parameter_count == 0)
    options.parameter_count = options.initial_parameters.size();
  if (options.parameter_count == 0)
    return bad("has no initial parameters");
  if (options.shard >= options.shards)
    return bad("is outside 0.." + std::to_string(options.shards));
  auto ranges = split_into_shards(options.parameter_count, options.shards);
  if (!ranges)
    return to_caf_error(ranges.error());
  const shard_range range = (*ranges)[options.shard];
  if (options.initial_parameters.size() != range.count)
    return bad("got " + std::to_string(options.initial_parameters.size())
               + " initial parameters, expected " + std::to_string(range.count));
  auto setup = std::make_shared<store_setup>();
  auto optim = make_shard_optimizer(options, range.count, setup->device);
  if (!optim)
    return optim.error();
  auto policy = make_update_policy(options.policy, options.on_replica_loss, options.shard);
  if (!policy)
    return policy.error();
  if (options.initial_optimizer_state.size() > 0
      && !(*optim)->restore(options.initial_optimizer_state.to_vector(),
                            options.initial_optimizer_steps))
    return bad("cannot take the checkpoint's optimizer state: it does not fit optimizer "
               + options.optimizer.name);
  if (!(std::isfinite(options.learning_rate_factor) && options.learning_rate_factor > 0.0f))
    return bad("got a learning-rate factor of " + std::to_string(options.learning_rate_factor));
  (*optim)->set_learning_rate_factor(options.learning_rate_factor);
  setup->range = range;
  setup->writer = std::move(writer);
  setup->optim = std::move(*optim);
  setup->policy = std::move(*policy);
  setup->options = std::move(options);
  return setup;
}

// A shard a node cannot build (a store device it cannot open, a bad
// config): it stays up to answer the spawner's first question with the
// reason, as a monitor reaching an actor already gone only reports
// exit_reason::unknown. It ends once it has told, or with its owner.
store_actor::behavior_type failed_store(store_pointer self, caf::error reason,
                                        const caf::actor& owner) {
  if (owner)
    self->monitor(owner);
  self->set_down_handler([self, reason](caf::down_msg&) { self->quit(reason); });
  auto tell = [self, reason]() -> caf::error {
    self->quit(reason);
    return reason;
  };
  return {
    [tell](push_atom, push_msg&) mutable -> caf::result<params_msg> { return tell(); },
    [tell](params_atom) mutable -> caf::result<params_msg> { return tell(); },
    [tell](params_atom, uint64_t) mutable -> caf::result<params_msg> { return tell(); },
    [tell](stats_atom) mutable -> caf::result<store_stats> { return tell(); },
    [tell](watch_atom, uint32_t, replica_actor&, uint64_t) mutable -> caf::result<uint64_t> {
      return tell();
    },
    [tell](await_atom, uint64_t) mutable -> caf::result<uint64_t> { return tell(); },
    [tell](halt_atom) mutable -> caf::result<store_stats> { return tell(); },
    [tell](halt_atom, uint64_t) mutable -> caf::result<checkpoint_part> { return tell(); },
    [tell](rate_atom, float) mutable -> caf::result<bool> { return tell(); },
    [](epoch_atom, uint64_t, uint64_t) {},
    [tell](save_atom) mutable -> caf::result<checkpoint_part> { return tell(); },
    [](peers_atom, std::vector<caf::actor>&) {},
    [](norm_atom, const norm_msg&) {},
    [tell](lane_atom, const std::string&, const std::string&, uint64_t) mutable
    -> caf::result<std::string> { return tell(); },
  };
}

// What CAF's remote spawn runs on a node for --store-nodes. A shard the node
// cannot build logs why and tells the spawner (failed_store).
store_actor::behavior_type remote_store(store_pointer self, store_config config,
                                        checkpoint_writer_actor writer, caf::actor owner) {
  const uint32_t shard = config.shard;
  const uint32_t shards = config.shards;
  auto setup = node_refuses_store()
                 ? caf::expected<std::shared_ptr<store_setup>>{make_troupe_error(
                   troupe_errc::device_failure,
                   "this node refuses store shards (--fault=refuse-store@R)")}
                 : make_store_setup(std::move(config), std::move(writer));
  if (!setup) {
    std::fprintf(stderr, "troupe node: variable store shard %u of %u cannot start: %s\n", shard,
                 shards, describe(setup.error()).c_str());
    return failed_store(self, setup.error(), owner);
  }
  const auto& options = (*setup)->options;
  const std::string on_device = options.device == "cpu" ? "" : ", on " + options.device;
  std::fprintf(stderr, "troupe node: variable store shard %u of %u (%s, %s%s) started\n",
               options.shard, options.shards, options.policy.name.c_str(),
               options.optimizer.name.c_str(), on_device.c_str());
  self->attach_functor([shard = options.shard](const caf::error& reason) {
    std::fprintf(stderr, "troupe node: variable store shard %u stopped: %s\n", shard,
                 reason ? describe(reason).c_str() : "done");
  });
  (*setup)->owner = std::move(owner);
  return variable_store(self, std::move(*setup));
}

} // namespace

void add_store_actor_type(caf::actor_system_config& config) {
  // The shard stops with its owner, so a node keeps none without one it can
  // reach (known_peers.hpp); a job without checkpoints has no writer.
  auto check = [](const store_config&, const checkpoint_writer_actor& writer,
                  const caf::actor& owner) {
    if (!owner)
      return std::string{"its job names no owner, or one that no longer exists"};
    if (!greeted_node(owner.node()))
      return std::string{"its owner is on a node this node has not greeted"};
    if (writer && !greeted_node(writer.node()))
      return std::string{"its checkpoint writer is on a node this node has not greeted"};
    return std::string{};
  };
  // The node's --fault goes with the job; a pinned shard gets a thread of its
  // own to pin, as spawn_variable_store gives local ones.
  auto adjust = [](caf::actor_config& actor_cfg, store_config& job, checkpoint_writer_actor&,
                   caf::actor&) {
    const node_fault fault = planned_node_fault();
    job.fault_signal = fault.signal;
    job.fault_round = fault.round;
    if (job.pin_core)
      actor_cfg.flags |= caf::abstract_actor::is_detached_flag;
  };
  config.add_actor_factory(remote_store_type,
                           checked_actor_factory<store_config, checkpoint_writer_actor,
                                                 caf::actor>(remote_store_type, check, adjust,
                                                             caf::make_actor_factory(
                                                               remote_store)));
}

shared_parameter_buffers shared_parameter_buffers::holding(const std::vector<float>& initial) {
  return {std::make_shared<std::vector<float>>(initial),
          std::make_shared<std::vector<float>>(initial),
          std::make_shared<std::vector<float>>(initial.size())};
}

caf::expected<store_actor> spawn_variable_store(caf::actor_system& system, store_config config,
                                                checkpoint_writer_actor writer,
                                                shared_parameter_buffers shared) {
  auto setup = make_store_setup(std::move(config), std::move(writer));
  if (!setup)
    return setup.error();
  if (shared) {
    const size_t expected = (*setup)->options.parameter_count;
    if (!shared.other || shared.current->size() != expected || shared.other->size() != expected)
      return make_troupe_error(troupe_errc::bad_config,
                               "the shared parameter buffers hold "
                                 + std::to_string(shared.current->size()) + " and "
                                 + std::to_string(shared.other ? shared.other->size() : 0)
                                 + " floats, expected " + std::to_string(expected) + " each");
    if ((*setup)->device)
      return make_troupe_error(troupe_errc::bad_config,
                               "a store shard on " + (*setup)->options.device
                                 + " cannot step a shared host buffer in place");
    (*setup)->shared_params = std::move(shared);
  }
  // Pinned shards need a thread of their own to pin; others share CAF's
  // scheduler threads, which are free while replicas compute.
  if ((*setup)->options.pin_core)
    return system.spawn<caf::detached>(variable_store, std::move(*setup));
  return system.spawn(variable_store, std::move(*setup));
}

} // namespace troupe::detail
