// The acceptance test of the model seam: a model the runtime knows only by
// the troupe::model interface, registered from this test, trains through the
// real options check, placement, store shards and replicas; the handshake
// tells two builds of a same-named model apart.
#include <catch2/catch.hpp>

#include <memory>
#include <string>

#include <caf/all.hpp>

#include "actors/cluster/handshake.hpp"
#include "actors/run/coordinator.hpp"
#include "messages/errors.hpp"
#include "messages/register.hpp"
#include "model/builtin_model.hpp"
#include "model/model_description.hpp"
#include "tests/test_slice.hpp"

using namespace troupe;

namespace {

// The built-in MLP behind the interface, as a user's model would be: the
// runtime computes it on the host through gradient() and evaluate() only.
// `shift` moves its initial parameters: another build of the same name.
class host_mlp final : public model {
public:
  host_mlp(model_spec spec, float shift) : inner_(std::move(spec)), shift_(shift) {}
  int inputs() const override { return inner_.inputs(); }
  int outputs() const override { return inner_.outputs(); }
  size_t parameter_count() const override { return inner_.parameter_count(); }
  void initialize(uint64_t seed, float* parameters) const override {
    inner_.initialize(seed, parameters);
    parameters[0] += shift_;
  }
  batch_result gradient(const float* p, const batch& b, float* g) override {
    return inner_.gradient(p, b, g);
  }
  batch_result evaluate(const float* p, const batch& b) override {
    return inner_.evaluate(p, b);
  }
  void predict(const float* p, const float* x, size_t n, float* out) override {
    inner_.predict(p, x, n, out);
  }

private:
  builtin_model inner_;
  float shift_;
};

void register_host_mlp(float shift) {
  register_model("test-host-mlp", [shift](const std::string& settings)
                                    -> expected<std::unique_ptr<model>> {
    auto spec = parse_model_spec(settings);
    if (!spec)
      return spec.error();
    return std::unique_ptr<model>(std::make_unique<host_mlp>(*spec, shift));
  });
}

struct registered_config : caf::actor_system_config {
  registered_config() { register_messages(*this); }
};

run_config small_run(const std::string& model_text, const std::string& mode) {
  run_config c;
  c.model = model_text;
  c.policy.name = mode;
  c.replicas = 2;
  c.epochs = 1;
  c.batch_size = 32;
  c.seed = 7;
  c.step_timeout_ms = 20000;
  return c;
}

} // namespace

TEST_CASE("a registered model trains through the interface to the built-in path's bits, "
          "whatever the shard count",
          "[model][fit][registry]") {
  register_host_mlp(0.0f);
  registered_config cfg;
  caf::actor_system sys{cfg};
  auto builtin = run_training(sys, small_run("784-32relu-10", "sync"), shared_test_slice());
  REQUIRE(builtin);
  for (uint32_t shards : {1u, 3u}) {
    INFO(shards << " store shards");
    auto options = small_run("test-host-mlp:784-32relu-10", "sync");
    options.store_shards = shards;
    auto registered = run_training(sys, options, shared_test_slice());
    REQUIRE(registered);
    CHECK(registered->params_fnv1a64 == builtin->params_fnv1a64);
    CHECK(registered->test_accuracy == builtin->test_accuracy);
  }
}

TEST_CASE("async, ssp and delayed runs train a registered model on every sample once",
          "[model][fit][registry]") {
  register_host_mlp(0.0f);
  registered_config cfg;
  caf::actor_system sys{cfg};
  const auto train_count = static_cast<uint64_t>(shared_test_slice()->train.count);
  for (const char* mode : {"async", "ssp", "delayed"}) {
    INFO(mode);
    auto options = small_run("test-host-mlp:784-32relu-10", mode);
    options.policy.settings.staleness = std::string(mode) == "async" ? 0 : 1;
    auto summary = run_training(sys, options, shared_test_slice());
    REQUIRE(summary);
    uint64_t samples = 0;
    for (const auto& replica : summary->replica_totals)
      samples += replica.samples;
    CHECK(samples == train_count);
    CHECK(summary->test_accuracy > 0.6);
  }
}

TEST_CASE("an unregistered model name and bad model settings are refused clearly",
          "[model][fit][registry]") {
  register_host_mlp(0.0f);
  registered_config cfg;
  caf::actor_system sys{cfg};
  auto unknown = run_training(sys, small_run("no-such-model:3", "sync"), shared_test_slice());
  REQUIRE_FALSE(unknown);
  CHECK_THAT(describe(unknown.error()),
             Catch::Contains("no model is registered as 'no-such-model'")
               && Catch::Contains("test-host-mlp"));
  auto bad_settings = run_training(sys, small_run("test-host-mlp:784-x-10", "sync"), shared_test_slice());
  REQUIRE_FALSE(bad_settings);
  CHECK_THAT(describe(bad_settings.error()), Catch::Contains("test-host-mlp:784-x-10"));
}

TEST_CASE("the handshake refuses a peer whose registered model of the same name differs",
          "[model][handshake][registry]") {
  registered_config cfg;
  caf::actor_system sys{cfg};
  const std::string text = "test-host-mlp:784-32relu-10";
  register_host_mlp(0.0f);
  const auto coordinator = make_handshake(sys, text, "", "coordinator");
  const auto same = make_handshake(sys, text, "", "node");
  CHECK_FALSE(check_handshake(same, coordinator));
  register_host_mlp(0.5f); // another build: other initial parameters
  const auto other = make_handshake(sys, text, "", "node");
  register_host_mlp(0.0f);
  CHECK(other.model_fingerprint != coordinator.model_fingerprint);
  auto refused = check_handshake(other, coordinator);
  REQUIRE(refused);
  CHECK_THAT(describe(refused), Catch::Contains("model fingerprint of " + text + " differs"));
}
