// The --tensorboard log of a fit.
#include "api/tensorboard_log.hpp"

#include <chrono>
#include <cstdio>
#include <utility>
#include <vector>

#include "actors/report/tensorboard_file.hpp"
#include "messages/errors.hpp"

namespace troupe::detail {

namespace {

double seconds_since_unix_epoch() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
    .count();
}

expected<std::unique_ptr<tensorboard_file>> open_file(const std::string& dir) {
  auto file = tensorboard_file::open(dir);
  if (!file)
    return fail(errc::io, describe(file.error()));
  return std::make_unique<tensorboard_file>(std::move(*file));
}

} // namespace

tensorboard_log::tensorboard_log(std::unique_ptr<tensorboard_file> train,
                                 std::unique_ptr<tensorboard_file> validation)
  : train_(std::move(train)), validation_(std::move(validation)) {
}

tensorboard_log::~tensorboard_log() = default;

expected<std::unique_ptr<tensorboard_log>> tensorboard_log::open(const std::string& dir) {
  auto train = open_file(dir + "/train");
  if (!train)
    return train.error();
  auto validation = open_file(dir + "/validation");
  if (!validation)
    return validation.error();
  return std::unique_ptr<tensorboard_log>(
    new tensorboard_log(std::move(*train), std::move(*validation)));
}

void tensorboard_log::write_epoch(const epoch_record& r,
                                  reported_metrics scores) {
  if (failed_)
    return;
  const bool accuracy = scores == reported_metrics::loss_and_accuracy;
  std::vector<std::pair<std::string, float>> train{{"epoch_loss", float(r.train_loss)}};
  if (accuracy)
    train.emplace_back("epoch_accuracy", float(r.train_accuracy));
  train.emplace_back("epoch_learning_rate", float(r.learning_rate));
  train.emplace_back("epoch_samples_per_second", float(r.samples_per_second));
  if (r.staleness_reported)
    train.emplace_back("epoch_staleness_mean", float(r.staleness_mean));
  std::vector<std::pair<std::string, float>> validation{{"epoch_loss", float(r.test_loss)}};
  if (accuracy)
    validation.emplace_back("epoch_accuracy", float(r.test_accuracy));
  for (const auto& [name, value] : r.test_metrics)
    validation.emplace_back("epoch_" + name, float(value));
  const double now = seconds_since_unix_epoch();
  auto err = train_->write_scalars(r.epoch, now, train);
  if (!err)
    err = validation_->write_scalars(r.epoch, now, validation);
  if (err) {
    failed_ = true;
    std::fprintf(stderr, "warning: %s; no more TensorBoard records are written\n",
                 describe(err).c_str());
  }
}

} // namespace troupe::detail
