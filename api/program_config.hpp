// Every option of a training program: the run's (run_options), what a fit
// shows and writes (progress, metrics), the data to read and the model files
// to write. command_line parses it for --help and errors; fit sets the
// options it was given on a fresh one for each run's actor system.
#pragma once

#include <string>
#include <vector>

#include "actors/config/cluster_config.hpp"
#include "actors/config/run_options.hpp"

namespace troupe::detail {

/// Binds a training program's options.
struct program_config : cluster_config {
  run_options run{*this};
  std::string metrics;
  std::string tensorboard; // a directory: train/ and validation/ event files
  std::string progress = "auto"; // auto | bar | lines | off
  uint32_t log_every = 0;        // a metrics "step" record at least every N steps
  std::string train;             // a data source; empty: --data-dir's IDX files
  std::string test;
  std::string loss; // empty: what the program compiled
  std::string save;
  std::string start_from; // a saved model whose weights the run starts from
  std::string export_onnx;

  program_config(const std::string& program, const std::string& about);

  /// Checks the output options' values (a run's are check_run_config's).
  caf::error check_output_options() const;
};

} // namespace troupe::detail
