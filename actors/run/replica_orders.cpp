// A replica's epoch order and its report (fenced against replaced actors),
// and what a lost replica's death does to the run.
#include <caf/all.hpp>

#include "actors/run/epoch_records.hpp"
#include "actors/run/epoch_phases.hpp"
#include "actors/run/respawn.hpp"
#include "actors/run/shard_respawn.hpp"
#include "actors/run/store_heal.hpp"
#include "messages/errors.hpp"
#include "model/data/batch_plan.hpp"

namespace troupe::detail {

void order_epoch(coordinator_pointer self, size_t index, const epoch_order& order) {
  auto& st = self->state;
  const batch_plan plan(st.setup.data.train->size(), st.setup.plan.config.batch_size,
                        st.replicas.size());
  // A replica waits at most one step timeout per round; this is the backstop.
  const auto epoch_timeout = step_timeout(st) * (plan.rounds() + 2);
  const auto ordered = st.replicas[index].actor.address();
  const size_t i = index;
  epoch_order addressed = order;
  addressed.membership = st.replicas[i].membership;
  self->request(st.replicas[i].actor, epoch_timeout, epoch_atom::value, std::move(addressed))
      .then(
        [self, i, ordered](replica_report& report) {
          auto& st = self->state;
          if (!counts_as_report(st, i, ordered, report))
            return;
          auto& slot = st.replicas[i];
          slot.report = report;
          slot.reported = true;
          auto& total = slot.total;
          total.replica = report.replica;
          total.samples += report.samples;
          total.loss_sum += report.loss_sum;
          total.correct += report.correct;
          total.pushes += report.pushes;
          total.compute_seconds += report.compute_seconds;
          total.wait_seconds += report.wait_seconds;
          collect_if_epoch_complete(self);
        },
        [self, i, ordered](caf::error& err) {
          if (self->state.replicas[i].actor.address() != ordered)
            return; // an actor respawned since: its own request answers for it
          if (err == caf::sec::request_receiver_down) {
            lose_replica(self, i, describe(err));
            return;
          }
          // A survivor whose shards stopped over another replica's death
          // (--on-replica-loss=abort): that death's own notice, which names
          // the replica and where it ran, ends the run.
          if (err.category() == caf::atom("troupe")
              && err.code() == static_cast<uint8_t>(troupe_errc::replica_lost))
            return;
          if (!self->state.replicas[i].alive)
            return;
          // A push that found its shard gone, before the shard's own down
          // message came: the store is the cause, as when the replica stops.
          if (err == troupe_errc::store_lost && !heals_store(self->state.setup.plan.config))
            fail_store_lost_by_replica(self, describe(err));
          else
            fail_run(self, err);
        });
}

bool counts_as_report(coordinator_state& st, size_t i, const caf::actor_addr& ordered,
                      const replica_report& report) {
  if (st.done)
    return false;
  const auto& slot = st.replicas[i];
  if (slot.actor.address() == ordered && report.membership == slot.membership && !slot.reported)
    return true;
  ++st.members.fenced_answers;
  return false;
}

void lose_replica(coordinator_pointer self, size_t index, const std::string& reason,
                  bool node_lost) {
  auto& st = self->state;
  auto& slot = st.replicas[index];
  if (st.done || !slot.alive || slot.respawning)
    return;
  const std::string what = "replica " + std::to_string(index) + " on " + slot.where.text
                           + " died in epoch "
                           + std::to_string(st.epoch + 1) + ": " + reason;
  const auto action = st.setup.plan.config.on_replica_loss;
  if (action == replica_loss_action::respawn) {
    if (rolls_back_replicas(st))
      roll_back_for_replica(self, index, what, reason, node_lost);
    else
      respawn_replica(self, index, what, reason, node_lost);
    return;
  }
  slot.alive = false;
  if (action == replica_loss_action::abort) {
    fail_run(self, make_troupe_error(troupe_errc::replica_lost,
                                     what + " (--on-replica-loss=abort)"));
    return;
  }
  if (live_count(st) == 0) {
    fail_run(self,
             make_troupe_error(troupe_errc::replica_lost, what + "; no replica is left"));
    return;
  }
  trace_instant(st, "replica " + std::to_string(index) + " lost");
  const auto live = live_count(st);
  warn(st, what + "; continuing with " + std::to_string(live)
             + (live == 1 ? " replica" : " replicas"));
  if (!slot.reported)
    collect_if_epoch_complete(self);
}

} // namespace troupe::detail
