// The store on a device (--store-device) end to end, on the simulated device
// "sim:0" (tests/actors/simulated_device.hpp): host memory the CPU backend
// computes on, which Troupe must treat as a device's. Shards keep and step the
// parameters there; replicas on the same device hand gradients and
// parameters over in device memory; the bits are the host store's.
#include <catch2/catch.hpp>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <limits>
#include <memory>
#include <string>

#include <caf/all.hpp>

#include "actors/config/run_options.hpp"
#include "actors/run/coordinator.hpp"
#include "actors/run/run_plan.hpp"
#include "actors/replica/store_group.hpp"
#include "actors/store/variable_store.hpp"
#include "messages/errors.hpp"
#include "messages/register.hpp"
#include "model/backend/device_buffers.hpp"
#include "model/checkpoint.hpp"
#include "model/parameter_layout.hpp"
#include "tests/actors/checkpoint_checks.hpp"
#include "tests/actors/failing_backend.hpp"
#include "tests/actors/simulated_device.hpp"
#include "tests/test_slice.hpp"

using namespace troupe;

namespace {

struct device_config : caf::actor_system_config {
  device_config() {
    register_messages(*this);
    testing::register_simulated_device();
  }
};

// 2 replicas, global batch 32 over 2000 samples: 63 rounds an epoch.
run_config device_run(const std::string& mode, const std::string& replicas_on,
                       const std::string& store_on, uint32_t shards) {
  run_config o;
  o.policy.name = mode;
  o.replicas = 2;
  o.epochs = 1;
  o.batch_size = 32;
  o.seed = 11;
  auto devices = parse_devices(replicas_on);
  REQUIRE(devices);
  o.devices = *devices;
  o.store_device = store_on;
  o.store_shards = shards;
  o.step_timeout_ms = 20000;
  return o;
}

constexpr uint64_t rounds = 63;
const size_t gradient_bytes = parameter_layout(*parse_model_spec("784-128relu-10")).size()
                              * sizeof(float);

void reset_bus() {
  testing::sim_bus().to_device = 0;
  testing::sim_bus().to_host = 0;
  testing::sim_bus().between_devices = 0;
  testing::sim_bus().events_waited = 0;
  testing::sim_bus().waited_unfired = 0;
  testing::sim_bus().host_buffers = 0;
  testing::sim_bus().recorded = 0;
}

} // namespace

TEST_CASE("replicas and store shards on devices of one kind hand gradients over in device "
          "memory and get the host store's bits, for 1 and 2 shards",
          "[device-store][sync][fit]") {
  device_config cfg;
  caf::actor_system sys{cfg};
  auto host = run_training(sys, device_run("sync", "cpu", "cpu", 2), shared_test_slice());
  REQUIRE(host);
  CHECK(host->version == rounds);
  for (uint32_t shards : {1u, 2u}) {
    INFO("store shards: " << shards);
    reset_bus();
    auto on_device = run_training(sys, device_run("sync", "sim:0", "sim:0", shards), shared_test_slice());
    REQUIRE(on_device);
    CHECK(on_device->version == host->version);
    CHECK(on_device->params_fnv1a64 == host->params_fnv1a64);
    CHECK(on_device->test_accuracy == host->test_accuracy);
    // No gradient or parameter crossed to the host inside a round: only the
    // batches went down, and the parameters came up for evaluation.
    CHECK(testing::sim_bus().to_host < 8 * gradient_bytes);
    // Each replica queued behind each shard's step before it read the
    // answer, and each shard behind each replica's step before it read the
    // gradient ...
    CHECK(testing::sim_bus().events_waited == 2 * (rounds - 1) * shards + 2 * rounds * shards);
    // ... whose ops had mostly not run yet: a replica's host waits for the
    // step before, not for the one it pushes (had it waited, at most the
    // answers' half of these events could still be pending). Which of them
    // another thread's wait happened to run first depends on timing, so a
    // loaded host (ctest -j2) leaves fewer pending: hence 3/4, not all.
    CHECK(4 * testing::sim_bus().waited_unfired >= 3 * testing::sim_bus().events_waited);
    // ... and recorded its step once per batch size (16 samples, and 8 in
    // the short last round), replaying it since.
    CHECK(testing::sim_bus().recorded == 2 * 2);
    // The batches went down from page-locked host buffers, and the stats
    // came up into them: images, labels and stats for two steps in flight
    // per replica, reused round after round; one per shard for the verdict
    // on the flags of the gradients it stepped.
    CHECK(testing::sim_bus().host_buffers == 2 * 2 * 3 + shards);
  }
  // A replica on another device of the kind hands over too: the shard
  // copies its gradient across, and it copies the answers back.
  reset_bus();
  auto two_devices = run_training(sys, device_run("sync", "sim:0,sim:1", "sim:0", 2), shared_test_slice());
  REQUIRE(two_devices);
  CHECK(two_devices->params_fnv1a64 == host->params_fnv1a64);
  CHECK(testing::sim_bus().to_host < 8 * gradient_bytes);
  // Its 63 gradients over, and 62 answers back (the first round's parameters
  // come from the host, at the epoch's start).
  CHECK(testing::sim_bus().between_devices == (2 * rounds - 1) * gradient_bytes);
  // The same replicas with the store on the host: every gradient comes up.
  reset_bus();
  auto store_on_host = run_training(sys, device_run("sync", "sim:0", "cpu", 2), shared_test_slice());
  REQUIRE(store_on_host);
  CHECK(store_on_host->params_fnv1a64 == host->params_fnv1a64);
  CHECK(testing::sim_bus().to_host >= 2 * rounds * gradient_bytes);
  // ... into host buffers of the device's own kind (page-locked on a GPU),
  // a few per replica, reused round after round.
  CHECK(testing::sim_bus().host_buffers >= 2);
  CHECK(testing::sim_bus().host_buffers <= 6);
}

TEST_CASE("a store on a device takes host gradients from replicas elsewhere and answers "
          "them on the host",
          "[device-store][fit]") {
  device_config cfg;
  caf::actor_system sys{cfg};
  for (const std::string mode : {"sync", "delayed"}) {
    INFO(mode);
    auto host_options = device_run(mode, "cpu", "cpu", 2);
    host_options.policy.settings.staleness = mode == "delayed" ? 2 : 0;
    auto host = run_training(sys, host_options, shared_test_slice());
    REQUIRE(host);
    auto device_options = host_options;
    device_options.store_device = "sim:0";
    reset_bus();
    auto uploaded = run_training(sys, device_options, shared_test_slice());
    REQUIRE(uploaded);
    CHECK(uploaded->params_fnv1a64 == host->params_fnv1a64);
    CHECK(testing::sim_bus().to_device >= 2 * rounds * gradient_bytes); // every gradient
    // Delayed answers from the versions the shards keep on the device.
    device_options.devices.pool = {"sim:0"};
    auto handed_over = run_training(sys, device_options, shared_test_slice());
    REQUIRE(handed_over);
    CHECK(handed_over->params_fnv1a64 == host->params_fnv1a64);
  }
  auto async = run_training(sys, device_run("async", "cpu,sim:0", "sim:0", 2), shared_test_slice());
  REQUIRE(async);
  CHECK(async->version == 2 * rounds);
  CHECK(async->test_accuracy > 0.6);
}

TEST_CASE("a run with the store on a device saves checkpoints that resume to the "
          "uninterrupted run's bits",
          "[device-store][checkpoint][fit]") {
  device_config cfg;
  caf::actor_system sys{cfg};
  const auto path = testing::temp_checkpoint_path("device_store", "resume.ckpt");
  auto uninterrupted_options = device_run("sync", "cpu", "cpu", 2);
  uninterrupted_options.epochs = 2;
  auto uninterrupted = run_training(sys, uninterrupted_options, shared_test_slice());
  REQUIRE(uninterrupted);

  // Checkpoints at rounds 25, 50, 63 (epoch 1's end, which restarts the
  // count) and 88; replica 1 dies at its 100th push (round 99).
  auto interrupted_options = device_run("sync", "sim:0", "sim:0", 2);
  interrupted_options.epochs = 2;
  interrupted_options.checkpoint_path = path;
  interrupted_options.checkpoint_every = 25;
  testing::fail_replica_at_push(interrupted_options, 1, 100);
  REQUIRE_FALSE(run_training(sys, interrupted_options, shared_test_slice()));
  auto saved = read_checkpoint(path);
  REQUIRE(saved);
  CHECK(saved->round == 88);
  CHECK_FALSE(saved->epoch_complete);

  for (const std::string store_on : {"sim:0", "cpu"}) {
    INFO("resumed with the store on " << store_on);
    auto resumed_options = device_run("sync", "sim:0", store_on, 1);
    resumed_options.epochs = 2;
    testing::check_resumes_to(sys, resumed_options, path, *uninterrupted);
  }
  std::filesystem::remove(path);
}

TEST_CASE("a store shard on a device refuses a non-finite host gradient and one in memory "
          "it cannot read, copies one from another device, and answers where it is asked to",
          "[device-store][store]") {
  device_config cfg;
  caf::actor_system sys{cfg};
  constexpr size_t count = 8;
  store_config options;
  options.policy.name = "async";
  options.device = "sim:0";
  options.initial_parameters = shared_floats{std::vector<float>(count, 0.5f)};
  auto store = spawn_variable_store(sys, options);
  REQUIRE(store);
  caf::scoped_actor self{sys};

  std::shared_ptr<backend> sim0(new testing::simulated_device(0));
  std::shared_ptr<backend> sim1(new testing::simulated_device(1));
  // A gradient in sim:1 memory when `device` says so, else in sim:0's
  // (labelled `device`); host-readable, as the devices are simulated.
  auto gradient_on = [&](const std::string& device, float value) {
    auto buffer = make_device_buffer(device == "sim:1" ? sim1 : sim0, count);
    std::fill(buffer.get(), buffer.get() + count, value);
    push_msg push;
    push.batch_size = 4;
    push.device_gradient = device_floats{shared_floats{std::move(buffer), 0, count}, device, {}, {}};
    return push;
  };
  auto push_and_wait = [&](push_msg push) {
    caf::expected<params_msg> answer{params_msg{}};
    self->request(*store, std::chrono::seconds(10), push_atom::value, std::move(push))
      .receive([&](params_msg& params) { answer = std::move(params); },
               [&](caf::error& err) { answer = std::move(err); });
    return answer;
  };

  // A host gradient is checked here (a device one by the replica that made it).
  push_msg nan_push;
  nan_push.batch_size = 4;
  nan_push.gradient =
    shared_floats{std::vector<float>(count, std::numeric_limits<float>::quiet_NaN())};
  auto nan = push_and_wait(std::move(nan_push));
  REQUIRE_FALSE(nan);
  CHECK(nan.error().code() == static_cast<uint8_t>(troupe_errc::bad_gradient));
  CHECK_THAT(describe(nan.error()), Catch::Contains("contains NaN or Inf"));

  auto unreadable = push_and_wait(gradient_on("cuda:0", 1.0f));
  REQUIRE_FALSE(unreadable);
  CHECK_THAT(describe(unreadable.error()),
             Catch::Contains("is in cuda:0 memory, which store shard 0 in sim:0 memory "
                             "cannot read"));

  auto on_device = gradient_on("sim:0", 1.0f);
  on_device.device_answer = true;
  auto device_answer = push_and_wait(std::move(on_device));
  REQUIRE(device_answer);
  CHECK(device_answer->version == 1);
  CHECK(device_answer->device_values.device == "sim:0");
  CHECK(device_answer->values.size() == 0); // not also on the host

  testing::sim_bus().between_devices = 0;
  auto across = push_and_wait(gradient_on("sim:1", 1.0f));
  REQUIRE(across);
  CHECK(across->version == 2);
  CHECK(testing::sim_bus().between_devices == count * sizeof(float));

  push_msg host_push;
  host_push.batch_size = 4;
  host_push.gradient = shared_floats{std::vector<float>(count, 1.0f)};
  auto host_answer = push_and_wait(std::move(host_push));
  REQUIRE(host_answer);
  CHECK(host_answer->version == 3);
  REQUIRE_FALSE(host_answer->device_values);
  // Three Adam steps on a constant gradient move every weight down alike.
  for (float value : host_answer->values.to_vector())
    CHECK(value == host_answer->values.data()[0]);
  CHECK(host_answer->values.data()[0] < 0.5f);
  self->send_exit(*store, caf::exit_reason::user_shutdown);
}

namespace {

// Computes like `inner` but writes NaN into the bias gradient of its
// gradient `poison_at` (1-based), as a diverging model would.
class poisoning_backend final : public testing::forwarding_backend {
public:
  poisoning_backend(std::unique_ptr<backend> inner, uint64_t poison_at)
    : forwarding_backend(std::move(inner)), poison_at_(poison_at) {}
  void softmax_cross_entropy(const float* logits, const int32_t* labels, int rows, int classes,
                             float scale, float* dlogits, float* stats) override {
    if (dlogits != nullptr)
      ++gradients_;
    forwarding_backend::softmax_cross_entropy(logits, labels, rows, classes, scale, dlogits,
                                              stats);
  }
  void bias_gradient(const float* dy, int rows, int cols, float* db) override {
    forwarding_backend::bias_gradient(dy, rows, cols, db);
    if (gradients_ == poison_at_) { // queued behind the op, as a kernel's result is
      const float nan = std::numeric_limits<float>::quiet_NaN();
      forwarding_backend::copy_to_device(db, &nan, sizeof(float));
    }
  }

private:
  uint64_t poison_at_;
  uint64_t gradients_ = 0;
};

} // namespace

TEST_CASE("a replica that hands over on a device checks its gradient there and stops the "
          "run on NaN, naming the round",
          "[device-store][fit]") {
  device_config cfg;
  caf::actor_system sys{cfg};
  auto options = device_run("sync", "sim:0", "sim:0", 2);
  options.wrap_replica_backend = [](uint32_t index, std::unique_ptr<backend> compute) {
    if (index != 1)
      return compute;
    return std::unique_ptr<backend>(new poisoning_backend(std::move(compute), 10));
  };
  auto run = run_training(sys, options, shared_test_slice());
  REQUIRE_FALSE(run);
  CHECK_THAT(describe(run.error()),
             Catch::Contains("replica 1: its gradient of round 9 contains NaN or Inf"));
}

TEST_CASE("the store device option names a device that opens here, needs Adam and defaults "
          "to one shard",
          "[device-store][options]") {
  device_config cfg; // registers sim
  auto options = device_run("sync", "cpu", "tpu:0", 2);
  auto bogus = check_run_config(options, &test_slice());
  REQUIRE_FALSE(bogus);
  CHECK_THAT(describe(bogus.error()), Catch::Contains("--store-device: 'tpu:0' is not a device"));

  options.store_device = "sim:0";
  options.optimizer.name = "sgd";
  auto sgd = check_run_config(options, &test_slice());
  REQUIRE_FALSE(sgd);
  CHECK_THAT(describe(sgd.error()), Catch::Contains("--store-device=sim:0 steps adam only: use --optimizer=adam"));

  options.optimizer.name = "adam";
  auto checked = check_run_config(options, &test_slice());
  REQUIRE(checked);
  CHECK(checked->store_shards == 2); // as asked
  options.store_shards = 0; // the default on a device: one shard, one launch per step
  options.replicas = 4;
  options.batch_size = 64;
  checked = check_run_config(options, &test_slice());
  REQUIRE(checked);
  CHECK(checked->store_shards == 1);
  CHECK(default_store_shards(4, 16, 0) == 4);
  CHECK(default_store_shards(4, 2, 0) == 2);
  CHECK(default_store_shards(4, 16, 3) == 3);

  options.store_device = "cuda:0";
  if (make_backend("cuda:0"))
    return; // a GPU machine: it opens
  // Naming a device is an option; opening it is the run's plan, before anything starts.
  auto named = check_run_config(options, &test_slice());
  REQUIRE(named);
  auto missing = plan_run(*named, static_cast<size_t>(test_slice().train.count));
  REQUIRE_FALSE(missing);
  CHECK_THAT(describe(missing.error()), Catch::Contains("--store-device=cuda:0: "));
}
