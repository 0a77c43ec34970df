// The device-resident fit loop: gather, gradient, advance, Adam, all queued
// on the backend, and for full batches replayed from one recording.
#include "model/train/device_trainer.hpp"

#include <chrono>

#include "model/data/batch_plan.hpp"
#include "model/optim/adam.hpp"
#include "model/parameter_layout.hpp"

namespace troupe::detail {

expected<std::unique_ptr<device_trainer>>
device_trainer::make(const model_spec& spec, backend& compute, const dataset& train,
                     const optimizer_config& optimizer, uint64_t seed,
                     size_t batch_size, bool record_steps) {
  if (compute.resident_ops() == nullptr)
    return fail(errc::invalid_argument,
                "the device-resident trainer cannot run on '" + compute.name()
                  + "': it has no resident_ops()");
  if (optimizer.name != "adam")
    return fail(errc::invalid_argument,
                "the device-resident trainer runs Adam only, not '" + optimizer.name + "'");
  if (optimizer.weight_decay != 0.0f || optimizer.schedule.kind != "constant"
      || optimizer.global_clipnorm != 0.0f)
    return fail(errc::invalid_argument,
                "the device-resident trainer runs Adam at a constant learning rate without "
                "weight decay or --global-clipnorm (it counts the steps on the device)");
  if (batch_size == 0)
    return fail(errc::invalid_argument, "batch size must be at least 1");
  if (train.count == 0)
    return fail(errc::invalid_argument, "the training set is empty");
  if (auto fits = check_model_fits(spec, *borrowed_source(train)); !fits)
    return fits.error();
  return std::unique_ptr<device_trainer>(new device_trainer(
    spec, compute, train, optimizer, seed, batch_size, record_steps));
}

device_trainer::device_trainer(const model_spec& spec, backend& compute,
                               const dataset& train, const optimizer_config& optimizer,
                               uint64_t seed, size_t batch_size, bool record_steps)
  : compute_(&compute),
    loop_(compute.resident_ops()),
    net_(spec, compute, batch_size),
    adam_(adam_settings(optimizer)),
    seed_(seed),
    batch_size_(batch_size),
    count_(static_cast<size_t>(train.count)),
    features_(train.features),
    record_steps_(record_steps),
    inputs_(compute, train.inputs.size()),
    labels_(compute, train.labels.size()),
    order_(compute, count_),
    m_(compute, net_.layout().size()),
    v_(compute, net_.layout().size()),
    counters_(compute, 1),
    step_mode_(record_steps ? "op by op until the first full batch is recorded"
                            : "op by op (recording turned off)") {
  inputs_.upload(train.inputs.data(), train.inputs.size());
  labels_.upload(train.labels.data(), train.labels.size());
  const auto initial = glorot_uniform_parameters(net_.layout(), seed);
  compute.copy_to_device(net_.device_parameters(), initial.data(),
                         initial.size() * sizeof(float));
  net_.use_device_parameters();
  compute.fill_zero(m_.data(), m_.size() * sizeof(float));
  compute.fill_zero(v_.data(), v_.size() * sizeof(float));
}

void device_trainer::queue_step(size_t rows) {
  const int batch_rows = static_cast<int>(rows);
  loop_->gather_rows(inputs_.data(), labels_.data(), features_, order_.data(),
                     counters_.data(), batch_rows, net_.staged_inputs(),
                     net_.staged_labels());
  net_.queue_staged_gradient(rows);
  loop_->advance_step(counters_.data(), batch_rows);
  loop_->adam_update_counted(net_.device_parameters(), net_.device_gradient(),
                             m_.data(), v_.data(), m_.size(), adam_, counters_.data());
}

// The first full batch runs op by op (it also loads every kernel the
// recording will use); the next ones replay its recording.
void device_trainer::run_full_step() {
  if (full_step_) {
    full_step_->replay();
    return;
  }
  queue_step(batch_size_);
  if (!record_steps_)
    return;
  auto recorded = loop_->record([this] { queue_step(batch_size_); });
  if (recorded) {
    full_step_ = std::move(*recorded);
    step_mode_ = "recorded (one replay per step)";
  } else {
    record_steps_ = false;
    step_mode_ = "op by op (" + recorded.error().message + ")";
  }
}

epoch_report device_trainer::run_epoch(uint64_t epoch) {
  const auto start = std::chrono::steady_clock::now();
  host_order_ = epoch_permutation(count_, seed_, epoch);
  order_.upload(host_order_.data(), count_);
  host_counters_.cursor = 0; // steps carry over: Adam's t runs on
  counters_.upload(&host_counters_, 1);
  const size_t full = count_ / batch_size_;
  const size_t rest = count_ % batch_size_;
  for (size_t step = 0; step < full; ++step)
    run_full_step();
  if (rest > 0)
    queue_step(rest);

  epoch_report report;
  report.train = net_.take_stats(); // waits for the device
  report.train.samples = static_cast<int64_t>(count_);
  report.steps = full + (rest > 0 ? 1 : 0);
  host_counters_.steps += static_cast<int64_t>(report.steps);
  report.seconds =
    std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return report;
}

std::vector<float> device_trainer::parameters() const {
  std::vector<float> params(net_.layout().size());
  compute_->copy_to_host(params.data(), net_.device_parameters(),
                         params.size() * sizeof(float));
  return params;
}

batch_stats device_trainer::evaluate(const dataset& data) {
  return net_.evaluate(data.inputs.data(), data.labels.data(),
                       static_cast<size_t>(data.count));
}

} // namespace troupe::detail
