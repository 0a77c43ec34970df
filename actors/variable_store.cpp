// The variable store actor: validation, bookkeeping and answers around the
// update policy.
#include "actors/variable_store.hpp"

#include <chrono>
#include <cstdio>
#include <cstring>
#include <deque>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <caf/all.hpp>

#include "actors/core_pinning.hpp"
#include "actors/update_policy.hpp"
#include "messages/errors.hpp"
#include "model/backend/device_buffers.hpp"
#include "model/finite_check.hpp"
#include "model/optim/adam.hpp"
#include "model/shard_layout.hpp"

namespace troupe {

namespace {

using clock_type = std::chrono::steady_clock;

// Names where floats are, for errors: a device's memory or the host's.
std::string memory_name(const std::string& device) {
  return device.empty() ? "host memory" : device + " memory";
}

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

struct store_state : store_port {
  static inline const char* name = "troupe.store";

  shard_range range; // this shard's part of the flat buffer
  // The parameters: this shard's range of the buffer `params` points into,
  // from `base` on, in the memory the shard steps in: the host's, or with a
  // store device (--store-device) that device's, where the optimizer state
  // lives too. Either a buffer of the shard's own, shared with the answers
  // that carry it (the optimizer writes in place when no one else holds it,
  // else into a copy), or, for sync shards of one process on the host, two
  // buffers every shard writes its own range of in turn (`in_place`; base =
  // range.offset; see shared_parameter_buffers): a sync replica reads the
  // parameters only between a round's answer and its next push, and no
  // shard steps before every live replica has pushed.
  std::shared_ptr<float> params;
  size_t base = 0;
  bool in_place = false;
  std::shared_ptr<float> spare; // in place: the other shared buffer
  // Otherwise: buffers of older versions, reused once no answer holds them
  // (async replicas each hold the version they were answered).
  std::vector<std::shared_ptr<float>> retired;
  // The policy's history_depth() versions before the current one, oldest
  // first, with their version numbers (delayed answers from them).
  std::deque<std::pair<std::shared_ptr<float>, uint64_t>> history;
  size_t history_depth = 0;
  std::shared_ptr<backend> device; // the store device, or null; outlives `optim`
  std::unique_ptr<device_buffer_pool> uploads; // host gradients, copied to the device
  std::shared_ptr<const device_event> stepped; // fires once the last step is done
  // Gradients a replica on this device checked there (shared_floats::
  // non_finite), by where they start: the step skips itself on the device
  // if one is flagged, and the shard reads that verdict one step later
  // (`unchecked`), when the first push of the next round, a checkpoint or
  // the final parameters wait for it.
  struct device_checked {
    uint32_t replica = 0;
    uint64_t round = 0;
    std::weak_ptr<const float> flag; // the policy holds the gradient, and so the flag
  };
  std::unordered_map<const float*, device_checked> checked_on_device;
  struct step_verdict {
    std::shared_ptr<const device_event> done;
    std::shared_ptr<float> skipped; // page-locked: non-zero if the step skipped itself
    std::vector<std::pair<device_checked, std::shared_ptr<const float>>> flags;
  };
  std::optional<step_verdict> unchecked;
  std::shared_ptr<float> any_flagged;  // device: the sum of a step's flags
  std::shared_ptr<float> verdict_slot; // page-locked: one verdict is read before the next
  caf::error refused_on_device;        // a flagged gradient: every later push gets this
  caf::error stopped;                  // a replica died in an aborting run: every push gets this
  // On a device: a host copy of the parameters at version `host_version`,
  // made when someone needs the values on the host.
  std::shared_ptr<std::vector<float>> host_copy;
  uint64_t host_version = 0;
  std::unique_ptr<optimizer> optim;
  std::unique_ptr<update_policy> policy;
  uint64_t version = 0;
  // A push not answered yet: where the answer goes and the staleness it reports.
  struct open_push {
    caf::typed_response_promise<params_msg> promise;
    uint64_t staleness = 0;
    bool device_answer = false; // answer in device memory (push_msg::device_answer)
  };
  std::unordered_map<uint64_t, open_push> open; // by ticket
  uint64_t next_ticket = 0;
  std::unordered_map<caf::actor_addr, uint32_t> replicas;
  store_stats stats;
  store_config settings; // shard, interval, optimizer; no buffers
  checkpoint_writer_actor writer; // where periodic parts go; none without --checkpoint
  uint64_t epoch = 0;
  uint64_t epoch_first_round = 0;
  uint64_t rounds_since_checkpoint = 0;
  bool checkpoint_due = false; // a closed round made a periodic checkpoint due

  // A buffer for this shard's range, in the memory it steps in; on the
  // host not zeroed (a copy fills it).
  std::shared_ptr<float> new_buffer() const {
    if (device)
      return make_device_buffer(device, range.count);
    return std::shared_ptr<float>(new float[range.count], std::default_delete<float[]>());
  }

  // A retired buffer no answer holds any more, else a new one.
  std::shared_ptr<float> free_buffer() {
    for (auto& buffer : retired)
      if (buffer.use_count() == 1) {
        auto found = std::move(buffer);
        buffer = std::move(retired.back());
        retired.pop_back();
        return found;
      }
    return new_buffer();
  }

  // The current parameters as a host view: themselves, or (on a device) a
  // copy made once per version.
  shared_floats host_values() {
    if (!device)
      return shared_floats{params, base, range.count};
    if (host_version != version) {
      if (!host_copy || host_copy.use_count() > 1) // an answer still carries the older copy
        host_copy = std::make_shared<std::vector<float>>(range.count);
      device->copy_to_host(host_copy->data(), params.get(), range.count * sizeof(float));
      host_version = version;
    }
    return shared_floats{host_copy};
  }

  // This shard's part of a checkpoint: a periodic one (mid-epoch, as far as
  // the shard knows), or the one the coordinator asks for once an epoch is
  // complete.
  checkpoint_part part(bool epoch_complete) {
    checkpoint_part c;
    c.shard = settings.shard;
    c.shards = settings.shards;
    c.version = version;
    c.round = policy->next_round();
    c.epoch = epoch;
    c.epoch_round = c.round - epoch_first_round;
    c.epoch_complete = epoch_complete;
    c.optimizer_steps = optim->steps();
    c.params = shared_floats{host_values().to_vector()};
    c.optimizer_state = shared_floats{optim->state()};
    return c;
  }

  // The policy closed a round (store_port): count it towards the next
  // periodic checkpoint, which after_round sends once the policy returned.
  void round_closed() override {
    if (settings.checkpoint_every > 0 && ++rounds_since_checkpoint >= settings.checkpoint_every)
      checkpoint_due = true;
  }

  params_msg answer_value(uint64_t staleness, uint64_t steps_back = 0,
                          bool device_answer = false) {
    params_msg msg;
    msg.round = policy->next_round();
    msg.staleness = staleness;
    msg.offset = range.offset;
    msg.losses = policy->losses();
    std::shared_ptr<float> buffer = params;
    msg.version = version;
    if (steps_back > 0 && !history.empty()) {
      const auto& kept = history[history.size() - std::min(history.size(), steps_back)];
      buffer = kept.first;
      msg.version = kept.second;
    }
    if (!device || device_answer) { // a view where it is
      msg.values = shared_floats{std::move(buffer), base, range.count,
                                 device ? settings.device : std::string{}};
      msg.values.ready = stepped;
    } else if (buffer == params) { // the host copy of the current version
      msg.values = host_values();
    } else { // an older version, copied to the host for this answer
      std::vector<float> values(range.count);
      device->copy_to_host(values.data(), buffer.get(), range.count * sizeof(float));
      msg.values = shared_floats{std::move(values)};
    }
    return msg;
  }

  // The buffer the next step writes: this shard's range of the parameters.
  float* step_target() { return params.get() + base; }

  // After a step on a device, the answers carry an event that fires once it
  // is done: their readers queue behind it, and so does the pusher's next
  // gradient, into a buffer this step may still be reading. That holds for
  // every policy that steps a push before it answers it. One that answers
  // first (delayed, which keeps history) waits for the step instead.
  void step_done() {
    if (device) {
      if (history_depth > 0)
        device->finish();
      else
        stepped = device->record_event();
    }
    ++version;
  }

  void apply_step(const float* gradient, float lr_scale) override {
    make_writable();
    auto verdict = guard_step({weighted_gradient{1.0f, gradient}});
    optim->apply_scaled(step_target(), gradient, lr_scale);
    queue_verdict(std::move(verdict));
    step_done();
  }

  void apply_weighted_step(const std::vector<weighted_gradient>& terms) override {
    make_writable();
    auto verdict = guard_step(terms);
    optim->apply_weighted_sum(step_target(), terms);
    queue_verdict(std::move(verdict));
    step_done();
  }

  // Makes the next step skip itself on the device if a replica flagged one
  // of its gradients there: one flag is read as it is, several as their sum.
  std::optional<step_verdict> guard_step(const std::vector<weighted_gradient>& terms) {
    if (checked_on_device.empty())
      return std::nullopt;
    if (unchecked) // a policy closing several rounds at once
      (void) check_device_verdict();
    step_verdict verdict;
    std::vector<weighted_gradient> flag_terms;
    for (const auto& term : terms) {
      auto found = checked_on_device.find(term.gradient);
      if (found == checked_on_device.end())
        continue;
      if (auto flag = found->second.flag.lock()) {
        flag_terms.push_back(weighted_gradient{1.0f, flag.get()});
        verdict.flags.emplace_back(found->second, std::move(flag));
      }
      checked_on_device.erase(found);
    }
    if (flag_terms.empty())
      return std::nullopt;
    const float* skip_if = flag_terms.front().gradient;
    if (flag_terms.size() > 1) {
      if (!any_flagged)
        any_flagged = make_device_buffer(device, 1);
      device->weighted_sum(flag_terms, 1, any_flagged.get());
      skip_if = any_flagged.get();
    }
    optim->skip_next_step_if(skip_if); // Adam: the one optimizer on a device
    if (!verdict_slot)
      verdict_slot = make_host_buffer(device, 1);
    verdict.skipped = verdict_slot;
    device->queue_copy_to_host(verdict.skipped.get(), skip_if, sizeof(float));
    return verdict;
  }

  void queue_verdict(std::optional<step_verdict> verdict) {
    if (!verdict)
      return;
    verdict->done = device->record_event();
    unchecked = std::move(verdict);
  }

  // Reads the last step's verdict, waiting for that step if need be: an
  // error naming the replica and round of a gradient the device found NaN
  // or Inf in (the step left the parameters as they were). Once refused,
  // always refused: the run ends.
  caf::error check_device_verdict() {
    if (refused_on_device || !unchecked)
      return refused_on_device;
    auto verdict = std::move(*unchecked);
    unchecked.reset();
    verdict.done->wait_host();
    if (*verdict.skipped == 0.0f)
      return caf::none;
    std::string culprits;
    for (const auto& [checked, flag] : verdict.flags) {
      float value = 0.0f;
      device->copy_to_host(&value, flag.get(), sizeof(float));
      if (value != 0.0f)
        culprits += (culprits.empty() ? "" : "; ") + ("replica " + std::to_string(checked.replica)
                    + ": its gradient of round " + std::to_string(checked.round)
                    + " contains NaN or Inf");
    }
    refused_on_device = make_troupe_error(troupe_errc::bad_gradient,
                                          culprits + " (store shard "
                                            + std::to_string(settings.shard)
                                            + " did not apply it)");
    return refused_on_device;
  }

  void make_writable() {
    if (history_depth > 0) { // the version about to be stepped is kept: step a copy
      history.emplace_back(params, version);
      if (history.size() > history_depth)
        history.pop_front();
    }
    if (in_place) { // into the other buffer: no replica read it in this round
      std::memcpy(spare.get() + base, params.get() + base, range.count * sizeof(float));
      std::swap(params, spare);
    } else if (params.use_count() > 1) {
      // Someone still reads this version: step a copy, in a recycled buffer
      // when one is free (a fresh one page-faults on first touch, or costs a
      // device allocation).
      auto copy = free_buffer();
      const size_t bytes = range.count * sizeof(float);
      if (device)
        device->copy_to_device(copy.get(), params.get(), bytes);
      else
        std::memcpy(copy.get(), params.get(), bytes);
      retired.push_back(std::move(params));
      params = std::move(copy);
    }
  }

  // A gradient in host memory or on another device, copied to this
  // shard's device, so that the policy sees gradients here only. A copy from
  // another device finishes before the pusher gets its buffer back (it is
  // free once the returned view replaces the original); a host source is
  // read before copy_to_device returns.
  shared_floats copy_here(const shared_floats& gradient) {
    auto buffer = uploads->take();
    if (gradient.ready)
      device->wait_for(*gradient.ready);
    device->copy_to_device(buffer.get(), gradient.data(), gradient.size() * sizeof(float));
    if (gradient.on_device())
      device->finish();
    return shared_floats{std::move(buffer), 0, gradient.size(), settings.device};
  }

  void answer(uint64_t ticket) override { answer_from(ticket, 0); }

  void answer_from(uint64_t ticket, uint64_t steps_back) override {
    auto push = open.find(ticket);
    if (push == open.end())
      return;
    push->second.promise.deliver(
      answer_value(push->second.staleness, steps_back, push->second.device_answer));
    open.erase(push);
  }

  // The shard's own checks of a push, which leave it ready for the policy:
  // the size of its slice, memory the shard can read (a device shard first
  // copies a host gradient, or one on another device of its kind, to its
  // own), and finite values (a gradient in device memory comes checked by
  // the replica that computed it: see shared_floats; one in host memory
  // may come proven finite by its replica: see push_msg). Whether its
  // replica and round fit is the policy's call (on_push).
  caf::error take_gradient(push_msg& push) {
    const size_t size = push.gradient.size();
    if (!(size == range.count || (size == 0 && push.batch_size == 0)))
      return make_troupe_error(troupe_errc::bad_gradient,
                               "gradient from replica " + std::to_string(push.replica)
                                 + " has " + std::to_string(size) + " values for store shard "
                                 + std::to_string(settings.shard) + ", expected "
                                 + std::to_string(range.count));
    if (size == 0)
      return caf::none;
    const std::string here = device ? settings.device : std::string{};
    if (push.gradient.device == here && push.gradient.on_device() && push.gradient.non_finite) {
      checked_on_device[push.gradient.data()] =
        device_checked{push.replica, push.round, push.gradient.non_finite};
      if (push.gradient.ready) // the replica's step may still be writing it
        device->wait_for(*push.gradient.ready);
      return caf::none; // checked on the device: see guard_step
    }
    if (push.gradient.device != here) {
      if (push.gradient.on_device() && device_kind(push.gradient.device) != device_kind(here))
        return make_troupe_error(troupe_errc::bad_gradient,
                                 "gradient from replica " + std::to_string(push.replica)
                                   + " is in " + memory_name(push.gradient.device)
                                   + ", which store shard " + std::to_string(settings.shard)
                                   + " in " + memory_name(here) + " cannot read");
      push.gradient = copy_here(push.gradient);
    }
    if (push.proven_finite) // by its replica in this process, from its bounds
      return caf::none;
    if (device ? device->has_non_finite(push.gradient.data(), size)
               : has_non_finite(push.gradient.data(), size))
      return make_troupe_error(troupe_errc::bad_gradient,
                               "gradient from replica " + std::to_string(push.replica)
                                 + " contains NaN or Inf");
    return caf::none;
  }
};

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
