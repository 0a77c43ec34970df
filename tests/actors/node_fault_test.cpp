// A node's --fault: what it parses to, and the refusals that say what was wrong.
#include <catch2/catch.hpp>

#include <csignal>

#include "actors/runtime/node_fault.hpp"
#include "messages/errors.hpp"

using namespace troupe;

TEST_CASE("a node's --fault parses kill@R, stop@R and refuse@R, and refuses anything else "
          "saying why",
          "[options][fault]") {
  auto none = parse_node_fault("");
  REQUIRE(none);
  CHECK(none->signal == 0);
  auto kill = parse_node_fault("kill@401");
  REQUIRE(kill);
  CHECK(kill->signal == SIGKILL);
  CHECK(kill->round == 401);
  auto stop = parse_node_fault("stop@0");
  REQUIRE(stop);
  CHECK(stop->signal == SIGSTOP);
  CHECK(stop->round == 0);
  auto refuse = parse_node_fault("refuse@12");
  REQUIRE(refuse);
  CHECK(refuse->signal == refuse_replicas_fault);
  CHECK(refuse->round == 12);
  auto refuse_store = parse_node_fault("refuse-store@7");
  REQUIRE(refuse_store);
  CHECK(refuse_store->signal == refuse_store_fault);
  CHECK(refuse_store->round == 7);
  const std::pair<const char*, const char*> refused[] = {
    {"kill", "has no '@'"},
    {"boom@3", "names no action"},
    {"kill@", "does not end in a round"},
    {"kill@-1", "does not end in a round"},
    {"stop@3x", "does not end in a round"},
    {"kill@99999999999999999999999", "has a round out of range"},
  };
  for (const auto& [text, why] : refused) {
    INFO(text);
    auto parsed = parse_node_fault(text);
    REQUIRE_FALSE(parsed);
    CHECK(describe(parsed.error())
          == "--fault: '" + std::string(text) + "' " + why
               + " (expected kill@R, stop@R, refuse@R or refuse-store@R, R a store "
                 "round)");
  }
}
