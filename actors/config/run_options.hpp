// A run's options on a program's command line: every field of run_config
// bound with its section, default and unit, and the texts of the typed ones
// (devices, node lists, the loss action, ...) parsed into run_config once.
#pragma once

#include <string>

#include <caf/expected.hpp>

#include "actors/config/cluster_config.hpp"
#include "actors/config/run_config.hpp"

namespace troupe::detail {

/// Binds a run's options to `cli` (which must outlive this) and builds the
/// run_config they describe.
class run_options {
public:
  explicit run_options(cluster_config& cli);

  run_options(const run_options&) = delete;
  run_options& operator=(const run_options&) = delete;

  /// Returns the run the command line and config file describe, with the
  /// cluster's TLS and core pinning; not yet checked against the data
  /// (check_run_config does that).
  caf::expected<run_config> to_run_config() const;

private:
  void bind_distribution();
  void bind_store();
  void bind_failures();

  cluster_config& cli_;
  run_config config_; // numbers and plain texts bind here directly
  std::string devices_ = "cpu";
  std::string nodes_;
  std::string store_nodes_;
  std::string store_node_;
  std::string on_replica_loss_; // empty: respawn where the mode can, else abort
  std::string respawn_ = "nodes";
  std::string accept_joins_; // [ADDRESS:]PORT; empty: no joins
  std::string staleness_lr_ = "none";
  std::string slow_replica_;
  std::string weight_decay_; // empty: the optimizer's default (optimizer_kind)
  std::string lr_schedule_ = "constant";
  std::string class_weights_; // CLASS:WEIGHT,...; empty: every sample weighs 1
  std::string wire_ = "fp32";
};

/// Parses a --devices value: "cpu", a list such as "cuda:0,cuda:1", or "auto"
/// (whether each names a device is check_run_config's call).
caf::expected<device_plan> parse_devices(const std::string& text);

} // namespace troupe::detail
