// The command line of a training program: every option of a fit (--mode,
// --replicas, --nodes, --tls-*, --checkpoint, ...), the data to train on
// (--train, --test, --data-dir), and what to write when done (--save,
// --export-onnx), with --help and errors that name the option.
#pragma once

#include <troupe/export.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include <troupe/data_source.hpp>
#include <troupe/dataset.hpp>
#include <troupe/expected.hpp>
#include <troupe/fit.hpp>

namespace troupe {

/// Parses and holds a training program's command line.
class TROUPE_API command_line {
public:
  /// A command line for `program` (as --help and the banner name it), whose
  /// --help opens with `about`.
  command_line(std::string program, std::string about);
  ~command_line();

  /// Adds the program's own option --`name` before parse(): --help lists it
  /// under "This program" with `help` and its current value as the default;
  /// parse() sets `value` from the command line or the config file (a flag:
  /// bare, or =true or =false), and a value that does not read as its type
  /// is an error naming the option. The option never reaches fit. `value`
  /// must outlive parse().
  command_line& add_option(const std::string& name, std::string& value, const std::string& help);
  command_line& add_option(const std::string& name, int64_t& value, const std::string& help);
  command_line& add_option(const std::string& name, double& value, const std::string& help);
  command_line& add_option(const std::string& name, bool& flag, const std::string& help);

  /// Reads the command line (and any --config-file). Returns the exit code
  /// when the program should stop here: 0 after --help, 2 after printing
  /// what was wrong; nothing when it should go on.
  std::optional<int> parse(int argc, char** argv);

  /// Returns the options to pass to fit: the command line's, with
  /// stop_on_signals on.
  const fit_options& options() const { return options_; }

  /// Opens the training and test sources: --train and --test (each a
  /// registered "kind[:settings]", an IDX directory, "X.npy,y.npy" or
  /// "file.csv[:label=COLUMN]"), by default the IDX files of --data-dir.
  expected<source_pair> open_data() const;

  /// Loads the training and test sets into memory (open_data, copied).
  expected<dataset_pair> load_data() const;

  /// Returns --model when it was given, else `compiled` (the program's own).
  std::string model_or(const std::string& compiled) const;

  /// Returns --save's file, or empty (fit writes it).
  std::string save_path() const;

  /// Returns --export-onnx's file, or empty (fit writes it).
  std::string onnx_path() const;

  /// Prints "error: ..." to stderr and returns the exit code for it: 2 for
  /// a bad option (invalid_argument), 128 + the signal for a run a signal
  /// stopped (its line says where it stopped, without "error"), 1 for
  /// anything else.
  int fail(const error& error) const;

private:
  struct settings;
  std::unique_ptr<settings> settings_;
  fit_options options_;
};

} // namespace troupe
