// The process's greeted nodes.
#include "actors/runtime/known_peers.hpp"

#include <mutex>
#include <set>

#include <caf/node_id.hpp>

namespace troupe::detail {

namespace {

std::mutex greeted_mutex;
std::set<caf::node_id> greeted;

} // namespace

void greet_node(const caf::node_id& node) {
  std::lock_guard<std::mutex> lock{greeted_mutex};
  greeted.insert(node);
}

bool greeted_node(const caf::node_id& node) {
  std::lock_guard<std::mutex> lock{greeted_mutex};
  return greeted.count(node) > 0;
}

} // namespace troupe::detail
