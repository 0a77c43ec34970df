// The run's node table: its nodes by role and by liveness.
#include "actors/run/node_table.hpp"

#include <algorithm>

namespace troupe::detail {

namespace {

std::vector<size_t> ranked(const std::vector<node_entry>& nodes,
                           std::optional<size_t> node_entry::*rank) {
  std::vector<size_t> found;
  for (size_t n = 0; n < nodes.size(); ++n)
    if (nodes[n].*rank)
      found.push_back(n);
  std::sort(found.begin(), found.end(),
            [&](size_t a, size_t b) { return *(nodes[a].*rank) < *(nodes[b].*rank); });
  return found;
}

} // namespace

std::vector<size_t> node_table::store_nodes() const {
  return ranked(nodes, &node_entry::store_rank);
}

std::vector<size_t> node_table::replica_nodes() const {
  return ranked(nodes, &node_entry::replica_rank);
}

size_t node_table::live_replica_nodes() const {
  return static_cast<size_t>(std::count_if(nodes.begin(), nodes.end(), [](const node_entry& n) {
    return n.replica_rank && n.alive && !n.refuses_replicas;
  }));
}

std::vector<bool> node_table::store_nodes_alive() const {
  std::vector<bool> alive;
  for (size_t node : store_nodes())
    alive.push_back(nodes[node].alive);
  return alive;
}

std::optional<size_t> node_table::find_live(const std::string& address) const {
  for (size_t n = 0; n < nodes.size(); ++n)
    if (nodes[n].alive && nodes[n].address == address)
      return n;
  return std::nullopt;
}

size_t node_table::add_replica_role(size_t node) {
  size_t rank = 0;
  for (const auto& entry : nodes)
    if (entry.replica_rank)
      rank = std::max(rank, *entry.replica_rank + 1);
  nodes[node].replica_rank = rank;
  return rank;
}

} // namespace troupe::detail
