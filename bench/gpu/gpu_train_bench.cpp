// Trains 784-128relu-10 with Adam on one GPU for one epoch of Fashion-MNIST per
// batch size and prints the training loop's samples/s. Run it as
//   troupe_gpu_train_bench [--data DIR] [--device cuda:0] [--batches 32,128,1024]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "model/backend/backend.hpp"
#include "model/data/batch_plan.hpp"
#include "model/data/dataset.hpp"
#include "model/network.hpp"
#include "model/optim/adam.hpp"
#include "model/parameter_layout.hpp"

using namespace troupe;

namespace {

struct options {
  std::string data_dir = default_data_dir();
  std::string device = "cuda:0";
  std::vector<size_t> batches{32, 128, 1024};
  size_t warmup_steps = 50;
};

std::vector<size_t> parse_sizes(const std::string& text) {
  std::vector<size_t> sizes;
  size_t begin = 0;
  while (begin < text.size()) {
    size_t end = text.find(',', begin);
    if (end == std::string::npos)
      end = text.size();
    sizes.push_back(std::strtoul(text.substr(begin, end - begin).c_str(), nullptr, 10));
    begin = end + 1;
  }
  return sizes;
}

// The data set, shuffled once on the host and then resident on the device:
// a step's batch is a contiguous slice, so no step copies from the host.
struct resident_set {
  device_array<float> images; // (count, features)
  device_array<int32_t> labels;
  size_t count = 0;
  size_t features = 0;
};

resident_set upload_shuffled(backend& gpu, const dataset& train, uint64_t seed) {
  const auto order = epoch_permutation(static_cast<size_t>(train.count), seed, 0);
  resident_set set;
  set.count = order.size();
  set.features = static_cast<size_t>(train.features);
  std::vector<float> images(set.count * set.features);
  std::vector<int32_t> labels(set.count);
  gather_batch(train, order.data(), set.count, images.data(), labels.data());
  set.images = device_array<float>(gpu, images.size());
  set.images.upload(images.data(), images.size());
  set.labels = device_array<int32_t>(gpu, labels.size());
  set.labels.upload(labels.data(), labels.size());
  return set;
}

// Runs `steps` steps from the start of the set (wrapping around); only
// take_stats() at the end waits for the device.
batch_stats train_steps(backend& gpu, network& net, const resident_set& set,
                        size_t batch, size_t steps, device_array<float>& m,
                        device_array<float>& v) {
  const optimizer_config config; // Adam, lr 1e-3, eps 1e-7
  const size_t size = net.layout().size();
  size_t begin = 0;
  for (size_t step = 0; step < steps; ++step) {
    if (begin >= set.count)
      begin = 0;
    const size_t this_batch = std::min(batch, set.count - begin);
    net.compute_gradient_on_device(set.images.data() + begin * set.features,
                                   set.labels.data() + begin, this_batch);
    gpu.adam_update(net.device_parameters(), net.device_gradient(), m.data(),
                    v.data(), size, adam_step_coefficients(config, step + 1));
    begin += this_batch;
  }
  return net.take_stats();
}

void reset(backend& gpu, network& net, const std::vector<float>& initial,
           device_array<float>& m, device_array<float>& v) {
  gpu.copy_to_device(net.device_parameters(), initial.data(), initial.size() * sizeof(float));
  net.use_device_parameters();
  gpu.fill_zero(m.data(), m.size() * sizeof(float));
  gpu.fill_zero(v.data(), v.size() * sizeof(float));
  net.take_stats(); // also waits for the device
}

} // namespace

int main(int argc, char* argv[]) {
  options opts;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--data")
      opts.data_dir = argv[i + 1];
    else if (flag == "--device")
      opts.device = argv[i + 1];
    else if (flag == "--batches")
      opts.batches = parse_sizes(argv[i + 1]);
    else {
      std::fprintf(stderr, "unknown flag %s\n", flag.c_str());
      return 2;
    }
  }
  auto data = load_dataset(opts.data_dir);
  if (!data) {
    std::fprintf(stderr, "cannot load %s: %s\n", opts.data_dir.c_str(),
                 data.error().message.c_str());
    return 1;
  }
  auto gpu = make_backend(opts.device);
  if (!gpu) {
    std::fprintf(stderr, "cannot open %s: %s\n", opts.device.c_str(),
                 gpu.error().message.c_str());
    return 1;
  }
  auto spec = parse_model_spec("784-128relu-10");
  const auto set = upload_shuffled(**gpu, data->train, 1);
  std::printf("device %s, model %s, %zu training samples resident on the device\n",
              (*gpu)->name().c_str(), to_string(*spec).c_str(), set.count);
  for (size_t batch : opts.batches) {
    network net(*spec, **gpu, batch);
    const auto initial = glorot_uniform_parameters(net.layout(), 42);
    device_array<float> m(**gpu, initial.size()), v(**gpu, initial.size());
    // Warm-up (cuBLAS heuristics, first launches), then the same start again.
    reset(**gpu, net, initial, m, v);
    train_steps(**gpu, net, set, batch, opts.warmup_steps, m, v);
    reset(**gpu, net, initial, m, v);
    const size_t steps = (set.count + batch - 1) / batch;
    const auto start = std::chrono::steady_clock::now();
    const auto stats = train_steps(**gpu, net, set, batch, steps, m, v);
    const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
    const double rate = static_cast<double>(stats.samples) / elapsed.count();
    std::printf("batch %5zu: %zu steps, %lld samples in %.3f s = %.0f samples/s "
                "(%.1f us/step; epoch loss %.4f, accuracy %.4f)\n",
                batch, steps, static_cast<long long>(stats.samples), elapsed.count(),
                rate, 1e6 * elapsed.count() / static_cast<double>(steps),
                stats.mean_loss(), stats.accuracy());
    std::printf("RESULT troupe batch=%zu samples_per_s=%.0f\n", batch, rate);
  }
  return 0;
}
