// The end of a failed run: every actor's exit, then, with a checkpoint
// writer, the wait for what the shards sent it before the error goes back.
#include <functional>
#include <memory>

#include <caf/all.hpp>

#include "actors/run/epoch_phases.hpp"

namespace troupe::detail {

namespace {

// Calls `then` once each live shard has answered, or bounced, a request
// sent behind its exit (fail_run says why).
void flush_shards_then(coordinator_pointer self, std::function<void()> then) {
  auto& st = self->state;
  // A shard may be dead already with its down message still on the way
  // (its replicas told first): that message, or the answer, settles it.
  auto shards_left = std::make_shared<size_t>(0);
  for (auto& shard : st.shards) {
    shard.flush_pending = shard.alive;
    *shards_left += shard.alive ? 1 : 0;
  }
  st.shard_flushed = [self, then, shards_left](size_t k) {
    auto& shards = self->state.shards;
    if (k >= shards.size() || !shards[k].flush_pending)
      return;
    shards[k].flush_pending = false;
    if (--*shards_left == 0)
      then();
  };
  if (*shards_left == 0) {
    then();
    return;
  }
  for (size_t k = 0; k < st.shards.size(); ++k)
    if (st.shards[k].alive)
      self->request(st.shards[k].actor, step_timeout(st), stats_atom::value)
        .then([self, k](store_stats&) { self->state.shard_flushed(k); },
              [self, k](caf::error&) { self->state.shard_flushed(k); });
}

} // namespace

void shutdown_run(coordinator_pointer self) {
  auto& st = self->state;
  if (st.setup.trace)
    st.setup.trace->close(st.nodes.clock_error_ns);
  for (auto& replica : st.replicas)
    self->send_exit(replica.actor, caf::exit_reason::user_shutdown);
  for (auto& shard : st.shards)
    self->send_exit(shard.actor, caf::exit_reason::user_shutdown);
  if (st.writer)
    self->send_exit(st.writer, caf::exit_reason::user_shutdown);
  self->quit();
}

void fail_run(coordinator_pointer self, caf::error err) {
  auto& st = self->state;
  if (st.done)
    return;
  st.done = true;
  st.members.end();
  if (!st.writer) {
    st.promise.deliver(std::move(err));
    shutdown_run(self);
    return;
  }
  // The run stops first: the surviving replicas and the shards get their
  // exits now, or they would go on closing rounds (a shard closes a round
  // over the live replicas) and a shard's periodic part could reach the
  // writer after fit() returned, replacing the file a resume is reading.
  for (auto& replica : st.replicas)
    self->send_exit(replica.actor, caf::exit_reason::user_shutdown);
  for (auto& shard : st.shards)
    self->send_exit(shard.actor, caf::exit_reason::user_shutdown);
  // Once the writer answers, every part sent before is on disk: ask it
  // after each live shard has answered, or bounced, a request sent behind
  // its exit, so that whatever the shard sent before it stopped is ahead of
  // the question in the writer's mailbox. A dead shard sends nothing more,
  // and a request to it would only time out.
  auto report = [self, err]() mutable {
    self->state.promise.deliver(std::move(err));
    shutdown_run(self);
  };
  auto ask_writer = [self, report]() {
    self->request(self->state.writer, step_timeout(self->state), stats_atom::value)
      .then([report](checkpoint_stats&) mutable { report(); },
            [report](caf::error&) mutable { report(); });
  };
  flush_shards_then(self, ask_writer);
}

} // namespace troupe::detail
