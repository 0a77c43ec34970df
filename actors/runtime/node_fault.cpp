// Parsing and firing --fault.
#include "actors/runtime/node_fault.hpp"

#include <atomic>
#include <csignal>
#include <mutex>
#include <stdexcept>

#include "messages/errors.hpp"

namespace troupe::detail {

namespace {

std::mutex planned_mutex;
node_fault planned; // signal 0: none
std::atomic<bool> refusing_replicas{false};
std::atomic<bool> refusing_store{false};

} // namespace

caf::expected<node_fault> parse_node_fault(const std::string& text) {
  if (text.empty())
    return node_fault{};
  const auto bad = [&text](const std::string& why) {
    return make_troupe_error(troupe_errc::bad_config,
                             "--fault: '" + text + "' " + why
                               + " (expected kill@R, stop@R, refuse@R or refuse-store@R, R a "
                                 "store round)");
  };
  const auto at = text.find('@');
  if (at == std::string::npos)
    return bad("has no '@'");
  const auto action = text.substr(0, at);
  node_fault fault;
  if (action == "kill")
    fault.signal = SIGKILL;
  else if (action == "stop")
    fault.signal = SIGSTOP;
  else if (action == "refuse")
    fault.signal = refuse_replicas_fault;
  else if (action == "refuse-store")
    fault.signal = refuse_store_fault;
  else
    return bad("names no action");
  const auto round = text.substr(at + 1);
  if (round.empty() || round.find_first_not_of("0123456789") != std::string::npos)
    return bad("does not end in a round");
  try {
    fault.round = std::stoull(round);
  } catch (const std::exception&) {
    return bad("has a round out of range");
  }
  return fault;
}

void plan_node_fault(node_fault fault) {
  std::lock_guard<std::mutex> guard{planned_mutex};
  planned = fault;
}

node_fault planned_node_fault() {
  std::lock_guard<std::mutex> guard{planned_mutex};
  return planned;
}

void fire_node_fault(int signal) {
  static std::atomic<bool> fired{false};
  if (fired.exchange(true))
    return;
  if (signal == refuse_replicas_fault)
    refusing_replicas = true;
  else if (signal == refuse_store_fault)
    refusing_store = true;
  else
    std::raise(signal);
}

bool node_refuses_replicas() {
  return refusing_replicas;
}

bool node_refuses_store() {
  return refusing_store;
}

} // namespace troupe::detail
