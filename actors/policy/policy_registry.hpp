// Every update policy by name, with what the runtime needs to know of it
// without building one: which settings apply, whether it promises the same
// bits, the buffers a shard needs for it, how it counts steps. The option
// checks, the coordinator, placement and the store read these; only the
// store builds the policy itself. Built-in policies register in
// builtin_policies.hpp; a test registers its own with register_policy.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <caf/error.hpp>
#include <caf/expected.hpp>

#include "actors/policy/update_policy.hpp"

namespace troupe::detail {

/// What a policy is under given settings.
struct policy_traits {
  /// A run promises the same bits for a fixed seed, whatever the timing and
  /// placement (then every node must compute the same bits: check_handshake).
  bool reproducible = false;
  /// One optimizer step per round of the global batch, from every replica's
  /// share (sync, delayed); false: one step per push of a replica's share.
  bool steps_per_round = false;
  /// Pushes may be computed from parameters older than the current ones, so
  /// their staleness is worth reporting (the progress line shows it then).
  bool reports_staleness = false;
  // The buffers a shard needs (actors/store/shard_buffers.hpp):
  /// Every replica waits for its round to close before it reads the
  /// parameters again, so nobody reads a shard's range while the shard steps
  /// it: the shards of one process then step two shared buffers in turn, and
  /// replicas read them without a copy.
  bool replicas_wait_for_rounds = false;
  /// Versions before the current one the shard keeps for
  /// store_port::answer_from (delayed: K - 1).
  uint32_t history_depth = 0;
  /// A replica lost mid-run can be replaced by a new actor in its place
  /// (--on-replica-loss=respawn) without a sample trained twice or skipped.
  bool respawns = false;
  /// How the new actor goes on: false, it computes the open round's share
  /// again from that round's base version, which every round waits for, so
  /// the step does not change (sync); true, it goes on from the round after
  /// the last push of its replica each shard took, and a shard answers a
  /// push it took already without using it (async, ssp, delayed).
  bool resumes_pushes = false;
};

/// Describes one update policy: its name (--mode), its settings and traits,
/// and how to build it.
struct policy_descriptor {
  std::string name;
  std::string summary; // one line for --help
  /// The options of policy_settings that apply (as settings_text names them:
  /// "staleness", "backup-replicas", "staleness-lr"); another one set to
  /// other than its default is refused.
  std::vector<std::string> settings;
  /// Refuses settings the policy cannot run with (optional): a sentence.
  std::function<std::string(const policy_settings&)> refuse;
  std::function<policy_traits(const policy_settings&)> traits;
  std::function<std::unique_ptr<update_policy>(const policy_settings&)> make;
};

/// Adds a policy (a test's, or a program's own); a name already taken is a
/// bad_config error.
caf::error register_policy(policy_descriptor descriptor);

/// Returns the policy named `name`, or null.
const policy_descriptor* find_policy(const std::string& name);

/// Lists every policy's name, built-in ones first in their order.
std::vector<std::string> policy_names();

/// Checks a run's policy and settings: the name is known, every setting set
/// applies to it, and the policy accepts them. The error names the option.
caf::error check_policy_spec(const policy_spec& spec);

/// Returns the traits of a checked spec.
policy_traits traits_of(const policy_spec& spec);

/// Builds the policy store shard `shard` follows. With `on_loss` abort, a
/// replica's death stops it (stop_on_loss.hpp).
caf::expected<std::unique_ptr<update_policy>>
make_update_policy(const policy_spec& spec,
                   replica_loss_action on_loss = replica_loss_action::continue_run,
                   uint32_t shard = 0);

} // namespace troupe::detail
