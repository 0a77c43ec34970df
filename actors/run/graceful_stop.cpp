// The coordinator's graceful stop: halt the shards, close the rounds up to
// one, write their parts as a checkpoint, end the run.
#include "actors/run/graceful_stop.hpp"

#include <algorithm>

#include <caf/all.hpp>

#include "actors/replica/gather.hpp"
#include "actors/run/shard_questions.hpp"
#include "actors/store/checkpoint_writer.hpp"
#include "messages/errors.hpp"

namespace troupe::detail {

namespace {

caf::error stopped_error(const std::string& where, const std::string& what) {
  return make_troupe_error(troupe_errc::stopped, "stopped " + where + ": " + what);
}

std::string resume_text(const run_config& c) {
  return "checkpoint written to " + c.checkpoint_path + " (resume with --resume="
         + c.checkpoint_path + ")";
}

// The shards' parts, all of round `until`: written with --checkpoint, and
// then the run ends.
void write_and_end(coordinator_pointer self, uint64_t until, std::vector<checkpoint_part>& parts) {
  auto& st = self->state;
  const auto& c = st.setup.plan.config;
  const std::string where = "at store round " + std::to_string(until) + " in epoch "
                            + std::to_string(st.epoch + 1) + " of " + std::to_string(c.epochs);
  if (c.checkpoint_path.empty() || !st.writer) {
    fail_run(self, stopped_error(where, "no --checkpoint, so nothing was written"));
    return;
  }
  self->request(st.writer, step_timeout(st), save_atom::value, std::move(parts))
    .then([self, where](uint64_t) {
            fail_run(self, stopped_error(where, resume_text(self->state.setup.plan.config)));
          },
          [self, where](caf::error& err) {
            fail_run(self, stopped_error(where, "the checkpoint could not be written: "
                                                  + describe(err)));
          });
}

// --wire=int8 under sync without backups (keeps_residuals_by_round): asks
// every replica for its residual from before its push of round `until` and
// gives `parts` their slices, then calls `then`. Without one of them the
// checkpoint keeps none, and its resume starts them at zero.
void add_residuals(coordinator_pointer self, uint64_t until, std::vector<checkpoint_part>& parts,
                   std::function<void(std::vector<checkpoint_part>&)> then) {
  auto& st = self->state;
  const auto live = [](const replica_slot& r) { return r.alive && !r.respawning; };
  if (!keeps_residuals_by_round(st.setup.plan)
      || !std::all_of(st.replicas.begin(), st.replicas.end(), live)) {
    then(parts);
    return;
  }
  auto kept = std::make_shared<std::vector<checkpoint_part>>(std::move(parts));
  gather<shared_floats>(
    st.replicas.size(),
    [self, until](size_t i) {
      return self->request(self->state.replicas[i].actor, step_timeout(self->state),
                           residual_atom::value, until);
    },
    [self, kept, then](std::vector<shared_floats>& residuals) {
      const size_t count = self->state.setup.plan.parameter_count;
      std::vector<float> all;
      for (const auto& residual : residuals)
        if (residual.size() == count)
          all.insert(all.end(), residual.data(), residual.data() + count);
      if (all.size() == residuals.size() * count)
        attach_residuals(*kept, all, count);
      then(*kept);
    },
    [self, kept, then](caf::error& err) {
      warn(self->state, "the stop's checkpoint keeps no int8 residuals (a resume starts them "
                        "at zero): "
                          + describe(err));
      then(*kept);
    });
}

} // namespace

void stop_gracefully(coordinator_pointer self) {
  auto& st = self->state;
  if (st.done || st.stop_graceful)
    return;
  st.stop_graceful = true;
  if (!st.training)
    return; // start_epoch ends the run, after the epoch's checkpoint
  if (!st.setup.plan.traits.steps_per_round || st.shards.empty()) {
    fail_run(self, stopped_error("in epoch " + std::to_string(st.epoch + 1),
                                 "a run without rounds resumes from its last epoch's "
                                 "checkpoint"));
    return;
  }
  ask_every_shard<store_stats>(
    self,
    [self](size_t k) {
      return self->request(self->state.shards[k].actor, step_timeout(self->state),
                           halt_atom::value);
    },
    [self](std::vector<store_stats>& halted) {
      uint64_t until = 0;
      for (const auto& shard : halted)
        until = std::max(until, shard.next_round);
      ask_every_shard<checkpoint_part>(
        self,
        [self, until](size_t k) {
          return self->request(self->state.shards[k].actor, step_timeout(self->state),
                               halt_atom::value, until);
        },
        [self, until](std::vector<checkpoint_part>& parts) {
          add_residuals(self, until, parts, [self, until](std::vector<checkpoint_part>& with) {
            write_and_end(self, until, with);
          });
        });
    });
}

void end_stopped_between_epochs(coordinator_pointer self) {
  auto& st = self->state;
  const auto& c = st.setup.plan.config;
  const std::string where = "after epoch " + std::to_string(st.epoch) + " of "
                            + std::to_string(c.epochs);
  fail_run(self, stopped_error(where, c.checkpoint_path.empty()
                                        ? "no --checkpoint, so nothing was written"
                                        : resume_text(c)));
}

} // namespace troupe::detail
