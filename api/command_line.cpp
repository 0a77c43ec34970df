// A training program's command line, parsed once: for --help and errors,
// and into the typed options it hands to fit.
#include <troupe/command_line.hpp>

#include <cstdio>
#include <list>
#include <set>
#include <utility>

#include "api/option_values.hpp"
#include "api/program_config.hpp"
#include "messages/errors.hpp"
#include "model/data/data_source.hpp"
#include "model/data/source_registry.hpp"
#include "model/data/dataset.hpp"

namespace troupe {

using namespace detail;

struct command_line::settings {
  program_config config;
  std::set<std::string> program_options; // add_option's: they stay out of fit's options
  // Option names live as long as the binding that points at them.
  std::list<std::string> names;
  settings(const std::string& program, const std::string& about) : config(program, about) {}

  template <class T>
  void add(const std::string& name, T& value, const std::string& help) {
    program_options.insert(name);
    names.push_back(name);
    config.bind(option_group::program, value, names.back().c_str(), help);
  }
};

command_line& command_line::add_option(const std::string& name, std::string& value,
                                       const std::string& help) {
  settings_->add(name, value, help);
  return *this;
}

command_line& command_line::add_option(const std::string& name, int64_t& value,
                                       const std::string& help) {
  settings_->add(name, value, help);
  return *this;
}

command_line& command_line::add_option(const std::string& name, double& value,
                                       const std::string& help) {
  settings_->add(name, value, help);
  return *this;
}

command_line& command_line::add_option(const std::string& name, bool& flag,
                                       const std::string& help) {
  settings_->add(name, flag, help);
  return *this;
}

command_line::command_line(std::string program, std::string about)
  : settings_(std::make_unique<settings>(program, about)) {
  options_.program = std::move(program);
  options_.stop_on_signals();
}

command_line::~command_line() = default;

std::optional<int> command_line::parse(int argc, char** argv) {
  if (auto exit_code = settings_->config.parse_and_prepare(argc, argv))
    return exit_code;
  if (auto err = settings_->config.check_output_options()) {
    std::fprintf(stderr, "error: %s\n", describe(err).c_str());
    return 2;
  }
  // What was read, as read: fit sets these values and reads no text again.
  std::vector<std::string> skipped(settings_->program_options.begin(),
                                   settings_->program_options.end());
  skipped.push_back("config-file");
  options_ = with_given_options(std::move(options_), settings_->config, skipped);
  return std::nullopt;
}

namespace {

// --train and --test, or --data-dir's IDX files for both.
expected<std::pair<std::string, std::string>> source_names(const program_config& c) {
  if (c.train.empty() != c.test.empty())
    return troupe::fail(errc::invalid_argument,
                        std::string(c.train.empty() ? "--test" : "--train")
                          + " needs its twin: name both --train and --test, or neither (then "
                            "--data-dir's IDX files)");
  if (!c.train.empty())
    return std::make_pair(c.train, c.test);
  auto run = c.run.to_run_config();
  const std::string dir = run ? run->data_dir : default_data_dir();
  return std::make_pair(dir, dir);
}

} // namespace

expected<source_pair> command_line::open_data() const {
  auto names = source_names(settings_->config);
  if (!names)
    return names.error();
  return open_data_pair(names->first, names->second);
}

expected<dataset_pair> command_line::load_data() const {
  auto names = source_names(settings_->config);
  if (!names)
    return names.error();
  // Built-in sources load into memory as they are; others are copied out.
  if (names_builtin_source(names->first) && names_builtin_source(names->second))
    return load_data_pair(names->first, names->second);
  auto opened = open_data_pair(names->first, names->second);
  if (!opened)
    return opened.error();
  return dataset_pair{opened->train->rows(0, opened->train->size()),
                      opened->test->rows(0, opened->test->size())};
}

std::string command_line::model_or(const std::string& compiled) const {
  if (!options_.has("model"))
    return compiled;
  auto c = settings_->config.run.to_run_config();
  return c ? c->model : compiled;
}

std::string command_line::save_path() const { return settings_->config.save; }

std::string command_line::onnx_path() const { return settings_->config.export_onnx; }

int command_line::fail(const error& error) const {
  if (error.code == errc::stopped) {
    // As a shell reports a process a signal ended: 130 for SIGINT, 143 for SIGTERM.
    const int signal_number = stop_signal();
    std::fprintf(stderr, "troupe %s: %s\n", options_.program.c_str(), error.message.c_str());
    return signal_number != 0 ? 128 + signal_number : 1;
  }
  std::fprintf(stderr, "error: %s\n", error.message.c_str());
  return error.code == errc::invalid_argument ? 2 : 1;
}

} // namespace troupe
