// The nodes of a run, one entry per node program: its address, its clock,
// whether it is still taken for alive, and the roles it plays (store node,
// replica node, or both). Shards and replicas name their node by its index
// here; a loss noticed through either role is the node's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace troupe::detail {

/// Holds one node of a run.
struct node_entry {
  std::string address;      // "H:P"
  int64_t clock_offset = 0; // add to its steady-clock times to get this process's
  bool alive = true;        // no loss of it seen
  // Its roles, each as its rank among the nodes of that role (the spawners'
  // numbering): store nodes in the order given, replica nodes in the order
  // given, then as they joined.
  std::optional<size_t> store_rank;
  std::optional<size_t> replica_rank;
  // A replica spawn failed on it while it lived: no replica is placed there
  // again, while its shards (a store node's) serve on.
  bool refuses_replicas = false;
  // A store shard failed to start on it while it lived: no shard is placed
  // there again, while its replicas train on.
  bool refuses_shards = false;
};

/// Holds every node of a run. An index stays valid for the run: a node that
/// joins again after its loss gets an entry of its own.
struct node_table {
  static constexpr size_t here = SIZE_MAX; // this process, which is no entry

  std::vector<node_entry> nodes;
  int64_t clock_error_ns = 0; // the clock offsets hold within this

  /// Returns the indices of the store nodes, by store rank.
  std::vector<size_t> store_nodes() const;

  /// Returns the indices of the replica nodes, by replica rank.
  std::vector<size_t> replica_nodes() const;

  /// Says whether `node` (or here, always) is taken for alive.
  bool alive(size_t node) const { return node == here || nodes[node].alive; }

  /// Marks `node` lost, in all its roles; nothing for here.
  void lose(size_t node) {
    if (node != here)
      nodes[node].alive = false;
  }

  /// Places no more replicas on `node` (one failed to start there); its
  /// other role goes on. Nothing for here.
  void refuse_replicas(size_t node) {
    if (node != here)
      nodes[node].refuses_replicas = true;
  }

  /// Places no more store shards on `node` (one failed to start there); its
  /// replicas go on. Nothing for here.
  void refuse_shards(size_t node) {
    if (node != here)
      nodes[node].refuses_shards = true;
  }

  /// Says whether a store shard may be placed on `node` (here: always).
  bool hosts_shards(size_t node) const {
    return node == here || (nodes[node].alive && !nodes[node].refuses_shards);
  }

  /// Says whether a replica may be placed on `node` (here: always).
  bool hosts_replicas(size_t node) const {
    return node == here || (nodes[node].alive && !nodes[node].refuses_replicas);
  }

  /// Returns what to add to times of `node` to get this process's (0 here).
  int64_t clock_offset(size_t node) const {
    return node == here ? 0 : nodes[node].clock_offset;
  }

  /// Returns `node`'s rank as a store node, for the store spawner (here stays here).
  size_t store_rank(size_t node) const { return node == here ? here : *nodes[node].store_rank; }

  /// Returns `node`'s rank as a replica node, for the replica spawner.
  size_t replica_rank(size_t node) const {
    return node == here ? here : *nodes[node].replica_rank;
  }

  /// Counts the replica nodes taken for alive that still take replicas.
  size_t live_replica_nodes() const;

  /// Says, by store rank, which store nodes are taken for alive.
  std::vector<bool> store_nodes_alive() const;

  /// Returns the live node at `address`, if any.
  std::optional<size_t> find_live(const std::string& address) const;

  /// Makes `node` a replica node, ranked after every other; returns its rank.
  size_t add_replica_role(size_t node);
};

} // namespace troupe::detail
