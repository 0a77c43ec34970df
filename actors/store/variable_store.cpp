// The variable store actor: its message handlers around a shard's state
// (store_state.hpp), and how a shard is set up and spawned, here or on a node.
#include "actors/store/variable_store.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include <caf/all.hpp>

#include "actors/threads/core_pinning.hpp"
#include "actors/store/store_state.hpp"
#include "actors/policy/update_policy.hpp"
#include "messages/errors.hpp"
#include "model/backend/device_buffers.hpp"
#include "model/optim/adam.hpp"
#include "model/shard_layout.hpp"

namespace troupe {

namespace {

using clock_type = std::chrono::steady_clock;

// The Troupe error code a refused push is answered with: the refusal's namesake.
troupe_errc error_code(refusal_code code) {
  switch (code) {
    case refusal_code::unknown_replica: return troupe_errc::unknown_replica;
    case refusal_code::stale_round: return troupe_errc::stale_round;
    case refusal_code::unexpected_round: return troupe_errc::unexpected_round;
    case refusal_code::duplicate_push: return troupe_errc::duplicate_push;
  }
  return troupe_errc::bad_gradient;
}

using store_pointer = store_actor::stateful_pointer<store_state>;

// Called after each call into the policy: sends the writer this shard's part
// of a checkpoint a round that closed in it made due.
void send_due_part(store_pointer self) {
  auto& st = self->state;
  if (!st.checkpoint_due)
    return;
  st.checkpoint_due = false;
  st.rounds_since_checkpoint = 0;
  if (st.check_device_verdict()) // never a part with a skipped step in it
    return;
  if (st.writer)
    self->send(st.writer, part_atom::value, st.part(false));
}

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

store_actor::behavior_type variable_store(store_pointer self,
                                          std::shared_ptr<store_setup> setup) {
  auto& st = self->state;
  st.range = setup->range;
  st.version = setup->options.initial_version;
  if (setup->shared_params) {
    const auto& shared = setup->shared_params;
    st.params = std::shared_ptr<float>(shared.current, shared.current->data());
    st.spare = std::shared_ptr<float>(shared.other, shared.other->data());
    st.base = st.range.offset;
    st.in_place = true;
  } else {
    const float* initial = setup->options.initial_parameters.data();
    auto values = std::make_shared<std::vector<float>>(initial, initial + st.range.count);
    if (setup->device) { // the host copy of the initial version, and the buffer there
      st.device = setup->device;
      st.uploads = std::make_unique<device_buffer_pool>(st.device, st.range.count);
      st.params = st.new_buffer();
      st.device->copy_to_device(st.params.get(), values->data(), st.range.count * sizeof(float));
      // Answers carry it until the first step's (a delayed shard's, always):
      // a reader on another stream may not see the upload done otherwise.
      st.stepped = st.device->record_event();
      st.host_copy = std::move(values);
      st.host_version = st.version;
    } else {
      st.params = std::shared_ptr<float>(values, values->data());
    }
  }
  if (setup->options.pin_core) // then detached: this runs on the shard's own thread
    pin_this_thread(setup->options.shard);
  st.optim = std::move(setup->optim);
  // The answers' readers, maybe on other cores, hold the lines a step in
  // place writes; a step into the other shared buffer writes none they hold.
  st.optim->set_weights_shared(!st.in_place);
  st.policy = std::move(setup->policy);
  st.history_depth = st.policy->history_depth();
  st.writer = std::move(setup->writer);
  st.settings = setup->options;
  st.settings.initial_parameters = shared_floats{};
  st.settings.initial_optimizer_state = shared_floats{};
  st.policy->set_next_round(setup->options.initial_round);
  st.epoch_first_round = setup->options.initial_round;
  const auto owner = setup->owner.address();
  if (setup->owner)
    self->monitor(setup->owner);
  self->set_down_handler([self, owner](caf::down_msg& msg) {
    auto& st = self->state;
    if (owner && msg.source == owner) { // nobody is left to ask for its work
      self->quit(make_troupe_error(troupe_errc::store_lost,
                                   "its coordinator is gone: " + describe(msg.reason)));
      return;
    }
    auto replica = st.replicas.find(msg.source);
    if (replica == st.replicas.end())
      return;
    const auto index = replica->second;
    st.replicas.erase(replica);
    if (st.settings.abort_on_replica_loss) {
      // The coordinator ends the run on its own news of the death. Until
      // its exit comes, the survivors must not close rounds without the
      // lost replica: a periodic checkpoint of one would not be the run's.
      if (!st.stopped)
        st.stopped = make_troupe_error(troupe_errc::replica_lost,
                                       "replica " + std::to_string(index) + " died: store shard "
                                         + std::to_string(st.settings.shard)
                                         + " takes no more pushes (--on-replica-loss=abort)");
      for (auto& entry : st.open)
        entry.second.promise.deliver(st.stopped);
      st.open.clear();
      return;
    }
    st.policy->on_replica_lost(index, st);
    send_due_part(self);
  });
  return {
    [self](push_atom, push_msg& push) -> caf::result<params_msg> {
      auto& st = self->state;
      if (st.stopped) {
        ++st.stats.rejected;
        return st.stopped;
      }
      auto err = st.check_device_verdict();
      if (!err)
        err = st.take_gradient(push);
      if (err) {
        ++st.stats.rejected;
        return err;
      }
      const auto start = clock_type::now();
      const uint64_t round_before = st.policy->next_round();
      const uint64_t ticket = st.next_ticket++;
      const uint64_t staleness = st.version >= push.base_version
                                   ? st.version - push.base_version
                                   : 0;
      const uint32_t samples = push.batch_size;
      // Open before the policy sees the push: it may answer it at once.
      auto promise = self->make_response_promise<params_msg>();
      st.open.emplace(ticket, store_state::open_push{promise, staleness, push.device_answer});
      auto refused = st.policy->on_push(gradient_push{push.replica, push.round, samples,
                                                      std::move(push.gradient), ticket,
                                                      staleness},
                                        st);
      if (refused) {
        st.open.erase(ticket);
        ++st.stats.rejected;
        promise.deliver(make_troupe_error(error_code(refused->code), refused->reason));
        return promise;
      }
      ++st.stats.pushes;
      st.stats.samples += samples;
      st.stats.loss_sum += push.loss_sum;
      st.stats.staleness_sum += staleness;
      ++st.stats.staleness_count;
      st.stats.staleness_max = std::max(st.stats.staleness_max, staleness);
      if (st.stats.staleness_histogram.empty())
        st.stats.staleness_histogram.resize(staleness_buckets);
      ++st.stats.staleness_histogram[std::min<uint64_t>(staleness, staleness_buckets - 1)];
      const auto end = clock_type::now();
      st.stats.apply_seconds += std::chrono::duration<double>(end - start).count();
      if (st.settings.trace && st.policy->next_round() != round_before)
        st.stats.trace.push_back(make_trace_span(trace_kind::step, round_before, start, end));
      send_due_part(self);
      return promise;
    },
    [self](params_atom) -> caf::result<params_msg> {
      if (auto err = self->state.check_device_verdict())
        return err;
      return self->state.answer_value(0);
    },
    [self](epoch_atom, uint64_t epoch, uint64_t first_round) {
      self->state.epoch = epoch;
      self->state.epoch_first_round = first_round;
    },
    [self](save_atom) -> caf::result<checkpoint_part> {
      if (auto err = self->state.check_device_verdict())
        return err;
      self->state.rounds_since_checkpoint = 0; // the periodic count starts over
      return self->state.part(true);          // asked for at an epoch's end
    },
    [self](stats_atom) -> store_stats {
      auto& st = self->state;
      st.stats.version = st.version;
      st.stats.live_replicas = static_cast<uint32_t>(st.replicas.size());
      st.stats.staleness_reported = st.policy->reports_staleness();
      st.stats.dropped = st.policy->dropped();
      st.stats.waited_on = st.policy->waited_on();
      auto answer = st.stats;
      st.stats.trace.clear(); // each span is shipped once
      return answer;
    },
    [self](watch_atom, uint32_t index, replica_actor& replica) -> uint32_t {
      auto& st = self->state;
      self->monitor(replica);
      st.replicas.emplace(replica.address(), index);
      st.policy->on_replica_joined(index);
      return static_cast<uint32_t>(st.replicas.size());
    },
  };
}

// The shard's optimizer: on the host, or with a store device in that
// device's memory (`device` is then set to its backend). Adam is the one
// optimizer with a device step.
expected<std::unique_ptr<optimizer>> make_shard_optimizer(const store_config& options,
                                                          size_t count,
                                                          std::shared_ptr<backend>& device) {
  if (options.device == "cpu")
    return make_optimizer(options.optimizer, count);
  if (options.optimizer.name != "adam")
    return fail(model_errc::invalid_argument,
                "a store shard on " + options.device + " steps Adam only, not "
                  + options.optimizer.name);
  auto opened = make_backend(options.device);
  if (!opened)
    return fail(opened.error().code, "store shard " + std::to_string(options.shard) + " on "
                                       + options.device + ": " + opened.error().message);
  device = std::move(*opened);
  return std::unique_ptr<optimizer>(new adam(options.optimizer, count, *device));
}

expected<std::shared_ptr<store_setup>> make_store_setup(store_config options,
                                                        checkpoint_writer_actor writer) {
  if (options.parameter_count == 0)
    options.parameter_count = options.initial_parameters.size();
  if (options.parameter_count == 0)
    return fail(model_errc::invalid_argument, "the store needs initial parameters");
  if (options.shard >= options.shards)
    return fail(model_errc::invalid_argument,
                "store shard " + std::to_string(options.shard) + " is outside 0.."
                  + std::to_string(options.shards));
  auto ranges = split_into_shards(options.parameter_count, options.shards);
  if (!ranges)
    return ranges.error();
  const shard_range range = (*ranges)[options.shard];
  if (options.initial_parameters.size() != range.count)
    return fail(model_errc::invalid_argument,
                "store shard " + std::to_string(options.shard) + " got "
                  + std::to_string(options.initial_parameters.size())
                  + " initial parameters, expected " + std::to_string(range.count));
  auto setup = std::make_shared<store_setup>();
  auto optim = make_shard_optimizer(options, range.count, setup->device);
  if (!optim)
    return optim.error();
  auto policy = make_update_policy(options.mode, range.count,
                                   policy_settings{options.staleness, options.backup_replicas,
                                                   options.staleness_lr});
  if (!policy)
    return policy.error();
  if (options.initial_optimizer_state.size() > 0
      && !(*optim)->restore(options.initial_optimizer_state.to_vector(),
                            options.initial_optimizer_steps))
    return fail(model_errc::invalid_argument,
                "the checkpoint's optimizer state does not fit optimizer "
                  + options.optimizer.name);
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
    [tell](stats_atom) mutable -> caf::result<store_stats> { return tell(); },
    [tell](watch_atom, uint32_t, replica_actor&) mutable -> caf::result<uint32_t> {
      return tell();
    },
    [](epoch_atom, uint64_t, uint64_t) {},
    [tell](save_atom) mutable -> caf::result<checkpoint_part> { return tell(); },
  };
}

// What CAF's remote spawn runs on a node for --store-nodes. A shard the node
// cannot build logs why and tells the spawner (failed_store).
store_actor::behavior_type remote_store(store_pointer self, store_config config,
                                        checkpoint_writer_actor writer, caf::actor owner) {
  const uint32_t shard = config.shard;
  const uint32_t shards = config.shards;
  auto setup = make_store_setup(std::move(config), std::move(writer));
  if (!setup) {
    std::fprintf(stderr, "troupe node: variable store shard %u of %u cannot start: %s\n", shard,
                 shards, setup.error().message.c_str());
    return failed_store(self, to_caf_error(setup.error()), owner);
  }
  const auto& options = (*setup)->options;
  const std::string on_device = options.device == "cpu" ? "" : ", on " + options.device;
  std::fprintf(stderr, "troupe node: variable store shard %u of %u (%s, %s%s) started\n",
               options.shard, options.shards, options.mode.c_str(),
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
  config.add_actor_factory(remote_store_type,
                           [make = caf::make_actor_factory(remote_store)](
                             caf::actor_config& actor_cfg, caf::message& args) {
                             // A pinned shard gets a thread of its own to pin,
                             // as spawn_variable_store gives local ones.
                             if (args.match_element<store_config>(0)
                                 && args.get_as<store_config>(0).pin_core)
                               actor_cfg.flags |= caf::abstract_actor::is_detached_flag;
                             return make(actor_cfg, args);
                           });
}

shared_parameter_buffers shared_parameter_buffers::holding(const std::vector<float>& initial) {
  return {std::make_shared<std::vector<float>>(initial),
          std::make_shared<std::vector<float>>(initial)};
}

caf::expected<store_actor> spawn_variable_store(caf::actor_system& system, store_config config,
                                                checkpoint_writer_actor writer,
                                                shared_parameter_buffers shared) {
  auto setup = make_store_setup(std::move(config), std::move(writer));
  if (!setup)
    return to_caf_error(setup.error());
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

} // namespace troupe
