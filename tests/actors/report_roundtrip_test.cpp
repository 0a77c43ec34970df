// The reports, settings and handshake that travel between a run's
// processes, through CAF's binary serializer and back field by field.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include <caf/all.hpp>

#include "messages/interfaces.hpp"
#include "messages/protocol.hpp"
#include "tests/actors/serial_roundtrip.hpp"

using namespace troupe;
using namespace troupe::testing;

TEST_CASE("replica_report and store_stats survive a binary round trip",
          "[messages][serialization]") {
  test_config cfg;
  caf::actor_system sys{cfg};

  replica_report report{5, 1234, 567.25, 1000, 40, 1.5, 0.25, {trace_span{1, 9, -5, 300}}, 8};
  auto r = roundtrip(sys, report);
  CHECK(r.membership == 8);
  CHECK(r.replica == 5);
  CHECK(r.samples == 1234);
  CHECK(r.loss_sum == 567.25);
  CHECK(r.correct == 1000);
  CHECK(r.pushes == 40);
  CHECK(r.compute_seconds == 1.5);
  CHECK(r.wait_seconds == 0.25);
  REQUIRE(r.trace.size() == 1);
  CHECK(r.trace[0].start_ns == -5);
  CHECK(r.trace[0].duration_ns == 300);

  store_stats stats{77, 300, 9600, 4, 11, 13, 0.125, 61, 600, 3, 2, true, 2.5, {4, 0, 7},
                    {trace_span{2, 8, 1000, 50}}, {5, 6}, 9};
  auto s = roundtrip(sys, stats);
  CHECK(s.membership == 9);
  CHECK(s.version == 77);
  CHECK(s.pushes == 300);
  CHECK(s.samples == 9600);
  CHECK(s.rejected == 4);
  CHECK(s.dropped == 11);
  CHECK(s.fenced == 13);
  CHECK(s.apply_seconds == 0.125);
  CHECK(s.staleness_sum == 61);
  CHECK(s.staleness_count == 600);
  CHECK(s.staleness_max == 3);
  CHECK(s.live_replicas == 2);
  CHECK(s.staleness_reported);
  CHECK(s.loss_sum == 2.5);
  CHECK(s.waited_on == std::vector<uint64_t>{4, 0, 7});
  REQUIRE(s.trace.size() == 1);
  CHECK(s.trace[0].kind == 2);
  CHECK(s.trace[0].round == 8);
  CHECK(s.trace[0].start_ns == 1000);
  CHECK(s.trace[0].duration_ns == 50);
  CHECK(s.staleness_histogram == std::vector<uint64_t>{5, 6});
}

TEST_CASE("checkpoint_stats and checkpoint_part survive a binary round trip",
          "[messages][serialization]") {
  test_config cfg;
  caf::actor_system sys{cfg};

  checkpoint_stats written{12, 5, "disk full"};
  auto w = roundtrip(sys, written);
  CHECK(w.written == 12);
  CHECK(w.failed == 5);
  CHECK(w.last_error == "disk full");

  checkpoint_part part;
  part.shard = 1;
  part.shards = 3;
  part.version = 40;
  part.round = 41;
  part.epoch = 2;
  part.epoch_round = 7;
  part.epoch_complete = true;
  part.optimizer_steps = 39;
  part.params = floats({1.0f, 2.0f, 3.0f}).slice(1, 2);
  part.optimizer_state = floats({4.0f, 5.0f, 6.0f, 7.0f});
  part.membership = 10;
  auto pr = roundtrip(sys, part);
  CHECK(pr.membership == 10);
  CHECK(pr.shard == 1);
  CHECK(pr.shards == 3);
  CHECK(pr.version == 40);
  CHECK(pr.round == 41);
  CHECK(pr.epoch == 2);
  CHECK(pr.epoch_round == 7);
  CHECK(pr.epoch_complete);
  CHECK(pr.optimizer_steps == 39);
  CHECK(pr.params.to_vector() == std::vector<float>{2.0f, 3.0f}); // only the slice travels
  CHECK(pr.optimizer_state.to_vector() == std::vector<float>{4.0f, 5.0f, 6.0f, 7.0f});
}

TEST_CASE("replica_config and fit_summary survive a binary round trip",
          "[messages][serialization]") {
  test_config cfg;
  caf::actor_system sys{cfg};

  replica_config config;
  config.index = 2;
  config.replicas = 4;
  config.model = "784-64relu-32relu-10";
  config.device = "cuda:1";
  config.store_device = "cuda:1";
  config.data_dir = "/some/where/with spaces/ünïcode";
  config.seed = 0xdeadbeefcafef00dull;
  config.global_batch = 256;
  config.step_timeout_ms = 1234;
  config.pin_core = true;
  config.fault_signal = 9;
  config.fault_round = 401;
  config.membership = 7;
  auto c = roundtrip(sys, config);
  CHECK(c.index == 2);
  CHECK(c.replicas == 4);
  CHECK(c.model == config.model);
  CHECK(c.device == "cuda:1");
  CHECK(c.store_device == "cuda:1");
  CHECK(c.data_dir == config.data_dir);
  CHECK(c.seed == config.seed);
  CHECK(c.global_batch == 256);
  CHECK(c.step_timeout_ms == 1234);
  CHECK(c.pin_core);
  CHECK(c.fault_signal == 9);
  CHECK(c.fault_round == 401);
  CHECK(c.membership == 7);

  fit_summary summary;
  summary.mode = "async";
  summary.replicas = 4;
  summary.live_replicas = 3;
  summary.epochs = 5;
  summary.test_loss = 0.4375;
  summary.test_accuracy = 0.8125;
  summary.samples_per_second = 12345.5;
  summary.version = 1875;
  summary.params_fnv1a64 = 0x0123456789abcdefull;
  summary.params = tricky_floats();
  auto f = roundtrip(sys, summary);
  CHECK(f.mode == "async");
  CHECK(f.replicas == 4);
  CHECK(f.live_replicas == 3);
  CHECK(f.epochs == 5);
  CHECK(f.test_loss == 0.4375);
  CHECK(f.test_accuracy == 0.8125);
  CHECK(f.samples_per_second == 12345.5);
  CHECK(f.version == 1875);
  CHECK(f.params_fnv1a64 == 0x0123456789abcdefull);
  CHECK(same_bytes(f.params, summary.params));
}

TEST_CASE("store_config survives a round trip inside a message",
          "[messages][serialization]") {
  test_config cfg;
  caf::actor_system sys{cfg};

  store_config store;
  store.policy.name = "async";
  store.device = "cuda:3";
  store.optimizer.name = "sgd";
  store.optimizer.learning_rate = 0.5f;
  store.optimizer.nesterov = true;
  store.optimizer.weight_decay = 0.125f;
  store.optimizer.schedule = schedules::cosine_decay(300, 0.25f, 20, 0.5f);
  store.initial_parameters = floats({1.0f, -1.0f, 0.25f});
  store.initial_version = 9;
  store.initial_round = 10;
  store.checkpoint_every = 3;
  store.shard = 2;
  store.shards = 5;
  store.parameter_count = 1000;
  store.pin_core = true;
  store.membership = 11;
  store.fault_signal = 19;
  store.fault_round = 401;
  auto sc = roundtrip_in_message(sys, store);
  CHECK(sc.membership == 11);
  CHECK(sc.fault_signal == 19);
  CHECK(sc.fault_round == 401);
  CHECK(sc.policy.name == "async");
  CHECK(sc.device == "cuda:3");
  CHECK(sc.optimizer.name == "sgd");
  CHECK(sc.optimizer.learning_rate == 0.5f);
  CHECK(sc.optimizer.nesterov);
  CHECK(sc.optimizer.weight_decay == 0.125f);
  CHECK(settings_text(sc.optimizer.schedule) == settings_text(store.optimizer.schedule));
  CHECK(same_bytes(sc.initial_parameters, store.initial_parameters));
  CHECK(sc.initial_version == 9);
  CHECK(sc.initial_round == 10);
  CHECK(sc.checkpoint_every == 3);
  CHECK(sc.shard == 2);
  CHECK(sc.shards == 5);
  CHECK(sc.parameter_count == 1000);
  CHECK(sc.pin_core);
}

TEST_CASE("the handshake survives a round trip inside a message",
          "[messages][serialization]") {
  test_config cfg;
  caf::actor_system sys{cfg};

  handshake hello;
  hello.protocol_version = 4;
  hello.model = "784-128relu-10";
  hello.model_fingerprint = 0x0123456789abcdefull;
  hello.float_probe = floats({1.0f, -2.5f});
  hello.heartbeat_interval_ms = 200;
  hello.connection_timeout_ms = 1000;
  hello.data_dir = "/data";
  hello.peer = "coordinator";
  hello.numerics_build = "GNU 12.2.0, x86_64, -march=x86-64-v2, -ffp-contract=off";
  hello.numerics_libm = "glibc 2.36 (FMA code paths)";
  hello.gemm_kernel = "avx2";
  hello.gemm_family = "fused";
  hello.same_bits_required = true;
  auto h = roundtrip_in_message(sys, hello);
  CHECK(h.protocol_version == 4);
  CHECK(h.model == hello.model);
  CHECK(h.model_fingerprint == hello.model_fingerprint);
  CHECK(same_bytes(h.float_probe, hello.float_probe));
  CHECK(h.heartbeat_interval_ms == 200);
  CHECK(h.connection_timeout_ms == 1000);
  CHECK(h.data_dir == "/data");
  CHECK(h.peer == "coordinator");
  CHECK(h.numerics_build == hello.numerics_build);
  CHECK(h.numerics_libm == hello.numerics_libm);
  CHECK(h.gemm_kernel == "avx2");
  CHECK(h.gemm_family == "fused");
  CHECK(h.same_bits_required);
}
