// troupe-model: a saved model (what a Troupe program's --save=FILE wrote) at
// work from the command line: evaluated on labelled data, predicting on
// features, exported to ONNX. Sees only the public API (<troupe/...>).
//
//   build/examples/troupe-model evaluate model.troupe tests/data
//   build/examples/troupe-model predict model.troupe X.npy probabilities.npy
//   build/examples/troupe-model predict model.troupe X.csv logits.csv --logits
//   build/examples/troupe-model export-onnx model.troupe model.onnx
//   build/examples/troupe-model --help
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <string>
#include <vector>

#include <troupe/dataset.hpp>
#include <troupe/expected.hpp>
#include <troupe/fit.hpp>

namespace {

constexpr int exit_failed = 1;    // a bad file or bad data
constexpr int exit_bad_usage = 2; // a command line that makes no sense

const char* const usage_text = R"(usage: troupe-model COMMAND ARGUMENTS

Evaluates, predicts with and exports a model that a Troupe program saved
(--save=FILE).

  troupe-model evaluate MODEL_FILE TEST_SOURCE
      Prints the model's mean loss and accuracy over labelled data: an IDX
      directory (its t10k-* files), "X.npy,y.npy" or "file.csv[:label=COL]".
  troupe-model predict MODEL_FILE INPUT OUTPUT [--logits]
      Writes the class probabilities (with --logits, the logits of a
      built-in sequential or layered model) of every sample of INPUT
      (X.npy, or a CSV file of features whose "label" column, if any, is
      dropped) to OUTPUT: a float32 .npy file (samples, classes), or a CSV
      file when it ends in .csv.
  troupe-model export-onnx MODEL_FILE OUT.onnx
      Writes a built-in sequential or layered model (a convolutional
      network) as a standard ONNX model.
  troupe-model --help
      Prints this.

Exit status: 0 done, 1 a bad file or bad data, 2 bad usage.
)";

int usage_error(const std::string& message) {
  std::fprintf(stderr, "error: %s (troupe-model --help shows the usage)\n", message.c_str());
  return exit_bad_usage;
}

int failed(const troupe::error& error) {
  std::fprintf(stderr, "error: %s\n", error.message.c_str());
  return exit_failed;
}

// Tells whether `path` ends in `extension` (lower case), in any case, as
// write_array reads it.
bool has_extension(const std::string& path, const std::string& extension) {
  if (path.size() < extension.size())
    return false;
  std::string tail = path.substr(path.size() - extension.size());
  for (char& c : tail)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return tail == extension;
}

// Takes `flag` out of `args`; tells whether it was there.
bool take_flag(std::vector<std::string>& args, const std::string& flag) {
  const auto found = std::find(args.begin(), args.end(), flag);
  if (found == args.end())
    return false;
  args.erase(found);
  return true;
}

int evaluate(const std::vector<std::string>& args) {
  if (args.size() != 2)
    return usage_error("evaluate takes MODEL_FILE TEST_SOURCE");
  auto model = troupe::load_model(args[0]);
  if (!model)
    return failed(model.error());
  auto data = troupe::load_data(args[1], troupe::data_split::test);
  if (!data)
    return failed(data.error());
  auto score = model->evaluate(*data);
  if (!score)
    return failed(score.error());
  std::printf("loss %.4f accuracy %.4f samples %lld\n", score->loss, score->accuracy,
              static_cast<long long>(score->samples));
  return 0;
}

int predict(std::vector<std::string> args) {
  const bool logits = take_flag(args, "--logits");
  if (args.size() != 3)
    return usage_error("predict takes MODEL_FILE INPUT OUTPUT [--logits]");
  const std::string& output = args[2];
  if (!has_extension(output, ".npy") && !has_extension(output, ".csv"))
    return usage_error("predict's OUTPUT '" + output + "' must end in .npy or .csv");
  auto model = troupe::load_model(args[0]);
  if (!model)
    return failed(model.error());
  auto classes = model->outputs();
  if (!classes)
    return failed(classes.error());
  auto features = troupe::load_features(args[1]);
  if (!features)
    return failed(features.error());
  auto values = logits ? model->logits(*features) : model->predict(*features);
  if (!values)
    return failed(values.error());
  const auto rows = static_cast<size_t>(features->count);
  if (auto written = troupe::write_array(output, *values, rows, *classes); !written)
    return failed(written.error());
  std::printf("wrote %zu rows of %d %s to %s\n", rows, *classes,
              logits ? "logits" : "probabilities", output.c_str());
  return 0;
}

int export_onnx(const std::vector<std::string>& args) {
  if (args.size() != 2)
    return usage_error("export-onnx takes MODEL_FILE OUT.onnx");
  auto model = troupe::load_model(args[0]);
  if (!model)
    return failed(model.error());
  if (auto exported = model->export_onnx(args[1]); !exported)
    return failed(exported.error());
  std::printf("wrote %s (model %s)\n", args[1].c_str(), model->description().c_str());
  return 0;
}

} // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (take_flag(args, "--help") || take_flag(args, "-h")) {
    std::fputs(usage_text, stdout);
    return 0;
  }
  if (args.empty())
    return usage_error("no command: give evaluate, predict or export-onnx");
  const std::string command = args.front();
  args.erase(args.begin());
  const bool allows_logits = command == "predict";
  for (const auto& arg : args)
    if (arg.size() > 1 && arg[0] == '-' && !(allows_logits && arg == "--logits"))
      return usage_error("unknown option '" + arg + "' for " + command);
  if (command == "evaluate")
    return evaluate(args);
  if (command == "predict")
    return predict(args);
  if (command == "export-onnx")
    return export_onnx(args);
  return usage_error("unknown command '" + command
                     + "': give evaluate, predict or export-onnx");
}
