// A store shard's intake of pushes, and the halt of a graceful stop.
#include "actors/store/push_intake.hpp"

#include <algorithm>
#include <chrono>
#include <string>
#include <utility>

#include <caf/all.hpp>

#include "actors/runtime/node_fault.hpp"
#include "actors/runtime/trace_clock.hpp"
#include "messages/errors.hpp"

namespace troupe::detail {

namespace {

using clock_type = std::chrono::steady_clock;

// The version a push asks its answer to be coded against, if it asks for
// one this shard answered with (not a shard before a heal).
std::optional<uint64_t> delta_base_of(const store_state& st, const push_msg& push) {
  if (!push.wants_delta || push.delta_membership != st.settings.membership)
    return std::nullopt;
  return push.delta_base;
}

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
caf::error fence_replaced(store_pointer self, const push_msg& push,
                          const caf::actor_addr& from) {
  auto& st = self->state;
  if (st.settings.on_replica_loss != replica_loss_action::respawn)
    return caf::none;
  const replica_entry* entry = st.replicas.find(push.replica);
  const uint64_t current = entry ? entry->membership : 0;
  if (st.replicas.is_live(push.replica, from) && push.membership == current)
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
// True if it answered `promise`.
bool answer_repeat(store_state& st, const push_msg& push,
                   caf::typed_response_promise<params_msg>& promise) {
  if (!st.tracks_next_pushes())
    return false;
  const replica_entry* entry = st.replicas.find(push.replica);
  if (!entry || !entry->next_push_round || push.round >= *entry->next_push_round)
    return false;
  if (!entry->replaced) {
    ++st.stats.rejected;
    promise.deliver(make_troupe_error(troupe_errc::duplicate_push,
                                      "replica " + std::to_string(push.replica)
                                        + " pushed round " + std::to_string(push.round)
                                        + " again"));
    return true;
  }
  promise.deliver(st.answer_value(0, 0, push.device_answer, delta_base_of(st, push)));
  return true;
}

// Keeps the residual a push of the waiting cut's round carries
// (store_state::residual_cut); refuses one read off the wire malformed.
caf::error take_residual(store_state& st, const push_msg& push) {
  const shared_floats& residual = push.residual;
  std::string fault = residual.fault;
  if (fault.empty() && residual.size() > 0 && residual.codec != float_codec::fp32)
    fault = std::string("it came as ") + codec_name(residual.codec) + ", not fp32";
  if (fault.empty() && residual.size() > 0 && residual.size() != st.range.count)
    fault = std::to_string(residual.size()) + " values for store shard "
            + std::to_string(st.settings.shard) + ", expected " + std::to_string(st.range.count);
  if (!fault.empty())
    return make_troupe_error(troupe_errc::bad_gradient,
                             "residual from replica " + std::to_string(push.replica)
                               + " for round " + std::to_string(push.round)
                               + " arrived malformed: " + fault);
  if (st.cut && push.round == st.cut->part.round) {
    st.cut->pushed.insert(push.replica);
    if (residual.size() > 0)
      st.cut->residuals[push.replica] = residual;
  }
  return caf::none;
}

// The residuals of `cut`, replica after replica, if every replica whose push
// came sent one and those are replicas 0 to N - 1; else none.
shared_floats joined_residuals(const store_state::residual_cut& cut, size_t count) {
  if (cut.residuals.size() != cut.pushed.size() || cut.pushed.empty()
      || *cut.pushed.rbegin() + 1 != cut.pushed.size())
    return {};
  std::vector<float> all;
  all.reserve(cut.residuals.size() * count);
  for (const auto& [replica, residual] : cut.residuals)
    all.insert(all.end(), residual.data(), residual.data() + residual.size());
  return shared_floats{std::move(all)};
}

void send_part(store_pointer self, checkpoint_part part, bool checkpoint) {
  auto& writer = self->state.writer;
  if (checkpoint)
    self->send(writer, part_atom::value, std::move(part));
  else
    self->send(writer, snapshot_atom::value, std::move(part));
}

// Sends the waiting cut's part, with the residuals, once its round has closed.
void send_finished_cut(store_pointer self) {
  auto& st = self->state;
  if (!st.cut || st.policy->next_round() <= st.cut->part.round)
    return;
  auto cut = std::move(*st.cut);
  st.cut.reset();
  cut.part.residuals = joined_residuals(cut, st.range.count);
  send_part(self, std::move(cut.part), cut.checkpoint);
}

// The shard's part of a graceful stop's checkpoint, once every round before
// the halt has closed in it.
void deliver_halted_part(store_pointer self) {
  auto& st = self->state;
  if (st.waits_for_norm() || !st.halted_part || !st.halt_at || st.policy->next_round() < *st.halt_at)
    return;
  auto promise = std::move(*st.halted_part);
  st.halted_part.reset();
  if (auto err = st.check_device_verdict())
    promise.deliver(std::move(err));
  else
    promise.deliver(st.part(false));
}

// A push from `sender`: the shard's own checks, then the policy's call,
// which answers `promise` (at once, or when its round closes).
void intake(store_pointer self, push_msg& push, caf::typed_response_promise<params_msg> promise,
            const caf::actor_addr& sender) {
  auto& st = self->state;
  if (st.settings.fault_signal != 0 && push.round == st.settings.fault_round)
    fire_node_fault(st.settings.fault_signal);
  if (auto fenced = fence_replaced(self, push, sender)) {
    ++st.stats.rejected;
    promise.deliver(std::move(fenced));
    return;
  }
  if (answer_repeat(st, push, promise))
    return;
  auto err = take_residual(st, push);
  if (!err)
    err = st.check_device_verdict();
  if (!err)
    err = st.take_gradient(push);
  if (!err && st.settings.optimizer.global_clipnorm > 0.0f && !st.gate && push.batch_size > 0
      && !(push.gradient_norm >= 0.0))
    err = make_troupe_error(troupe_errc::bad_gradient,
                            "gradient from replica " + std::to_string(push.replica)
                              + " carries no gradient norm, which --global-clipnorm needs");
  if (err) {
    ++st.stats.rejected;
    promise.deliver(std::move(err));
    return;
  }
  const auto start = clock_type::now();
  const uint64_t round_before = st.policy->next_round();
  const uint64_t ticket = st.next_ticket++;
  const uint64_t staleness = st.version >= push.base_version ? st.version - push.base_version
                                                             : 0;
  st.push_norm = push.gradient_norm;
  // Open before the policy sees the push: it may answer it at once.
  st.open.emplace(ticket, store_state::open_push{promise, staleness, push.device_answer,
                                                 delta_base_of(st, push), push.batch_size,
                                                 push.loss_sum});
  auto refused = st.policy->on_push(gradient_push{push.replica, push.round, push.batch_size,
                                                  std::move(push.gradient), ticket, staleness},
                                    st);
  if (refused) {
    st.open.erase(ticket);
    ++st.stats.rejected;
    promise.deliver(make_troupe_error(refused->code, refused->reason));
    return;
  }
  count_push(st, push, staleness);
  if (st.tracks_next_pushes())
    st.replicas.took_push(push.replica, push.round);
  const auto end = clock_type::now();
  st.stats.apply_seconds += std::chrono::duration<double>(end - start).count();
  if (st.settings.trace && st.policy->next_round() != round_before)
    st.stats.trace.push_back(make_trace_span(trace_kind::step, round_before, start, end));
  send_due_part(self);
  deliver_halted_part(self);
}

} // namespace

caf::result<params_msg> take_push(store_pointer self, push_msg& push) {
  // Before the promise, which takes the sender out of the message.
  const auto sender = caf::actor_cast<caf::actor_addr>(self->current_sender());
  auto promise = self->make_response_promise<params_msg>();
  auto& st = self->state;
  if (st.halt_at && push.round >= *st.halt_at)
    st.held.push_back(store_state::held_push{std::move(push), promise, sender});
  else
    intake(self, push, promise, sender);
  return promise;
}

store_stats halt_shard(store_pointer self) {
  auto& st = self->state;
  st.halt_at = st.policy->next_round();
  store_stats answer;
  answer.next_round = *st.halt_at;
  answer.version = st.version;
  answer.membership = st.settings.membership;
  return answer;
}

caf::result<checkpoint_part> halt_shard_at(store_pointer self, uint64_t until) {
  auto& st = self->state;
  auto promise = self->make_response_promise<checkpoint_part>();
  st.halt_at = until;
  st.halted_part = promise;
  release_held(self);
  deliver_halted_part(self);
  return promise;
}

void release_held(store_pointer self) {
  auto& st = self->state;
  if (!st.halt_at)
    return;
  auto waiting = std::move(st.held);
  st.held.clear();
  for (auto& held : waiting) {
    // Behind a clipped step that waits for its norm they wait on here.
    if (held.push.round < *st.halt_at && !st.waits_for_norm())
      intake(self, held.push, held.promise, held.sender);
    else
      st.held.push_back(std::move(held));
  }
}

void after_clipped_steps(store_pointer self) {
  release_held(self);
  send_due_part(self);
  deliver_halted_part(self);
}

// A checkpoint's part is kept as a snapshot too.
void send_due_part(store_pointer self) {
  auto& st = self->state;
  if (st.waits_for_norm())
    return;
  send_finished_cut(self); // before a new cut takes its place
  if (!st.checkpoint_due && !st.snapshot_due)
    return;
  const bool checkpoint = st.checkpoint_due;
  st.checkpoint_due = st.snapshot_due = false;
  if (checkpoint)
    st.rounds_since_checkpoint = 0;
  st.rounds_since_snapshot = 0;
  if (st.check_device_verdict() || !st.writer) // never a part with a skipped step in it
    return;
  if (st.cuts_with_residuals())
    st.cut = store_state::residual_cut{st.part(false), checkpoint, {}, {}};
  else
    send_part(self, st.part(false), checkpoint);
}

} // namespace troupe::detail
