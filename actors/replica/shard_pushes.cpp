// A replica's push to the store's shards and its wait for their answers.
#include "actors/replica/shard_pushes.hpp"

#include <algorithm>
#include <string>

#include <caf/all.hpp>

#include "actors/replica/push_watchdog.hpp"
#include "actors/replica/wire_codings.hpp"
#include "actors/runtime/trace_clock.hpp"
#include "messages/errors.hpp"

namespace troupe::detail {

namespace {

using clock_type = replica_state::clock_type;

double seconds_between(clock_type::time_point from, clock_type::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

// The error a replica answers its epoch order with when its push to store
// shard `shard` (of `shards`) failed: the store's own refusal keeps its code
// (bad_gradient, stale_round, ...); CAF's request errors become the Troupe
// code they mean (the shard did not answer in time, or is gone), naming the
// shard; anything else is passed on as it is. `what` names the push for a
// person.
caf::error push_failure(const caf::error& err, const std::string& what, size_t shard,
                        size_t shards) {
  const std::string which =
    "store shard " + std::to_string(shard) + " of " + std::to_string(shards);
  if (err.category() == caf::atom("troupe"))
    return make_troupe_error(static_cast<troupe_errc>(err.code()), what + describe(err));
  if (err == caf::sec::request_timeout)
    return make_troupe_error(troupe_errc::timeout,
                             what + which + " did not answer: " + describe(err));
  if (err == caf::sec::request_receiver_down)
    return make_troupe_error(troupe_errc::store_lost, what + which + " is gone");
  return err;
}

// An answer whose parameters were read off the wire malformed, or could not
// be joined, named.
caf::error malformed_answer(const replica_state& st, const std::vector<params_msg>& parts) {
  if (!st.join_fault.empty())
    return make_troupe_error(troupe_errc::bad_gradient,
                             "replica " + std::to_string(st.setup->config.index) + ": "
                               + st.join_fault + " (round "
                               + std::to_string(st.first_round + st.next_round) + ")");
  for (size_t k = 0; k < parts.size(); ++k)
    if (!parts[k].values.fault.empty())
      return make_troupe_error(troupe_errc::bad_gradient,
                               "replica " + std::to_string(st.setup->config.index)
                                 + ": the answer of store shard " + std::to_string(k)
                                 + " to round " + std::to_string(st.first_round + st.next_round)
                                 + " arrived malformed: " + parts[k].values.fault);
  return caf::none;
}

// Takes the shards' answers to the push out and runs the next round.
void take_answers(replica_pointer self) {
  auto& st = self->state;
  st.waiting = false;
  auto& parts = st.out.answers;
  if (auto err = malformed_answer(st, parts)) {
    st.promise.deliver(std::move(err));
    return;
  }
  const auto answered = clock_type::now();
  st.residual_due = std::any_of(parts.begin(), parts.end(),
                                [](const params_msg& part) { return part.cut; });
  st.report.wait_seconds += seconds_between(st.pushed_at, answered);
  if (st.setup->config.trace)
    st.report.trace.push_back(make_trace_span(trace_kind::wait, st.first_round + st.next_round,
                                              st.pushed_at, answered));
  if (st.joins_as_answers_come) {
    st.params = joined_in(parts, st.joined);
  } else if (st.setup->device_handover) { // used on the device by the next compute
    st.params = params_msg{};
    st.params.version = parts.front().version;
    st.params.round = parts.front().round;
    st.params.staleness = parts.front().staleness;
    st.params.losses = std::move(parts.front().losses);
    st.device_parts = std::move(parts);
  } else {
    st.params = join_params(parts, st.setup->store.parameter_count, st.joined);
  }
  ++st.next_round;
  run_round(self);
}

// Takes shard k's answer to push `serial`: copied into the joined
// parameters at once where the shards do not all share one buffer with
// this replica; the next round runs once every shard answered.
void take_answer(replica_pointer self, uint64_t serial, size_t k, params_msg& part) {
  auto& st = self->state;
  if (!st.waiting || serial != st.pushes)
    return; // the watchdog or another shard's failure ended this push already
  if (st.joins_as_answers_come && part.values.fault.empty()) {
    const auto start = clock_type::now();
    join_shard_answer(st, k, part);
    if (st.setup->config.trace)
      st.report.trace.push_back(make_trace_span(
        trace_kind::join, st.first_round + st.next_round, start, clock_type::now()));
  }
  st.out.answers[k] = std::move(part);
  if (--st.out.missing == 0)
    take_answers(self);
}

void fail_push(replica_pointer self, uint64_t serial, size_t k, const caf::error& err) {
  auto& st = self->state;
  if (!st.waiting || serial != st.pushes)
    return;
  st.waiting = false;
  st.promise.deliver(push_failure(err,
                                  "replica " + std::to_string(st.setup->config.index)
                                    + ": push of round "
                                    + std::to_string(st.first_round + st.next_round)
                                    + " failed: ",
                                  k, st.setup->store.shards.size()));
}

// Starts the push of this round: answers from now on are this push's.
void open_push(replica_pointer self) {
  auto& st = self->state;
  const size_t shards = st.setup->store.shards.size();
  ++st.pushes;
  st.waiting = true;
  st.out.answers.assign(shards, params_msg{});
  st.out.sent.assign(shards, false);
  st.out.missing = shards;
}

// Sends shard k its slice of `push`. No timeout per request: each would
// wake CAF's clock thread twice per push; the watchdog bounds the wait.
void push_slice(replica_pointer self, const push_msg& push, size_t k) {
  auto& st = self->state;
  const auto& store = st.setup->store;
  const auto [offset, count] = store.ranges[k];
  push_msg slice = push;
  if (push.gradient.size() > 0)
    slice.gradient = push.gradient.slice(offset, count);
  if (push.device_gradient)
    slice.device_gradient = push.device_gradient.slice(offset, count);
  if (push.residual.size() > 0)
    slice.residual = push.residual.slice(offset, count);
  mask_push_zeros(self, k, slice);
  ask_delta(self, k, slice);
  st.out.sent[k] = true;
  const uint64_t serial = st.pushes;
  self->request(store.push_route(k), caf::infinite, push_atom::value, std::move(slice))
    .then([self, serial, k](params_msg& part) { take_answer(self, serial, k, part); },
          [self, serial, k](caf::error& err) { fail_push(self, serial, k, err); });
}

// Sends shard k its slice while the model computes on, once the model has
// written all of it; the batch's sums go with it.
void send_ahead(replica_pointer self, push_msg& push, size_t k, const batch_result& sums) {
  auto& st = self->state;
  const auto start = clock_type::now();
  if (st.out.sent.empty())
    open_push(self);
  push.loss_sum = sums.loss_sum;
  push_slice(self, push, k);
  ++st.report.coded.pushes_ahead;
  if (st.setup->config.trace)
    st.report.trace.push_back(
      make_trace_span(trace_kind::send, push.round, start, clock_type::now()));
}

} // namespace

std::optional<ahead_plan> plan_ahead(replica_pointer self, push_msg& push) {
  auto& st = self->state;
  const auto& cfg = st.setup->config;
  if (!cfg.coding.pushes_ahead || !st.joins_as_answers_come || cfg.wire == float_codec::int8
      || cfg.gradient_norm || cfg.slowdown > 1.0f
      || (cfg.fault_signal != 0 && push.round == cfg.fault_round))
    return std::nullopt;
  ahead_plan plan;
  const size_t shards = st.setup->store.shards.size();
  for (size_t k = 0; k < shards; ++k)
    plan.shards.push_back(reached_through_network(self, k));
  if (std::none_of(plan.shards.begin(), plan.shards.end(), [](bool ahead) { return ahead; }))
    return std::nullopt;
  plan.send = [self, &push](size_t k, const batch_result& sums) {
    send_ahead(self, push, k, sums);
  };
  return plan;
}

void push_rest(replica_pointer self, const push_msg& push) {
  auto& st = self->state;
  if (st.out.sent.empty())
    open_push(self);
  if (st.joins_as_answers_come) // writable before the first answer comes
    prepare_join(st);
  arm_watchdog(self);
  for (size_t k = 0; k < st.setup->store.shards.size(); ++k)
    if (!st.out.sent[k])
      push_slice(self, push, k);
}

} // namespace troupe::detail
