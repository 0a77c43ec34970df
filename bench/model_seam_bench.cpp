// What the model registry costs: the same MLP trained as the built-in model
// (a builtin_model on the replica's backend) and as a registered model (the
// same class built by name on the CPU), one-epoch sync fits alternating,
// with each path's median samples/s and their ratio.
//
//   build/bench/model_seam_bench [data-dir] [repeats] [replicas] [batch-size]
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include <caf/all.hpp>
#include <fmt/core.h>

#include "actors/run/coordinator.hpp"
#include "actors/config/cluster_config.hpp"
#include "messages/errors.hpp"
#include "model/builtin_model.hpp"
#include "model/data/dataset.hpp"

using namespace troupe;

namespace {

void register_host_mlp() {
  register_model("host-mlp", [](const std::string& settings) -> expected<std::unique_ptr<model>> {
    auto spec = parse_model_spec(settings);
    if (!spec)
      return spec.error();
    return std::unique_ptr<model>(std::make_unique<builtin_model>(*spec));
  });
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

} // namespace

int main(int argc, char** argv) {
  const std::string dir = argc > 1 ? argv[1] : default_data_dir();
  const int repeats = argc > 2 ? std::stoi(argv[2]) : 5;
  const uint32_t replicas = argc > 3 ? static_cast<uint32_t>(std::stoi(argv[3])) : 2;
  const uint32_t batch = argc > 4 ? static_cast<uint32_t>(std::stoi(argv[4])) : 32;
  auto data = load_dataset(dir);
  if (!data) {
    std::fprintf(stderr, "error: %s\n", data.error().message.c_str());
    return 1;
  }
  auto shared = std::make_shared<const dataset_pair>(std::move(*data));
  register_host_mlp();
  cluster_config cfg("model_seam_bench"); // mnist's scheduler and settings
  if (auto err = cfg.parse_options({})) {
    std::fprintf(stderr, "error: %s\n", describe(err).c_str());
    return 1;
  }
  caf::actor_system system{cfg};
  std::vector<double> builtin_rates, registered_rates;
  for (int r = 0; r < repeats; ++r)
    for (const char* description : {"784-128relu-10", "host-mlp:784-128relu-10"}) {
      run_config c;
      c.model = description;
      c.epochs = 1;
      c.replicas = replicas;
      c.batch_size = batch;
      auto summary = run_training(system, c, shared);
      if (!summary) {
        std::fprintf(stderr, "error: %s\n", describe(summary.error()).c_str());
        return 1;
      }
      auto& rates = description[0] == 'h' ? registered_rates : builtin_rates;
      rates.push_back(summary->samples_per_second);
      fmt::print("{:>26}: {:.0f} samples/s, params {:016x}\n", description,
                 summary->samples_per_second, summary->params_fnv1a64);
    }
  fmt::print("median of {} (sync, {} replicas, batch {}): built-in {:.0f}, registered {:.0f} "
             "samples/s; registered / built-in {:.2f}\n",
             repeats, replicas, batch, median(builtin_rates), median(registered_rates),
             median(registered_rates) / median(builtin_rates));
  return 0;
}
