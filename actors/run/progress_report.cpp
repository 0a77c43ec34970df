// The progress of the epoch under way, from store shard 0's counters, polled
// once per progress interval while an observer listens.
#include <chrono>

#include <caf/all.hpp>

#include "actors/run/epoch_phases.hpp"
#include "model/data/batch_plan.hpp"

namespace troupe::detail {

void report_progress(coordinator_pointer self, uint32_t epoch) {
  auto& st = self->state;
  if (st.done || epoch != st.epoch + 1 || st.shards.empty())
    return;
  // The next report follows this one whatever its answer: a heal may
  // replace shard 0 while the counters travel, or leave no shard 0 yet.
  auto next = [self, epoch] {
    auto& st = self->state;
    if (!st.done && epoch == st.epoch + 1)
      self->delayed_send(caf::actor_cast<coordinator_actor>(self),
                         st.setup.observer.progress_interval, tick_atom::value, epoch);
  };
  if (!st.shards.front().actor) {
    next();
    return;
  }
  self->request(st.shards.front().actor, step_timeout(st), stats_atom::value)
    .then(
      [self, epoch, next](store_stats& stats) {
        auto& st = self->state;
        if (st.done || epoch != st.epoch + 1)
          return; // the epoch ended while the counters travelled
        if (stats.membership != st.members.store_epoch) {
          ++st.members.fenced_answers; // from a shard a heal replaced since
          next();
          return;
        }
        const auto now = std::chrono::steady_clock::now();
        const auto& options = st.setup.plan.config;
        epoch_progress progress;
        progress.epoch = epoch;
        progress.epochs = options.epochs;
        progress.samples = stats.samples - st.last_stats.samples + st.samples_before_heal;
        progress.epoch_samples = static_cast<uint64_t>(st.setup.data.train->size());
        progress.rounds = batch_plan(st.setup.data.train->size(),
                                     options.batch_size, st.replicas.size())
                            .rounds();
        progress.seconds = std::chrono::duration<double>(now - st.epoch_start).count();
        progress.train_loss = progress.samples > 0
                                ? (stats.loss_sum - st.last_stats.loss_sum) / progress.samples
                                : 0;
        progress.version = stats.version;
        progress.run_samples = st.train_samples + progress.samples;
        progress.run_seconds = std::chrono::duration<double>(now - st.setup.run_start).count();
        if (st.setup.trace) // the poll took shard 0's spans: keep them for the epoch's end
          st.shards[0].spans.insert(st.shards[0].spans.end(), stats.trace.begin(),
                                    stats.trace.end());
        st.setup.observer.on_progress(progress);
        next();
      },
      [next](caf::error&) { next(); }); // a missed report is not worth failing the run
}

} // namespace troupe::detail
