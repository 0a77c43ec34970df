// The single-process fit loop.
#include "model/train/local_trainer.hpp"

#include <chrono>

#include "model/data/batch_plan.hpp"
#include "model/optim/global_norm.hpp"

namespace troupe::detail {

expected<local_trainer> local_trainer::make(const model_spec& spec, backend& compute,
                                            const optimizer_config& config,
                                            uint64_t seed, size_t batch_size) {
  if (batch_size == 0)
    return fail(errc::invalid_argument, "batch size must be at least 1");
  auto optim = make_optimizer(config, parameter_layout(spec).size());
  if (!optim)
    return optim.error();
  return local_trainer(spec, compute, std::move(*optim), config.global_clipnorm, seed,
                       batch_size);
}

local_trainer::local_trainer(const model_spec& spec, backend& compute,
                             std::unique_ptr<optimizer> optim, float global_clipnorm,
                             uint64_t seed, size_t batch_size)
  : net_(std::make_unique<network>(spec, compute, batch_size)),
    optimizer_(std::move(optim)),
    global_clipnorm_(global_clipnorm),
    seed_(seed),
    batch_size_(batch_size),
    params_(glorot_uniform_parameters(net_->layout(), seed)),
    gradient_(params_.size()),
    batch_images_(batch_size * static_cast<size_t>(spec.inputs)),
    batch_labels_(batch_size) {
}

epoch_report local_trainer::run_epoch(const dataset& train, uint64_t epoch) {
  const auto start = std::chrono::steady_clock::now();
  const auto order = epoch_permutation(static_cast<size_t>(train.count), seed_, epoch);
  const batch_plan plan(order.size(), batch_size_, 1);
  epoch_report report;
  for (size_t round = 0; round < plan.rounds(); ++round) {
    const auto slice = plan.slice(round, 0);
    gather_batch(train, order.data() + slice.begin, slice.size, batch_images_.data(),
                 batch_labels_.data());
    if (round + 1 < plan.rounds()) {
      const auto next = plan.slice(round + 1, 0);
      prefetch_rows(train, order.data() + next.begin, next.size);
    }
    net_->use_parameters(params_.data());
    report.train += net_->compute_gradient(batch_images_.data(), batch_labels_.data(),
                                           slice.size, gradient_.data());
    if (global_clipnorm_ > 0.0f)
      clip_by_global_norm(gradient_.data(), gradient_.size(), global_clipnorm_);
    optimizer_->apply(params_.data(), gradient_.data());
    ++report.steps;
  }
  report.seconds =
    std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return report;
}

batch_stats local_trainer::evaluate(const dataset& data) {
  net_->use_parameters(params_.data());
  return net_->evaluate(data.inputs.data(), data.labels.data(),
                        static_cast<size_t>(data.count));
}

} // namespace troupe::detail
