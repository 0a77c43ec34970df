// Each learning-rate schedule at chosen steps against its Keras formula
// computed here, an optimizer stepping at its schedule's rates, the text
// form and the refused parameters.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "model/optim/lr_schedule.hpp"
#include "model/optim/lr_schedule_text.hpp"
#include "model/optim/optimizer.hpp"
#include "tests/model/optimizer_reference.hpp"

using namespace troupe;

namespace {

const double pi = std::acos(-1.0);

// Keras's CosineDecay written out: warm-up, then the cosine, then alpha.
double keras_cosine(double initial, double decay_steps, double alpha, double warmup_steps,
                    double warmup_target, double step) {
  double decay_from = initial;
  if (warmup_steps > 0) {
    step = std::min(step, decay_steps + warmup_steps);
    if (step < warmup_steps)
      return initial + (warmup_target - initial) * step / warmup_steps;
    step -= warmup_steps;
    decay_from = warmup_target;
  }
  step = std::min(step, decay_steps);
  return decay_from * ((1 - alpha) * 0.5 * (1 + std::cos(pi * step / decay_steps)) + alpha);
}

optimizer_config scheduled(float lr, lr_schedule schedule) {
  return optimizers::with_schedule(optimizers::sgd(lr), std::move(schedule));
}

// The rate is computed in double and rounded once: within float rounding.
void check_rate(const optimizer_config& config, uint64_t step, double expected) {
  INFO(to_setting_text(config.schedule) << " at step " << step);
  CHECK(scheduled_learning_rate(config, step) == Approx(expected).epsilon(1e-7).margin(1e-12));
}

} // namespace

TEST_CASE("the constant schedule is the learning rate itself at every step",
          "[model][optim][lr-schedule]") {
  const auto config = optimizers::adam(0.0123f);
  for (uint64_t step : {0ull, 1ull, 1000ull, 1ull << 40})
    CHECK(scheduled_learning_rate(config, step) == 0.0123f);
}

TEST_CASE("step decay multiplies the rate by its factor every N steps",
          "[model][optim][lr-schedule]") {
  const auto config = scheduled(0.1f, schedules::step_decay(1000, 0.5f));
  for (uint64_t step : {0, 1, 999, 1000, 1999, 2000, 2500, 10000})
    check_rate(config, step, 0.1f * std::pow(0.5, std::floor(step / 1000.0)));
}

TEST_CASE("exponential decay is lr x rate^(t / decay_steps), with staircase its floor",
          "[model][optim][lr-schedule]") {
  for (bool staircase : {false, true}) {
    const auto config = scheduled(0.1f, schedules::exponential_decay(1000, 0.96f, staircase));
    for (uint64_t step : {0, 1, 500, 999, 1000, 1500, 100000}) {
      const double exponent = step / 1000.0;
      check_rate(config, step,
                 0.1f * std::pow(double{0.96f}, staircase ? std::floor(exponent) : exponent));
    }
  }
}

TEST_CASE("cosine decay falls from lr to alpha x lr over decay_steps and stays there",
          "[model][optim][lr-schedule]") {
  const auto config = scheduled(0.1f, schedules::cosine_decay(1000, 0.1f));
  for (uint64_t step : {0, 1, 250, 500, 999, 1000, 5000})
    check_rate(config, step, keras_cosine(0.1f, 1000, 0.1f, 0, 0, static_cast<double>(step)));
  CHECK(scheduled_learning_rate(config, 500) == Approx(0.1 * (0.9 * 0.5 + 0.1)));
  CHECK(scheduled_learning_rate(config, 5000) == Approx(0.01));
}

TEST_CASE("cosine decay with a warm-up climbs linearly from lr to warmup_target, then decays "
          "from there",
          "[model][optim][lr-schedule]") {
  for (float lr : {0.0f, 1e-4f}) {
    const auto config = scheduled(lr, schedules::cosine_decay(1000, 0.0f, 100, 0.01f));
    for (uint64_t step : {0, 1, 50, 99, 100, 101, 600, 1100, 1101, 50000})
      check_rate(config, step, keras_cosine(lr, 1000, 0, 100, 0.01f, static_cast<double>(step)));
    CHECK(scheduled_learning_rate(config, 100) == Approx(0.01));
    CHECK(scheduled_learning_rate(config, 1100) == 0.0f);
  }
}

TEST_CASE("an optimizer takes step t at its schedule's rate of t, weight decay included",
          "[model][optim][lr-schedule]") {
  for (auto config : {optimizers::adamw(0.0f, 0.1f), optimizers::sgd(0.0f, 0.9f, false, 0.1f),
                      optimizers::rmsprop(0.0f, 0.9f, 0.5f, 1e-7f, true, 0.1f)}) {
    INFO(config.name);
    config.schedule = schedules::cosine_decay(6, 0.2f, 3, 0.05f); // climbs, decays, stays
    const auto rate = [](int t) { return keras_cosine(0, 6, double{0.2f}, 3, double{0.05f}, t); };
    test::check_against_reference(config, rate, 12);
  }
}

TEST_CASE("a schedule's text form reads back to the same schedule", "[model][optim][lr-schedule]") {
  for (const auto& s : {schedules::constant(), schedules::step_decay(1000, 0.5f),
                        schedules::exponential_decay(1000, 0.96f, true),
                        schedules::cosine_decay(10000, 0.1f, 500, 0.001f)}) {
    const auto text = to_setting_text(s);
    INFO(text);
    auto read = parse_lr_schedule(text);
    REQUIRE(read);
    CHECK(to_setting_text(*read) == text);
    CHECK(settings_text(*read) == settings_text(s));
  }
  auto short_form = parse_lr_schedule("exponential:decay_steps=100,decay_rate=0.5,staircase");
  REQUIRE(short_form);
  CHECK(short_form->staircase);
  CHECK(short_form->decay_steps == 100u);
  CHECK(short_form->decay_rate == 0.5f);
  CHECK(to_setting_text(*short_form)
        == "exponential:decay_steps=100,decay_rate=0.5,staircase=true");
}

TEST_CASE("a schedule text with an unknown kind, parameter or value says which",
          "[model][optim][lr-schedule]") {
  const std::vector<std::pair<std::string, std::string>> table{
    {"linear:steps=5", "no schedule is called 'linear' (expected constant, step, exponential or "
                       "cosine)"},
    {"step:every=10,rate=0.5", "step takes every or factor, not 'rate'"},
    {"constant:every=10", "constant takes no parameters"},
    {"cosine:decay_steps=ten", "decay_steps takes a whole number, not 'ten'"},
    {"cosine:decay_steps=-5", "decay_steps takes a whole number, not '-5'"},
    {"exponential:decay_steps=10,decay_rate=x", "decay_rate takes a number, not 'x'"},
    {"exponential:decay_steps=10,staircase=yes", "staircase takes true or false, not 'yes'"},
    {"step:every=10,every=20", "every is given twice"},
  };
  for (const auto& [text, why] : table) {
    auto read = parse_lr_schedule(text);
    REQUIRE_FALSE(read);
    CHECK(read.error().message == "'" + text + "': " + why);
  }
}

TEST_CASE("a schedule whose parameters cannot work is refused naming --lr-schedule",
          "[model][optim][lr-schedule]") {
  const std::vector<std::pair<lr_schedule, std::string>> table{
    {schedules::step_decay(0, 0.5f), "every must be at least 1"},
    {schedules::step_decay(10, 0.0f), "factor must be positive, got 0"},
    {schedules::exponential_decay(0, 0.5f), "decay_steps must be at least 1"},
    {schedules::exponential_decay(10, -1.0f), "decay_rate must be positive, got -1"},
    {schedules::cosine_decay(0), "decay_steps must be at least 1"},
    {schedules::cosine_decay(10, 1.5f), "alpha must be between 0 and 1, got 1.5"},
    {schedules::cosine_decay(10, 0.0f, 5), "a warm-up needs a positive warmup_target"},
    {schedules::cosine_decay(10, 0.0f, 0, 0.1f), "warmup_target needs warmup_steps"},
  };
  for (const auto& [schedule, why] : table) {
    const auto config = scheduled(0.1f, schedule);
    const auto refusal = refuse_optimizer_config(config);
    INFO(refusal);
    CHECK(refusal.rfind("--lr-schedule=" + to_setting_text(schedule) + ": ", 0) == 0);
    CHECK(refusal.find(why) != std::string::npos);
    CHECK_FALSE(make_optimizer(config, 1));
  }
  auto unknown = scheduled(0.1f, schedules::constant());
  unknown.schedule.kind = "linear";
  CHECK(refuse_optimizer_config(unknown).find("--lr-schedule: unknown schedule 'linear'")
        == 0);
}

TEST_CASE("a learning rate of 0 is taken only where a cosine schedule warms up from it",
          "[model][optim][lr-schedule]") {
  auto config = optimizers::adamw(0.0f);
  CHECK(refuse_optimizer_config(config)
        == "--lr must be positive, got 0 (0 only where a cosine schedule warms up from it)");
  config.schedule = schedules::cosine_decay(100, 0.0f, 10, 1e-3f);
  CHECK(refuse_optimizer_config(config).empty());
  CHECK(make_optimizer(config, 3));
}
