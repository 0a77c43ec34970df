// Every wire type through CAF's binary serializer and back, the registry that
// register_messages fills, and the bulk encoding of float buffers.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <typeinfo>
#include <vector>

#include <caf/all.hpp>

#include "messages/errors.hpp"
#include "messages/interfaces.hpp"
#include "messages/protocol.hpp"
#include "messages/register.hpp"

using namespace troupe;

namespace {

struct test_config : caf::actor_system_config {
  test_config() {
    set("scheduler.policy", caf::atom("testing"));
    register_messages(*this);
  }
};

shared_floats floats(std::vector<float> values) {
  return shared_floats{std::make_shared<const std::vector<float>>(std::move(values))};
}

// Values whose bytes a lossy or reordering encoding would change.
shared_floats tricky_floats() {
  return floats({0.0f, -0.0f, 1.0f, -1.5f, 3.14159265f,
                 std::numeric_limits<float>::denorm_min(),
                 std::numeric_limits<float>::max(),
                 std::numeric_limits<float>::lowest(),
                 std::numeric_limits<float>::infinity(),
                 -std::numeric_limits<float>::infinity(),
                 std::numeric_limits<float>::quiet_NaN(), 1e-30f});
}

bool same_bytes(const shared_floats& a, const shared_floats& b) {
  return a.size() == b.size()
         && (a.size() == 0
             || std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
}

template <class T>
std::vector<char> serialize(caf::actor_system& sys, T& value) {
  std::vector<char> buf;
  caf::binary_serializer sink{sys, buf};
  auto err = sink(value);
  INFO(sys.render(err));
  REQUIRE_FALSE(err);
  return buf;
}

template <class T>
T deserialize(caf::actor_system& sys, const std::vector<char>& buf) {
  T value;
  caf::binary_deserializer source{sys, buf};
  auto err = source(value);
  INFO(sys.render(err));
  REQUIRE_FALSE(err);
  CHECK(source.remaining() == 0);
  return value;
}

template <class T>
T roundtrip(caf::actor_system& sys, T value) {
  return deserialize<T>(sys, serialize(sys, value));
}

// Sends a caf::message holding `value` through the serializer, which names
// each element by its registered portable name and rebuilds it from the
// registry on the way back: an unregistered type fails here.
template <class T>
T roundtrip_in_message(caf::actor_system& sys, const T& value) {
  auto msg = caf::make_message(value);
  auto buf = serialize(sys, msg);
  auto back = deserialize<caf::message>(sys, buf);
  REQUIRE(back.size() == 1);
  REQUIRE(back.template match_element<T>(0));
  return back.template get_as<T>(0);
}

template <class T>
std::string registered_name(caf::actor_system& sys) {
  return sys.types().portable_name(0, &typeid(T));
}

push_msg sample_push() {
  push_msg x;
  x.replica = 3;
  x.round = 0x1122334455667788ull;
  x.base_version = 987654321012ull;
  x.batch_size = 4294967295u;
  x.loss_sum = 1234.5;
  x.gradient = tricky_floats();
  x.device_answer = true;
  x.membership = 0x0102030405060708ull;
  x.gradient_norm = 12.25;
  return x;
}

params_msg sample_params() {
  params_msg x;
  x.version = 42;
  x.round = 43;
  x.staleness = 7;
  x.offset = 96;
  x.values = floats({1.0f, 2.0f, -3.0f, 1e20f});
  x.losses = {{12, 1, false}, {40, 3, true}, {0xfedcba9876543210ull, 0xffffffffu, true}};
  x.membership = 0x1122334455667788ull;
  return x;
}

void check_equal(const push_msg& a, const push_msg& b) {
  CHECK(a.replica == b.replica);
  CHECK(a.round == b.round);
  CHECK(a.base_version == b.base_version);
  CHECK(a.batch_size == b.batch_size);
  CHECK(a.loss_sum == b.loss_sum);
  CHECK(a.membership == b.membership);
  CHECK(a.gradient_norm == b.gradient_norm);
  CHECK(same_bytes(a.gradient, b.gradient));
}

void check_equal(const params_msg& a, const params_msg& b) {
  CHECK(a.version == b.version);
  CHECK(a.membership == b.membership);
  CHECK(a.round == b.round);
  CHECK(a.staleness == b.staleness);
  CHECK(a.offset == b.offset);
  CHECK(same_bytes(a.values, b.values));
  CHECK(a.losses == b.losses);
}

} // namespace

TEST_CASE("a slice of a shared buffer travels as its own floats only",
          "[messages][serialization]") {
  test_config cfg;
  caf::actor_system sys{cfg};
  push_msg push = sample_push();
  const auto whole = floats({1.0f, 2.0f, 3.0f, 4.0f, 5.0f});
  push.gradient = whole.slice(2, 2);
  CHECK(push.gradient.data() == whole.data() + 2); // a view in this process, not a copy
  const auto back = roundtrip(sys, push);
  CHECK(back.gradient.size() == 2);
  CHECK(back.gradient.offset == 0);
  CHECK(back.gradient.buffer != whole.buffer); // read back into a buffer of its own
  CHECK(back.gradient.to_vector() == std::vector<float>{3.0f, 4.0f});
}

TEST_CASE("a buffer in device memory refuses to leave its process, with a clear error",
          "[messages][serialization][device]") {
  test_config cfg;
  caf::actor_system sys{cfg};
  push_msg push = sample_push();
  const auto whole = floats({1.0f, 2.0f, 3.0f, 4.0f});
  // A view of device memory: its pointer must never be read on the host.
  push.gradient = shared_floats{};
  push.device_gradient = device_floats{shared_floats{whole.buffer, 1, 3}, "cuda:0", {}, {}};
  CHECK(push.device_gradient.slice(1, 2).device == "cuda:0"); // a slice stays where it is
  std::vector<char> buf;
  caf::binary_serializer sink{sys, buf};
  auto err = sink(push);
  REQUIRE(err);
  CHECK_THAT(sys.render(err), Catch::Contains("3 floats in cuda:0 memory cannot leave"));
  // The same floats on the host travel, and a message read back holds no device view.
  push.device_gradient = device_floats{};
  push.gradient = shared_floats{whole.buffer, 1, 3};
  const auto back = roundtrip(sys, push);
  CHECK(back.gradient.to_vector() == std::vector<float>{2.0f, 3.0f, 4.0f});
  CHECK_FALSE(back.device_gradient);
}

TEST_CASE("push_msg survives a binary round trip field by field and byte for byte",
          "[messages][serialization]") {
  test_config cfg;
  caf::actor_system sys{cfg};
  const auto original = sample_push();
  const auto back = roundtrip(sys, original);
  check_equal(back, original);
  CHECK(back.gradient.size() == 12);
  CHECK(std::isnan(back.gradient.data()[10]));
  CHECK(std::signbit(back.gradient.data()[1]));
  // A fresh buffer, not the sender's: deserializing never aliases.
  CHECK(back.gradient.data() != original.gradient.data());
  CHECK(back.device_answer);
  // A pusher's proof of finite floats holds in its process only: a push
  // from another arrives unproven, so its shard checks every float.
  auto proven = original;
  proven.proven_finite = true;
  CHECK_FALSE(roundtrip(sys, proven).proven_finite);
}

TEST_CASE("replica_loss survives a binary round trip field by field",
          "[messages][serialization]") {
  test_config cfg;
  caf::actor_system sys{cfg};
  for (const replica_loss& loss : {replica_loss{0, 0, false}, replica_loss{12, 1, true},
                                   replica_loss{~uint64_t{0}, ~uint32_t{0}, true}}) {
    INFO("round " << loss.round << ", replica " << loss.replica << ", share_used "
                  << loss.share_used);
    const auto back = roundtrip(sys, loss);
    CHECK(back.round == loss.round);
    CHECK(back.replica == loss.replica);
    CHECK(back.share_used == loss.share_used);
    CHECK(back == loss);
    // Registered: it travels alone inside a caf::message too.
    CHECK(roundtrip_in_message(sys, loss) == loss);
  }
  // A list of them, as params_msg carries it, keeps its order.
  const std::vector<replica_loss> list = sample_params().losses;
  CHECK(roundtrip(sys, list) == list);
}

TEST_CASE("params_msg and epoch_order survive a binary round trip",
          "[messages][serialization]") {
  test_config cfg;
  caf::actor_system sys{cfg};
  const auto params = sample_params();
  check_equal(roundtrip(sys, params), params);

  epoch_order order;
  order.epoch = 9;
  order.params = params;
  order.start_round = 12;
  order.membership = 6;
  const auto back = roundtrip(sys, order);
  CHECK(back.epoch == 9);
  CHECK(back.start_round == 12);
  CHECK(back.membership == 6);
  check_equal(back.params, params);
}

TEST_CASE("replica_report, store_stats, replica_config and fit_summary survive a "
          "binary round trip",
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

TEST_CASE("empty float buffers survive a round trip, with or without a vector",
          "[messages][serialization]") {
  test_config cfg;
  caf::actor_system sys{cfg};
  shared_floats none; // no buffer at all, as a 0-sample push carries
  auto buf = serialize(sys, none);
  CHECK(buf.size() <= 2); // just the length
  auto back = deserialize<shared_floats>(sys, buf);
  CHECK(back.size() == 0);

  auto empty = floats({});
  auto back_empty = roundtrip(sys, empty);
  CHECK(back_empty.size() == 0);

  push_msg push;
  push.replica = 1;
  push.round = 5;
  push.batch_size = 0;
  check_equal(roundtrip(sys, push), push);
}

TEST_CASE("a 101,770-float gradient is written as one raw block of 407 KB",
          "[messages][serialization]") {
  test_config cfg;
  caf::actor_system sys{cfg};
  constexpr size_t count = 101770; // the 784-128relu-10 model
  std::vector<float> values(count);
  for (size_t i = 0; i < count; ++i)
    values[i] = std::sin(static_cast<float>(i)) * 1e-3f;
  push_msg push;
  push.replica = 1;
  push.batch_size = 32;
  push.gradient = floats(values);

  auto buf = serialize(sys, push);
  const size_t payload = count * sizeof(float); // 407,080 bytes
  CHECK(buf.size() >= payload);
  CHECK(buf.size() <= payload + 64); // a few header fields, no per-element framing
  // Bulk encoding: the last bytes are the floats exactly as they lie in
  // memory. CAF's per-element default would write each in network byte
  // order, which differs on a little-endian host.
  REQUIRE(buf.size() >= payload);
  CHECK(std::memcmp(buf.data() + buf.size() - payload, values.data(), payload) == 0);

  auto back = deserialize<push_msg>(sys, buf);
  check_equal(back, push);
}

TEST_CASE("a corrupt float buffer length is refused, not allocated",
          "[messages][serialization]") {
  test_config cfg;
  caf::actor_system sys{cfg};
  // The length says 2^31 floats (8 GiB); the frame holds none of them.
  std::vector<char> buf;
  caf::binary_serializer sink{sys, buf};
  uint8_t fp32 = 0;
  REQUIRE_FALSE(sink(fp32));
  size_t huge = size_t{1} << 31;
  REQUIRE_FALSE(sink.begin_sequence(huge));
  shared_floats back;
  caf::binary_deserializer source{sys, buf};
  CHECK(source(back));
  CHECK(back.size() == 0);
}

TEST_CASE("register_messages registers every message type and interface by name",
          "[messages][registry]") {
  test_config cfg;
  caf::actor_system sys{cfg};
  CHECK(registered_name<shared_floats>(sys) == "troupe::shared_floats");
  CHECK(registered_name<push_msg>(sys) == "troupe::push_msg");
  CHECK(registered_name<params_msg>(sys) == "troupe::params_msg");
  CHECK(registered_name<replica_loss>(sys) == "troupe::replica_loss");
  CHECK(registered_name<epoch_order>(sys) == "troupe::epoch_order");
  CHECK(registered_name<replica_report>(sys) == "troupe::replica_report");
  CHECK(registered_name<store_stats>(sys) == "troupe::store_stats");
  CHECK(registered_name<replica_config>(sys) == "troupe::replica_config");
  CHECK(registered_name<fit_summary>(sys) == "troupe::fit_summary");
  CHECK(registered_name<replica_actor>(sys) == "troupe::replica_actor");
  CHECK(registered_name<store_actor>(sys) == "troupe::store_actor");
  CHECK(registered_name<coordinator_actor>(sys) == "troupe::coordinator_actor");
  CHECK(registered_name<handshake>(sys) == "troupe::handshake");
  CHECK(registered_name<store_config>(sys) == "troupe::store_config");
  CHECK(registered_name<node_actor>(sys) == "troupe::node_actor");
  CHECK(registered_name<norm_msg>(sys) == "troupe::norm_msg");

  // Without register_messages the names are unknown: the check above can fail.
  caf::actor_system_config bare_cfg;
  bare_cfg.set("scheduler.policy", caf::atom("testing"));
  caf::actor_system bare{bare_cfg};
  CHECK(registered_name<push_msg>(bare) != "troupe::push_msg");
}

TEST_CASE("every message type travels inside a caf::message through the registry",
          "[messages][registry]") {
  test_config cfg;
  caf::actor_system sys{cfg};
  check_equal(roundtrip_in_message(sys, sample_push()), sample_push());
  check_equal(roundtrip_in_message(sys, sample_params()), sample_params());
  CHECK(same_bytes(roundtrip_in_message(sys, tricky_floats()), tricky_floats()));

  epoch_order order{3, sample_params()};
  auto o = roundtrip_in_message(sys, order);
  CHECK(o.epoch == 3);
  check_equal(o.params, order.params);

  CHECK(roundtrip_in_message(sys, replica_report{2, 10, 1.0, 9, 1, 0, 0, {}}).samples == 10);
  CHECK(roundtrip_in_message(sys, store_stats{5, 6, 96, 0, 0, 0, 0, 1, 6, 1, 3, false, 0, {}, {}, {}}).live_replicas == 3);
  replica_config config;
  config.data_dir = "/data";
  config.gradient_norm = true;
  CHECK(roundtrip_in_message(sys, config).data_dir == "/data");
  CHECK(roundtrip_in_message(sys, config).gradient_norm);
  norm_msg sum{41, 2, 7, std::vector<uint64_t>(22, 0xfedcba9876543210ull), true};
  const auto sum_back = roundtrip_in_message(sys, sum);
  CHECK(sum_back.round == 41);
  CHECK(sum_back.shard == 2);
  CHECK(sum_back.membership == 7);
  CHECK(sum_back.limbs == sum.limbs);
  CHECK(sum_back.non_finite);
  fit_summary summary;
  summary.mode = "sync";
  summary.params = floats({1.0f, 2.0f});
  summary.replica_totals = {replica_report{1, 10, 2.0, 9, 3, 0.5, 0.25, {}}};
  summary.waited_on = {0, 12};
  auto f = roundtrip_in_message(sys, summary);
  CHECK(f.mode == "sync");
  CHECK(same_bytes(f.params, summary.params));
  REQUIRE(f.replica_totals.size() == 1);
  CHECK(f.replica_totals[0].compute_seconds == 0.5);
  CHECK(f.waited_on == std::vector<uint64_t>{0, 12});

  // The atoms and a Troupe error travel too (errors carry their sentence).
  auto err = make_troupe_error(troupe_errc::stale_round, "round 3 is closed");
  auto msg = caf::make_message(push_atom::value, err);
  auto back = deserialize<caf::message>(sys, serialize(sys, msg));
  REQUIRE(back.match_elements<push_atom, caf::error>());
  const auto& err_back = back.get_as<caf::error>(1);
  CHECK(err_back.category() == caf::atom("troupe"));
  CHECK(err_back.code() == static_cast<uint8_t>(troupe_errc::stale_round));
  CHECK(describe(err_back) == "round 3 is closed");
  CHECK(sys.render(err_back).find("round 3 is closed") != std::string::npos);
}
