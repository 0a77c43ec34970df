// A real replica under --wire=int8 pushing to a store that records what it
// gets: its first push is its gradient quantized in blocks from parameter 0,
// and its next carries the error feedback, x = g + (g - first push).
#include <catch2/catch.hpp>

#include <chrono>
#include <cstring>
#include <memory>
#include <mutex>
#include <vector>

#include <caf/all.hpp>

#include "actors/replica/replica.hpp"
#include "messages/errors.hpp"
#include "messages/float_codec.hpp"
#include "messages/register.hpp"
#include "model/parameter_layout.hpp"
#include "tests/test_slice.hpp"

using namespace troupe;

namespace {

struct int8_replica_config : caf::actor_system_config {
  int8_replica_config() { register_messages(*this); }
};

constexpr const char* small_model = "784-8relu-10";

// The pushed gradients, in order.
struct push_log {
  std::mutex mutex;
  std::vector<shared_floats> gradients;
};

// A store of one shard that records each push and answers with `params`.
caf::behavior recording_store(caf::event_based_actor*, std::shared_ptr<push_log> log,
                              shared_floats params) {
  return {
    [log, params](push_atom, const push_msg& push) {
      {
        std::lock_guard<std::mutex> lock{log->mutex};
        log->gradients.push_back(push.gradient);
      }
      params_msg answer;
      answer.round = push.round + 1;
      answer.version = push.round + 1;
      answer.values = params;
      return answer;
    },
  };
}

// Trains one replica of `wire`, alone with a global batch of the whole
// slice (one round an epoch), `epochs` times over epoch 0's order at
// `params`, and returns what it pushed.
std::vector<shared_floats> pushes_of(float_codec wire, const shared_floats& params, int epochs) {
  int8_replica_config cfg;
  caf::actor_system sys{cfg};
  auto log = std::make_shared<push_log>();
  auto store = caf::actor_cast<store_actor>(sys.spawn(recording_store, log, params));
  replica_config config;
  config.model = small_model;
  config.global_batch = static_cast<uint32_t>(shared_train_slice()->count);
  config.wire = wire;
  auto replica = spawn_replica(sys, config, {store}, in_memory(shared_train_slice()));
  REQUIRE(replica);
  caf::scoped_actor self{sys};
  for (int e = 0; e < epochs; ++e) {
    epoch_order order;
    order.params.values = params;
    order.params.round = static_cast<uint64_t>(e);
    self->request(*replica, std::chrono::seconds(20), epoch_atom::value, order)
      .receive([](replica_report& report) { CHECK(report.pushes == 1); },
               [](caf::error& err) { FAIL(describe(err)); });
  }
  self->send_exit(*replica, caf::exit_reason::user_shutdown);
  self->send_exit(store, caf::exit_reason::user_shutdown);
  std::lock_guard<std::mutex> lock{log->mutex};
  return log->gradients;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

} // namespace

TEST_CASE("an int8 replica pushes its gradient quantized with error feedback",
          "[replica][wire][int8]") {
  // Parameters bf16 already: the int8 replica's rounding of them (to bf16)
  // leaves them as the fp32 replica sees them.
  const auto params =
    shared_floats{glorot_uniform_parameters(parameter_layout(*parse_model_spec(small_model)), 3)}
      .rounded(float_codec::bf16);
  const auto exact = pushes_of(float_codec::fp32, params, 1);
  REQUIRE(exact.size() == 1);
  const std::vector<float> g = exact[0].to_vector();
  const auto pushed = pushes_of(float_codec::int8, params, 2);
  REQUIRE(pushed.size() == 2);
  for (const auto& push : pushed) {
    CHECK(push.codec == float_codec::int8);
    REQUIRE(push.int8);
    CHECK(push.first_parameter() == 0);
    CHECK(push.int8->scales.size() == int8_blocks_spanned(0, g.size()));
  }
  // The first push: g quantized, nothing left over from before.
  std::vector<float> first(g.size());
  round_into(float_codec::int8, g.data(), g.size(), first.data());
  CHECK(same_bits(pushed[0].to_vector(), first));
  // The second: the same g (same samples, same order, same parameters) plus
  // the residual the first left, quantized.
  std::vector<float> x(g.size());
  for (size_t i = 0; i < g.size(); ++i)
    x[i] = g[i] + (g[i] - first[i]);
  std::vector<float> second(g.size());
  round_into(float_codec::int8, x.data(), x.size(), second.data());
  CHECK(same_bits(pushed[1].to_vector(), second));
  CHECK_FALSE(same_bits(second, first));
}
