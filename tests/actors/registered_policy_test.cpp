// The acceptance test of the update policy seam: policies the runtime has
// never heard of, registered from this test, run whole fits through the real
// options check, placement, coordinator, store shards and replicas, which
// know them by their descriptors alone.
#include <catch2/catch.hpp>

#include <memory>
#include <optional>
#include <string>

#include <caf/all.hpp>

#include "actors/policy/policy_registry.hpp"
#include "actors/policy/sync_policy.hpp"
#include "actors/run/coordinator.hpp"
#include "messages/errors.hpp"
#include "messages/register.hpp"
#include "tests/test_slice.hpp"

using namespace troupe;

namespace {

// Applies the gradients of replica 0 alone, each on arrival, and answers
// every push at once: a policy with behaviour of its own, so a fit shows
// that the store followed it.
class leader_only_policy final : public update_policy {
public:
  std::optional<push_refusal> on_push(gradient_push push, store_port& store) override {
    ++pushes_;
    if (push.replica == 0 && push.batch_size > 0)
      store.apply_step(push.gradient.data());
    push.gradient = shared_floats{};
    store.answer(push.ticket);
    return std::nullopt;
  }
  void on_replica_joined(uint32_t) override {}
  void on_replica_lost(uint32_t, store_port&) override {}
  uint64_t next_round() const override { return pushes_; }
  void set_next_round(uint64_t round) override { pushes_ = round; }

private:
  uint64_t pushes_ = 0;
};

// Registers the test's policies once per process: "test-leader" (above) and
// "test-lockstep", the sync policy under a name and descriptor of its own.
void register_test_policies() {
  static const bool registered = [] {
    policy_descriptor leader;
    leader.name = "test-leader";
    leader.summary = "replica 0's gradients only, applied on arrival";
    leader.traits = [](const policy_settings&) { return policy_traits{}; };
    leader.make = [](const policy_settings&) -> std::unique_ptr<update_policy> {
      return std::make_unique<leader_only_policy>();
    };
    policy_descriptor lockstep;
    lockstep.name = "test-lockstep";
    lockstep.summary = "sync under another name";
    lockstep.traits = sync_policy_descriptor().traits;
    lockstep.make = [](const policy_settings&) -> std::unique_ptr<update_policy> {
      return std::make_unique<sync_policy>();
    };
    return !register_policy(leader) && !register_policy(lockstep);
  }();
  REQUIRE(registered);
}

struct registered_config : caf::actor_system_config {
  registered_config() { register_messages(*this); }
};

// 2 replicas, global batch 32 over 2000 samples: 63 rounds an epoch.
run_config small_run(const std::string& mode) {
  run_config c;
  c.policy.name = mode;
  c.replicas = 2;
  c.epochs = 2;
  c.batch_size = 32;
  c.seed = 7;
  c.step_timeout_ms = 20000;
  return c;
}

} // namespace

TEST_CASE("a policy registered from a test runs a whole fit through the real store",
          "[policy][fit][registry]") {
  register_test_policies();
  const auto names = policy_names();
  CHECK(std::find(names.begin(), names.end(), "test-leader") != names.end());
  registered_config cfg;
  caf::actor_system sys{cfg};
  for (uint32_t shards : {1u, 2u}) {
    INFO(shards << " store shards");
    auto options = small_run("test-leader");
    options.store_shards = shards;
    auto leader = run_training(sys, options, shared_test_slice());
    REQUIRE(leader);
    // Every push was answered, but only replica 0's made steps: one a round.
    CHECK(leader->version == 2 * 63);
    CHECK(leader->test_accuracy > 0.6);
  }
  // Its descriptor lists no settings: one set is refused, naming those it works with.
  auto stale = small_run("test-leader");
  stale.policy.settings.staleness = 2;
  auto refused = run_training(sys, stale, shared_test_slice());
  REQUIRE_FALSE(refused);
  CHECK_THAT(describe(refused.error()),
             Catch::Contains("--staleness=2 works with --mode=ssp or delayed, not test-leader"));
}

TEST_CASE("a registered copy of sync trains to sync's bits: nothing but the descriptor "
          "decides how the runtime treats a policy",
          "[policy][fit][registry]") {
  register_test_policies();
  registered_config cfg;
  caf::actor_system sys{cfg};
  auto sync = run_training(sys, small_run("sync"), shared_test_slice());
  auto lockstep = run_training(sys, small_run("test-lockstep"), shared_test_slice());
  REQUIRE(sync);
  REQUIRE(lockstep);
  CHECK(lockstep->version == sync->version);
  CHECK(lockstep->params_fnv1a64 == sync->params_fnv1a64);
  CHECK(lockstep->mode == "test-lockstep");
}
