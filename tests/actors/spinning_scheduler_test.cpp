// The scheduler Troupe's programs run (cluster_config's default): actors on
// it exchange every message and the system shuts down; CAF's own policies
// stay selectable.
#include <catch2/catch.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <caf/all.hpp>

#include "actors/config/cluster_config.hpp"
#include "actors/runtime/spinning_scheduler.hpp"

using namespace troupe;

namespace {

// Runs `rounds` request-answer pairs between each of `pairs` pairs of actors
// and returns how many answers arrived.
int ping_pong(cluster_config& cfg, int pairs, int rounds) {
  caf::actor_system system{cfg};
  auto echo = [](caf::event_based_actor*) -> caf::behavior {
    return {[](int value) { return value; }};
  };
  caf::scoped_actor self{system};
  std::vector<caf::actor> players, partners;
  for (int p = 0; p < pairs; ++p) {
    auto partner = system.spawn(echo);
    partners.push_back(partner);
    players.push_back(system.spawn([partner, rounds](caf::event_based_actor* me) {
      return caf::behavior{[me, partner, rounds](caf::get_atom) -> caf::result<int> {
        auto promise = me->make_response_promise<int>();
        auto left = std::make_shared<int>(rounds);
        auto arrived = std::make_shared<int>(0);
        // The step holds itself only through its pending request's
        // handler, so it is freed once the last answer is in.
        auto step = std::make_shared<std::function<void()>>();
        std::weak_ptr<std::function<void()>> weak_step = step;
        *step = [me, partner, promise, left, arrived, weak_step]() mutable {
          if (*left == 0) {
            promise.deliver(*arrived);
            return;
          }
          me->request(partner, caf::infinite, (*left)--)
            .then([arrived, step = weak_step.lock()](int) {
              ++*arrived;
              (*step)();
            });
        };
        (*step)();
        return promise;
      }};
    }));
  }
  int total = 0;
  for (auto& player : players)
    self->request(player, std::chrono::seconds(30), caf::get_atom::value)
      .receive([&](int arrived) { total += arrived; },
               [&](caf::error& err) { FAIL(system.render(err)); });
  // CAF 0.17 waits at shutdown for every actor not told to exit.
  for (const auto& actors : {players, partners})
    for (const auto& actor : actors)
      self->send_exit(actor, caf::exit_reason::user_shutdown);
  return total;
}

cluster_config parsed(std::vector<std::string> args) {
  cluster_config cfg;
  std::vector<char*> argv{const_cast<char*>("test")};
  for (auto& arg : args)
    argv.push_back(arg.data());
  REQUIRE_FALSE(cfg.parse(static_cast<int>(argv.size()), argv.data()));
  REQUIRE_FALSE(cfg.prepare());
  return cfg;
}

} // namespace

TEST_CASE("actors on the spinning scheduler exchange every message and the system stops",
          "[scheduler]") {
  for (const std::string threads : {"1", "2", "4"}) {
    INFO(threads << " threads");
    auto cfg = parsed({"--scheduler.max-threads=" + threads});
    CHECK(caf::get_or(cfg.content, "scheduler.policy", caf::atom("stealing"))
          == caf::atom(spinning_scheduler_policy));
    CHECK(ping_pong(cfg, 6, 2000) == 6 * 2000);
  }
}

TEST_CASE("scheduler.policy still picks CAF's own schedulers", "[scheduler]") {
  for (const std::string policy : {"sharing", "stealing"}) {
    INFO(policy);
    auto cfg = parsed({"--scheduler.policy=" + policy, "--scheduler.max-threads=2"});
    CHECK(caf::get_or(cfg.content, "scheduler.policy", caf::atom("spinning"))
          != caf::atom(spinning_scheduler_policy));
    CHECK(ping_pong(cfg, 3, 500) == 3 * 500);
  }
}
