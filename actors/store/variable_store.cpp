// The variable store actor: its message handlers around a shard's state
// (store_state.hpp), and how a shard is set up and spawned, here or on a node.
#include "actors/store/variable_store.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <caf/all.hpp>

#include "actors/runtime/core_pinning.hpp"
#include "actors/runtime/known_peers.hpp"
#include "actors/runtime/node_fault.hpp"
#include "actors/runtime/spawn_arguments.hpp"
#include "actors/runtime/trace_clock.hpp"
#include "actors/store/store_state.hpp"
#include "messages/errors.hpp"
#include "model/backend/device_buffers.hpp"
#include "model/shard_layout.hpp"

namespace troupe {

namespace {

using clock_type = std::chrono::steady_clock;
using store_pointer = store_actor::stateful_pointer<store_state>;

// Called after each call into the policy: sends the writer this shard's part
// of a checkpoint or a snapshot a round that closed in it made due (a
// checkpoint's part is kept as a snapshot too).
void send_due_part(store_pointer self) {
  auto& st = self->state;
  if (!st.checkpoint_due && !st.snapshot_due)
    return;
  const bool checkpoint = st.checkpoint_due;
  st.checkpoint_due = st.snapshot_due = false;
  if (checkpoint)
    st.rounds_since_checkpoint = 0;
  st.rounds_since_snapshot = 0;
  if (st.check_device_verdict() || !st.writer) // never a part with a skipped step in it
    return;
  if (checkpoint)
    self->send(st.writer, part_atom::value, st.part(false));
  else
    self->send(st.writer, snapshot_atom::value, st.part(false));
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

// Counts a push the policy took into the shard's stats.
void count_push(store_state& st, const push_msg& push, uint64_t staleness) {
  ++st.stats.pushes;
  st.stats.samples += push.batch_size;
  st.stats.loss_sum += push.loss_sum;
  st.stats.staleness_sum += staleness;
  ++st.stats.staleness_count;
  st.stats.staleness_max = std::max(st.stats.staleness_max, staleness);
  if (st.stats.staleness_histogram.empty())
    st.stats.staleness_histogram.resize(staleness_buckets);
  ++st.stats.staleness_histogram[std::min<uint64_t>(staleness, staleness_buckets - 1)];
}

// With respawns, only the actor watched as a replica, in the membership
// epoch it was watched in, pushes as it: a late push of one that was
// replaced (declared lost, then heard from again) is refused and never
// applied.
caf::error fence_replaced(store_pointer self, const push_msg& push) {
  auto& st = self->state;
  if (st.settings.on_replica_loss != replica_loss_action::respawn)
    return caf::none;
  const auto sender = st.replicas.find(caf::actor_cast<caf::actor_addr>(self->current_sender()));
  const auto membership = st.replica_membership.find(push.replica);
  const uint64_t current = membership == st.replica_membership.end() ? 0 : membership->second;
  if (sender != st.replicas.end() && sender->second == push.replica
      && push.membership == current)
    return caf::none;
  ++st.stats.fenced;
  if (push.membership != current)
    return make_troupe_error(troupe_errc::fenced,
                             "a push as replica " + std::to_string(push.replica)
                               + " of membership epoch " + std::to_string(push.membership)
                               + "; the replica's actor is of epoch " + std::to_string(current));
  return make_troupe_error(troupe_errc::fenced,
                           "a push as replica " + std::to_string(push.replica)
                             + " from an actor that is not, or no longer, that replica");
}

// Under a policy whose respawned replicas go on from their next push
// (policy_traits::resumes_pushes), a push of a round this shard took from
// that replica already: the new actor of a replica whose dead one pushed
// that round here but not to every shard. It is answered without being used,
// so nothing is applied twice; from a replica never replaced it is refused.
std::optional<caf::result<params_msg>> answer_repeat(store_state& st, const push_msg& push) {
  if (!st.tracks_next_pushes())
    return std::nullopt;
  const auto next = st.next_push_round.find(push.replica);
  if (next == st.next_push_round.end() || push.round >= next->second)
    return std::nullopt;
  if (st.replaced.count(push.replica) == 0) {
    ++st.stats.rejected;
    return caf::result<params_msg>(make_troupe_error(
      troupe_errc::duplicate_push, "replica " + std::to_string(push.replica)
                                     + " pushed round " + std::to_string(push.round)
                                     + " again"));
  }
  return caf::result<params_msg>(st.answer_value(0, 0, push.device_answer));
}

// A push: the shard's own checks, then the policy's call. The answer comes
// when the policy answers its ticket (at once, or when its round closes).
caf::result<params_msg> take_push(store_pointer self, push_msg& push) {
  auto& st = self->state;
  if (st.settings.fault_signal != 0 && push.round == st.settings.fault_round)
    fire_node_fault(st.settings.fault_signal);
  if (auto fenced = fence_replaced(self, push)) {
    ++st.stats.rejected;
    return fenced;
  }
  if (auto repeat = answer_repeat(st, push))
    return std::move(*repeat);
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
  const uint64_t staleness = st.version >= push.base_version ? st.version - push.base_version
                                                             : 0;
  // Open before the policy sees the push: it may answer it at once.
  auto promise = self->make_response_promise<params_msg>();
  st.open.emplace(ticket, store_state::open_push{promise, staleness, push.device_answer,
                                                 push.batch_size, push.loss_sum});
  auto refused = st.policy->on_push(gradient_push{push.replica, push.round, push.batch_size,
                                                  std::move(push.gradient), ticket, staleness},
                                    st);
  if (refused) {
    st.open.erase(ticket);
    ++st.stats.rejected;
    promise.deliver(make_troupe_error(refused->code, refused->reason));
    return promise;
  }
  count_push(st, push, staleness);
  if (st.tracks_next_pushes())
    st.next_push_round[push.replica] = push.round + 1;
  const auto end = clock_type::now();
  st.stats.apply_seconds += std::chrono::duration<double>(end - start).count();
  if (st.settings.trace && st.policy->next_round() != round_before)
    st.stats.trace.push_back(make_trace_span(trace_kind::step, round_before, start, end));
  send_due_part(self);
  return promise;
}

// What the shard is at now, for the coordinator's epoch records.
store_stats current_stats(store_state& st) {
  st.stats.version = st.version;
  st.stats.live_replicas = static_cast<uint32_t>(st.replicas.size());
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

// A replica's death goes to the policy (which closes rounds without it, or
// stops); the coordinator's ends the shard: nobody is left to ask for its work.
void on_down(store_pointer self, const caf::actor_addr& owner, caf::down_msg& msg) {
  auto& st = self->state;
  if (owner && msg.source == owner) {
    self->quit(make_troupe_error(troupe_errc::store_lost,
                                 "its coordinator is gone: " + describe(msg.reason)));
    return;
  }
  auto replica = st.replicas.find(msg.source);
  if (replica == st.replicas.end())
    return;
  const auto index = replica->second;
  st.replicas.erase(replica);
  if (st.settings.on_replica_loss == replica_loss_action::respawn)
    return; // the round waits for the replica spawned in its place
  st.policy->on_replica_lost(index, st);
  send_due_part(self);
}

store_actor::behavior_type variable_store(store_pointer self,
                                          std::shared_ptr<store_setup> setup) {
  start_shard(self, *setup);
  const auto owner = setup->owner.address();
  if (setup->owner)
    self->monitor(setup->owner);
  self->set_down_handler([self, owner](caf::down_msg& msg) { on_down(self, owner, msg); });
  return {
    [self](push_atom, push_msg& push) { return take_push(self, push); },
    [self](params_atom, uint64_t version) -> caf::result<params_msg> {
      if (auto err = self->state.check_device_verdict())
        return err;
      return self->state.answer_at(version);
    },
    [self](params_atom) -> caf::result<params_msg> {
      if (auto err = self->state.check_device_verdict())
        return err;
      return self->state.answer_value(0);
    },
    [self](await_atom, uint64_t round) -> caf::result<uint64_t> {
      auto& st = self->state;
      if (round < st.policy->next_round())
        return st.policy->next_round();
      auto promise = self->make_response_promise<uint64_t>();
      st.awaited.emplace_back(round, promise);
      return promise;
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
    [self](stats_atom) { return current_stats(self->state); },
    [self](watch_atom, uint32_t index, replica_actor& replica,
           uint64_t membership) -> caf::result<uint64_t> {
      auto& st = self->state;
      // A handle to an actor that no longer exists arrives as null.
      if (!replica)
        return make_troupe_error(troupe_errc::unknown_replica,
                                 "asked to watch replica " + std::to_string(index)
                                   + ", an actor that no longer exists");
      self->monitor(replica);
      st.replica_membership[index] = membership;
      // Only the newest actor of a replica pushes as it (fence_replaced).
      for (auto it = st.replicas.begin(); it != st.replicas.end();)
        it = it->second == index ? st.replicas.erase(it) : std::next(it);
      st.replicas.emplace(replica.address(), index);
      if (st.watched.insert(index).second) {
        st.policy->on_replica_joined(index);
      } else { // a replica respawned in the place of one that died
        st.replaced.insert(index);
        st.policy->on_replica_replaced(index, st);
      }
      const auto next = st.next_push_round.find(index);
      return next == st.next_push_round.end() ? 0 : next->second;
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
  return std::move(*optim);
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
          std::make_shared<std::vector<float>>(initial)};
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

} // namespace troupe
