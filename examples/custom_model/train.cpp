// Trains a model Troupe does not ship (a factorization machine) on data of
// its own, with Troupe's replicas and store: here, or on fm_node processes.
// The data is a registered source, computed from each sample's index, or
// the same samples written to CSV files.
//
//   fm_train --train=interaction:rows=4096,seed=1 --test=interaction:rows=1024,seed=2
//   fm_train generate DATA_DIR        writes those samples to DATA_DIR/{train,test}.csv
//   fm_train --train=DATA_DIR/train.csv --test=DATA_DIR/test.csv --replicas=2
//   fm_node --port=4001 & fm_node --port=4002 &
//   fm_train --train=... --test=... --nodes=127.0.0.1:4001,127.0.0.1:4002
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <tuple>

#include <troupe/troupe.hpp>

#include "factorization_machine.hpp"
#include "interaction_data.hpp"

namespace {

const char* const description = "fm:inputs=8,factors=4";

// Tests the model's gradient against finite differences before training.
bool gradient_checks(const troupe::data_source& train) {
  auto model = troupe::make_model(description);
  if (!model)
    return false;
  const troupe::dataset first = train.rows(0, 16);
  const troupe::batch samples{first.inputs.data(), first.labels.data(), 16, first.features};
  auto report = troupe::check_gradient(**model, samples);
  if (!report || !report->passed) {
    std::fprintf(stderr, "error: the model's gradient differs from finite differences\n");
    return false;
  }
  std::printf("Gradient check: %zu parameters within tolerance\n", report->checked);
  return true;
}

bool generate(const std::string& dir) {
  for (const auto& [rows, seed, name] :
       {std::tuple{4096, 1, "/train.csv"}, std::tuple{1024, 2, "/test.csv"}})
    if (!interaction_data(rows, seed).write_csv(dir + name)) {
      std::fprintf(stderr, "error: cannot write %s%s: %s\n", dir.c_str(), name,
                   std::strerror(errno));
      return false;
    }
  return true;
}

} // namespace

int main(int argc, char** argv) {
  register_factorization_machine();
  register_interaction_data();
  if (argc == 3 && std::strcmp(argv[1], "generate") == 0)
    return generate(argv[2]) ? 0 : 1;
  troupe::command_line cli("fm_train", "Trains a factorization machine with Troupe.");
  if (auto exit_code = cli.parse(argc, argv))
    return *exit_code;
  auto data = cli.open_data();
  if (!data)
    return cli.fail(data.error());
  if (!gradient_checks(*data->train))
    return 1;
  auto history = troupe::fit(description, troupe::optimizers::adam(0.01f), data->train,
                             data->test, cli.options());
  if (!history)
    return cli.fail(history.error());
  return 0; // fit wrote --save, if given
}
