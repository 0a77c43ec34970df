// Every wire type through CAF's binary serializer and back, the registry that
// register_messages fills, and the bulk encoding of float buffers.
#include <catch2/catch.hpp>

#include <cstring>
#include <string>
#include <vector>

#include <caf/all.hpp>

#include "messages/errors.hpp"
#include "messages/interfaces.hpp"
#include "messages/protocol.hpp"
#include "messages/register.hpp"
#include "tests/actors/serial_roundtrip.hpp"

using namespace troupe;
using namespace troupe::testing;

namespace {

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
  CHECK(buf.size() <= payload + 96); // a few header fields, no per-element framing
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
