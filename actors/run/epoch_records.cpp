// An epoch's record, its test scores and the run's summary.
#include "actors/run/epoch_records.hpp"

#include <algorithm>

#include "actors/run/learning_rate.hpp"
#include "messages/errors.hpp"
#include "model/model_spec.hpp"

namespace troupe::detail {

uint32_t live_count(const coordinator_state& st) {
  return static_cast<uint32_t>(std::count_if(st.replicas.begin(), st.replicas.end(),
                                             [](const replica_slot& r) { return r.alive; }));
}

// Writes the test set's loss and accuracy under `params` into `record`: the
// one evaluation, after each epoch and for a resumed run with none left.
caf::error evaluate_test_set(coordinator_state& st, const params_msg& params,
                             epoch_record& record) {
  const data_source& test = *st.setup.data.test;
  auto scored = score_source(*st.evaluator, params.values.data(), test, st.metrics);
  if (!scored)
    return make_troupe_error(troupe_errc::bad_data, "the test set: " + scored.error().message);
  const double count = static_cast<double>(test.size());
  record.test_loss = count > 0 ? scored->sums.loss_sum / count : 0.0;
  record.test_accuracy = count > 0 ? static_cast<double>(scored->sums.correct) / count : 0.0;
  record.test_metrics.clear();
  for (size_t m = 0; m < st.metrics.size(); ++m)
    record.test_metrics.emplace_back(st.metrics[m].name(), scored->metrics[m]);
  return caf::none;
}

// Sums the replicas' reports and the store's work since the last epoch.
epoch_record sum_epoch(const coordinator_state& st, const store_stats& stats,
                       double seconds) {
  epoch_record record;
  record.epoch = st.epoch + 1;
  double loss_sum = 0;
  uint64_t correct = 0;
  uint64_t reported_samples = 0; // of replicas that finished the epoch
  for (const auto& replica : st.replicas) {
    if (!replica.reported)
      continue;
    const auto& report = replica.report;
    reported_samples += report.samples;
    loss_sum += report.loss_sum;
    correct += report.correct;
    record.compute_seconds += report.compute_seconds;
    record.wait_seconds += report.wait_seconds;
    record.coded += report.coded;
  }
  // Samples that went into updates, counted by the store: with a lost
  // replica this still covers its pushes and the survivors' takeover.
  const auto& last = st.last_stats;
  record.samples = stats.samples - last.samples + st.samples_before_heal;
  record.train_loss = reported_samples > 0 ? loss_sum / reported_samples : 0;
  record.train_accuracy = reported_samples > 0 ? double(correct) / reported_samples : 0;
  record.seconds = seconds;
  record.samples_per_second = seconds > 0 ? record.samples / seconds : 0;
  record.pushes = stats.pushes - last.pushes + st.pushes_before_heal;
  record.apply_seconds = stats.apply_seconds - last.apply_seconds;
  const auto staleness = stats.staleness_sum - last.staleness_sum;
  const auto slices = stats.staleness_count - last.staleness_count;
  record.staleness_mean = slices > 0 ? double(staleness) / slices : 0;
  record.staleness_max = stats.staleness_max;
  record.staleness_reported = stats.staleness_reported;
  record.dropped = stats.dropped - last.dropped;
  record.staleness_histogram = stats.staleness_histogram;
  for (size_t t = 0; t < last.staleness_histogram.size() && t < record.staleness_histogram.size();
       ++t)
    record.staleness_histogram[t] -= last.staleness_histogram[t];
  while (!record.staleness_histogram.empty() && record.staleness_histogram.back() == 0)
    record.staleness_histogram.pop_back(); // no trailing empty buckets in the metrics
  record.version = stats.version;
  record.learning_rate = last_step_learning_rate(st, stats.version);
  record.live_replicas = live_count(st);
  record.live_nodes = static_cast<uint32_t>(st.nodes.live_replica_nodes());
  record.respawns = st.respawns;
  record.fenced = stats.fenced - std::min(stats.fenced, last.fenced);
  record.fenced_answers = st.members.fenced_answers - st.members.fenced_answers_recorded;
  record.membership = st.members.epoch;
  return record;
}

// Builds the caller's summary from the final parameters.
fit_summary summarize(const coordinator_state& st, const params_msg& params) {
  fit_summary summary;
  summary.mode = st.setup.plan.config.policy.name;
  summary.replicas = static_cast<uint32_t>(st.replicas.size());
  summary.live_replicas = live_count(st);
  summary.respawns = st.respawns;
  summary.store_heals = st.heals;
  summary.membership = st.members.epoch;
  summary.epochs = st.setup.plan.config.epochs;
  summary.test_loss = st.last_record.test_loss;
  summary.test_accuracy = st.last_record.test_accuracy;
  summary.samples_per_second = st.train_seconds > 0 ? st.train_samples / st.train_seconds : 0;
  summary.version = params.version;
  summary.params_fnv1a64 = fnv1a64(params.values.data(), params.values.size() * sizeof(float));
  summary.params = params.values;
  summary.waited_on = st.last_stats.waited_on;
  summary.waited_on.resize(st.replicas.size());
  for (size_t i = 0; i < st.replicas.size(); ++i) {
    summary.replica_totals.push_back(st.replicas[i].total);
    if (!st.replicas[i].alive)
      summary.lost_replicas.push_back(static_cast<uint32_t>(i));
  }
  return summary;
}

} // namespace troupe::detail
