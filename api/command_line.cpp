// A training program's command line, parsed once for --help and errors, and
// kept as arguments for fit, which parses them again for its actor system.
#include <troupe/command_line.hpp>

#include <cstdio>
#include <utility>

#include "api/program_config.hpp"
#include "messages/errors.hpp"
#include "model/data/data_source.hpp"
#include "model/data/source_registry.hpp"
#include "model/data/dataset.hpp"

namespace troupe {

struct command_line::settings {
  program_config config;
  settings(const std::string& program, const std::string& about) : config(program, about) {}
};

command_line::command_line(std::string program, std::string about)
  : settings_(std::make_unique<settings>(program, about)) {
  options_.program = std::move(program);
}

command_line::~command_line() = default;

std::optional<int> command_line::parse(int argc, char** argv) {
  if (auto exit_code = settings_->config.parse_and_prepare(argc, argv))
    return exit_code;
  if (auto err = settings_->config.check_output_options()) {
    std::fprintf(stderr, "error: %s\n", describe(err).c_str());
    return 2;
  }
  for (int i = 1; i < argc; ++i) {
    const std::string argument = argv[i];
    const auto equals = argument.find('=');
    if (argument.rfind("--", 0) == 0 && equals != std::string::npos)
      options_.set(argument.substr(2, equals - 2), argument.substr(equals + 1));
    else if (argument.rfind("--", 0) == 0) // a flag: --nesterov
      options_.set(argument.substr(2), "true");
  }
  return std::nullopt;
}

namespace {

// --train and --test, or --data-dir's IDX files for both.
expected<std::pair<std::string, std::string>> source_names(const program_config& c) {
  if (c.train.empty() != c.test.empty())
    return troupe::fail(model_errc::invalid_argument,
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

int command_line::fail(const model_error& error) const {
  std::fprintf(stderr, "error: %s\n", error.message.c_str());
  return error.code == model_errc::invalid_argument ? 2 : 1;
}

} // namespace troupe
