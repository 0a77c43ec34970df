// The built-in callbacks: early stopping, the best model's checkpoint, a CSV
// log of the epochs.
#include <troupe/callbacks.hpp>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <optional>
#include <stdexcept>

#include "model/model_spec.hpp"

namespace troupe {

using namespace detail;

namespace {

// The best value of one monitored figure so far, as Keras's callbacks keep it.
class best_tracker {
public:
  explicit best_tracker(std::string monitor, double min_delta = 0)
    : monitor_(std::move(monitor)), min_delta_(std::abs(min_delta)),
      higher_is_better_(monitor_.find("accuracy") != std::string::npos) {}

  const std::string& monitor() const { return monitor_; }

  status check(const std::vector<std::string>& metrics) const {
    for (const auto& name : metrics)
      if (name == monitor_)
        return {};
    std::string known;
    for (const auto& name : metrics)
      known += (known.empty() ? "" : ", ") + name;
    return fail(errc::invalid_argument,
                "a callback monitors '" + monitor_ + "', which this fit does not report (it "
                "reports " + known + ")");
  }

  /// Takes the epoch's value; true if it improved on the best so far.
  bool improved(const epoch_result& epoch) {
    const double value = epoch.metric(monitor_);
    if (std::isnan(value))
      return false;
    const bool better = !best_ || (higher_is_better_ ? value > *best_ + min_delta_
                                                     : value < *best_ - min_delta_);
    if (better)
      best_ = value;
    return better;
  }

private:
  std::string monitor_;
  double min_delta_;
  bool higher_is_better_;
  std::optional<double> best_;
};

class early_stopping_callback final : public callback {
public:
  early_stopping_callback(const std::string& monitor, uint32_t patience, double min_delta,
                          bool restore_best)
    : best_(monitor, min_delta), patience_(patience), restore_best_(restore_best) {}

  status check(const std::vector<std::string>& metrics) const override {
    return best_.check(metrics);
  }

  fit_action on_epoch_end(const epoch_result& epoch, const trained_model& model) override {
    if (best_.improved(epoch)) {
      waited_ = 0;
      if (restore_best_) {
        best_model_ = model;
        best_epoch_ = epoch;
      }
      return fit_action::go_on;
    }
    // As Keras: patience 0 stops at the first epoch that does not improve.
    if (++waited_ >= patience_ && epoch.epoch > 1) {
      stopped_ = true;
      return fit_action::stop;
    }
    return fit_action::go_on;
  }

  void on_train_end(history& result) override {
    if (!stopped_ || !restore_best_ || best_model_.parameters().empty())
      return;
    const auto& params = best_model_.parameters();
    result.model = best_model_;
    result.val_loss = best_epoch_.val_loss;
    result.val_accuracy = best_epoch_.val_accuracy;
    result.params_fnv1a64 = fnv1a64(params.data(), params.size() * sizeof(float));
  }

private:
  best_tracker best_;
  uint32_t patience_;
  bool restore_best_;
  uint32_t waited_ = 0;
  bool stopped_ = false;
  trained_model best_model_;
  epoch_result best_epoch_;
};

class save_best_callback final : public callback {
public:
  save_best_callback(std::string path, const std::string& monitor)
    : path_(std::move(path)), best_(monitor) {}

  status check(const std::vector<std::string>& metrics) const override {
    return best_.check(metrics);
  }

  fit_action on_epoch_end(const epoch_result& epoch, const trained_model& model) override {
    if (best_.improved(epoch))
      if (auto saved = model.save(path_); !saved)
        throw std::runtime_error("save_best: " + saved.error().message);
    return fit_action::go_on;
  }

private:
  std::string path_;
  best_tracker best_;
};

class reduce_on_plateau_callback final : public callback {
public:
  reduce_on_plateau_callback(const std::string& monitor, double factor, uint32_t patience,
                             double min_delta, uint32_t cooldown, double min_lr)
    : best_(monitor, min_delta), factor_(factor), patience_(patience), cooldown_(cooldown),
      min_lr_(min_lr) {}

  status check(const std::vector<std::string>& metrics) const override {
    if (!(factor_ > 0.0 && factor_ < 1.0))
      return fail(errc::invalid_argument,
                  "reduce_on_plateau: factor " + std::to_string(factor_)
                    + " must lie in (0, 1)");
    if (!(min_lr_ >= 0.0))
      return fail(errc::invalid_argument, "reduce_on_plateau: min_lr "
                                                  + std::to_string(min_lr_) + " is negative");
    return best_.check(metrics);
  }

  fit_action on_epoch_end(const epoch_result&, const trained_model&) override {
    return fit_action::go_on;
  }

  // As Keras's ReduceLROnPlateau.on_epoch_end.
  double learning_rate_factor(const epoch_result& epoch) override {
    if (cooling_ > 0) {
      --cooling_;
      waited_ = 0;
    }
    if (best_.improved(epoch)) {
      waited_ = 0;
      return 1.0;
    }
    if (cooling_ > 0 || ++waited_ < patience_)
      return 1.0;
    const double rate = epoch.learning_rate;
    if (!(rate > static_cast<float>(min_lr_)))
      return 1.0;
    cooling_ = cooldown_;
    waited_ = 0;
    return rate * factor_ >= min_lr_ ? factor_ : min_lr_ / rate;
  }

private:
  best_tracker best_;
  double factor_;
  uint32_t patience_;
  uint32_t cooldown_;
  double min_lr_;
  uint32_t waited_ = 0;
  uint32_t cooling_ = 0;
};

class csv_logger_callback final : public callback {
public:
  explicit csv_logger_callback(std::string path) : path_(std::move(path)) {}

  fit_action on_epoch_end(const epoch_result& epoch, const trained_model&) override {
    if (!out_.is_open()) {
      out_.open(path_, std::ios::trunc);
      out_ << "epoch,loss,accuracy,val_loss,val_accuracy,samples,seconds,samples_per_second,"
              "live_replicas,learning_rate";
      for (const auto& metric : epoch.metrics)
        out_ << ',' << metric.first;
      out_ << '\n';
    }
    char line[512];
    std::snprintf(line, sizeof(line), "%u,%.9g,%.9g,%.9g,%.9g,%llu,%.6f,%.1f,%u,%.9g", epoch.epoch,
                  epoch.loss, epoch.accuracy, epoch.val_loss, epoch.val_accuracy,
                  static_cast<unsigned long long>(epoch.samples), epoch.seconds,
                  epoch.samples_per_second, epoch.live_replicas, epoch.learning_rate);
    out_ << line;
    for (const auto& metric : epoch.metrics) {
      std::snprintf(line, sizeof(line), ",%.9g", metric.second);
      out_ << line;
    }
    out_ << '\n' << std::flush;
    if (!out_)
      throw std::runtime_error("csv_logger: cannot write " + path_);
    return fit_action::go_on;
  }

private:
  std::string path_;
  std::ofstream out_;
};

} // namespace

double epoch_result::metric(const std::string& name) const {
  if (name == "loss")
    return loss;
  if (name == "accuracy")
    return accuracy;
  if (name == "val_loss")
    return val_loss;
  if (name == "val_accuracy")
    return val_accuracy;
  if (name == "learning_rate")
    return learning_rate;
  for (const auto& [known, value] : metrics)
    if (known == name)
      return value;
  return std::numeric_limits<double>::quiet_NaN();
}

namespace callbacks {

std::shared_ptr<callback> early_stopping(const std::string& monitor, uint32_t patience,
                                         double min_delta, bool restore_best) {
  return std::make_shared<early_stopping_callback>(monitor, patience, min_delta, restore_best);
}

std::shared_ptr<callback> save_best(const std::string& path, const std::string& monitor) {
  return std::make_shared<save_best_callback>(path, monitor);
}

std::shared_ptr<callback> reduce_on_plateau(const std::string& monitor, double factor,
                                            uint32_t patience, double min_delta,
                                            uint32_t cooldown, double min_lr) {
  return std::make_shared<reduce_on_plateau_callback>(monitor, factor, patience, min_delta,
                                                      cooldown, min_lr);
}

std::shared_ptr<callback> csv_logger(const std::string& path) {
  return std::make_shared<csv_logger_callback>(path);
}

} // namespace callbacks

} // namespace troupe
