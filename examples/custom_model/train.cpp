// Trains a model Troupe does not ship (a factorization machine) on data of
// its own, with Troupe's replicas and store: here, or on fm_node processes.
//
//   fm_train generate DATA_DIR        writes DATA_DIR/train.csv and test.csv
//   fm_train --train=DATA_DIR/train.csv --test=DATA_DIR/test.csv --replicas=2
//   fm_node --port=4001 & fm_node --port=4002 &
//   fm_train --train=... --test=... --nodes=127.0.0.1:4001,127.0.0.1:4002
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <string>

#include <troupe/troupe.hpp>

#include "factorization_machine.hpp"

namespace {

const char* const description = "fm:inputs=8,factors=4";

// Class 1 where x0 * x1 > 0: an interaction a linear model cannot learn;
// six more features are noise.
bool write_csv(const std::string& path, int samples, unsigned seed) {
  std::ofstream out(path);
  std::mt19937 random(seed);
  std::uniform_real_distribution<float> draw(-1.0f, 1.0f);
  for (int i = 0; i < 8; ++i)
    out << "x" << i << ",";
  out << "label\n";
  for (int n = 0; n < samples; ++n) {
    float x[8];
    for (float& value : x)
      value = draw(random);
    for (float value : x)
      out << value << ",";
    out << (x[0] * x[1] > 0 ? 1 : 0) << "\n";
  }
  return static_cast<bool>(out);
}

// Tests the model's gradient against finite differences before training.
bool gradient_checks(const troupe::dataset& train) {
  auto model = troupe::make_model(description);
  if (!model)
    return false;
  const troupe::batch samples{train.images.data(), train.labels.data(), 16, train.features};
  auto report = troupe::check_gradient(**model, samples);
  if (!report || !report->passed) {
    std::fprintf(stderr, "error: the model's gradient differs from finite differences\n");
    return false;
  }
  std::printf("Gradient check: %zu parameters within tolerance\n", report->checked);
  return true;
}

} // namespace

int main(int argc, char** argv) {
  register_factorization_machine();
  if (argc == 3 && std::strcmp(argv[1], "generate") == 0)
    return write_csv(std::string(argv[2]) + "/train.csv", 4096, 1)
               && write_csv(std::string(argv[2]) + "/test.csv", 1024, 2)
             ? 0
             : 1;
  troupe::command_line cli("fm_train", "Trains a factorization machine with Troupe.");
  if (auto exit_code = cli.parse(argc, argv))
    return *exit_code;
  auto data = cli.load_data();
  if (!data)
    return cli.fail(data.error());
  if (!gradient_checks(data->train))
    return 1;
  auto history = troupe::fit(description, troupe::optimizers::adam(0.01f), data->train,
                             data->test, cli.options());
  if (!history)
    return cli.fail(history.error());
  if (!cli.save_path().empty())
    if (auto saved = history->model.save(cli.save_path()); !saved)
      return cli.fail(saved.error());
  return 0;
}
