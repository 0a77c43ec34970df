// The values Troupe's actors exchange (see docs/protocol.md for the flow).
// Every type here is registered in register_messages(); a type that is not
// fails silently across the network in CAF 0.17.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <caf/meta/type_name.hpp>

#include <troupe/model.hpp>

#include "messages/answer_delta.hpp"
#include "messages/checkpoint_messages.hpp"
#include "messages/coded_traffic.hpp"
#include "messages/device_floats.hpp"
#include "messages/shared_floats.hpp"
#include "common/optimizer_config.hpp"
#include "messages/policy_spec.hpp"

namespace troupe::detail {

/// Records one span of an actor's work for --trace, on its own process's
/// steady clock (the coordinator moves it onto its clock).
struct trace_span {
  uint8_t kind = 0;       // trace_kind
  uint64_t round = 0;     // the round (async: the push) it belongs to
  int64_t start_ns = 0;   // steady_clock, since its epoch
  int64_t duration_ns = 0;
};

/// Names what a trace_span measured.
enum class trace_kind : uint8_t {
  compute = 0, // a replica computes its gradient
  wait = 1,    // a replica waits for every shard's answer
  step = 2,    // a shard's call that closed a round: reduction, optimizer step, answers
  gather = 3,  // a replica copies a round's samples while it waits for the round before
  join = 4,    // a replica copies a shard's answer into its parameters as it comes
  send = 5,    // a replica sends a shard its slice while its model computes on
};

/// Carries one replica's gradient for one step to the store.
struct push_msg {
  uint32_t replica = 0;
  uint64_t round = 0;        // sync: the round it belongs to; async: informational
  uint64_t base_version = 0; // the parameter version it was computed at
  uint32_t batch_size = 0;   // samples behind it; 0 in a short last round
  double loss_sum = 0;       // the batch's summed training loss (for progress)
  shared_floats gradient;    // mean-loss gradient, the receiving shard's slice of it;
                             // may be empty when batch_size is 0
  device_floats device_gradient; // instead, in device memory: a replica and shard of one
                                 // process on devices of one kind (--store-device)
  bool device_answer = false; // answer with parameters in the store's device memory:
                              // the pusher is on that device, in the shard's process
  uint64_t membership = 0; // the run's membership epoch its actor was spawned in (fencing)
  // Under a policy without rounds (async, ssp) with --global-clipnorm: the
  // L2 norm of the pusher's whole gradient, every shard's slice (see
  // model/optim/global_norm.hpp); -1 when not computed.
  double gradient_norm = -1;
  // --wire=int8 under sync, in the push after an answer that cut
  // (params_msg::cut): the replica's error-feedback residual from before
  // this push, the receiving shard's slice of it, for the store's snapshot
  // or checkpoint of this round. Empty otherwise.
  shared_floats residual;
  // The pusher proved every float of the gradient finite (device_capability::
  // last_gradient_proven_finite), so the shard skips its own check. Never
  // serialized: a push from another process always arrives unproven.
  bool proven_finite = false;
  // The replica holds version `delta_base` of the receiving shard's slice
  // and takes the answer coded against it (params_msg::delta): set for a
  // shard it reaches through the network, not in its process or a lane.
  bool wants_delta = false;
  uint64_t delta_base = 0;
  uint64_t delta_membership = 0; // the membership epoch of the shard that answered with it
};

/// Says what a run does when it loses a replica (--on-replica-loss).
enum class replica_loss_action : uint8_t {
  abort,        // end the run with the error
  continue_run, // the survivors finish the epoch (sync: they re-plan it)
  respawn,      // a new replica takes the lost one's place and share
};

/// Records one replica a sync run lost: survivors re-plan the epoch by it, all
/// alike (model/data/epoch_schedule.hpp). The sync policy keeps the list.
struct replica_loss {
  uint64_t round = 0;      // the store's open round when the replica was lost
  uint32_t replica = 0;    // its index
  bool share_used = false; // it had pushed that round: its share counts
};

inline bool operator==(const replica_loss& a, const replica_loss& b) {
  return a.round == b.round && a.replica == b.replica && a.share_used == b.share_used;
}

/// Carries the parameters at one version (the store's answer to a push): one
/// shard's slice of them, or all of them once a replica has every slice.
struct params_msg {
  uint64_t version = 0;   // optimizer steps applied so far
  uint64_t round = 0;     // the next sync round the store expects
  uint64_t staleness = 0; // for a push answer: version - base_version at apply
  uint64_t offset = 0;    // where `values` starts in the flat buffer
  shared_floats values;
  device_floats device_values; // instead, in device memory (push_msg::device_answer)
  std::vector<replica_loss> losses; // every replica lost so far, in order (sync)
  uint64_t membership = 0; // the membership epoch the answering shard was spawned in
  // The shards keep a snapshot or checkpoint of `round` (--wire=int8 under
  // sync): the replica's next push carries its residual (push_msg::residual).
  bool cut = false;
  // Instead of `values`: the parameters coded against the version the
  // pusher holds (push_msg::wants_delta), when that is smaller.
  answer_delta delta;
};

/// Tells a replica to train one epoch, starting from `params`.
struct epoch_order {
  uint64_t epoch = 0;
  params_msg params;
  uint64_t start_round = 0; // rounds of the epoch already done (a resumed run)
  uint64_t membership = 0;  // the membership epoch of the actor it is for (fencing)
  // --wire=int8: the error-feedback residual to go on from (a run resumed
  // from an epoch's end); empty: the replica keeps its own.
  shared_floats residual{};
};

/// Sums what one replica did in one epoch.
struct replica_report {
  uint32_t replica = 0;
  uint64_t samples = 0;
  double loss_sum = 0;
  uint64_t correct = 0;
  uint64_t pushes = 0;
  double compute_seconds = 0; // gradient computation
  double wait_seconds = 0;    // from push until the answer arrived
  std::vector<trace_span> trace; // with --trace: this epoch's spans
  uint64_t membership = 0;       // the membership epoch of the reporting actor
  shared_floats residual{};      // --wire=int8: its error-feedback residual at the epoch's end
  coded_traffic coded{};         // what the wire's lossless codings did (coded_traffic.hpp)
};

/// Sums what the store did so far.
struct store_stats {
  uint64_t version = 0;
  uint64_t pushes = 0;         // accepted gradients
  uint64_t samples = 0;        // samples behind the accepted gradients
  uint64_t rejected = 0;       // gradients answered with an error
  uint64_t dropped = 0;        // late gradients answered and dropped (backup replicas)
  uint64_t fenced = 0;         // refused: from an actor replaced by a respawn
  double apply_seconds = 0;    // reducing + optimizer + publishing
  uint64_t staleness_sum = 0;
  uint64_t staleness_count = 0; // gradient slices whose staleness staleness_sum adds up
  uint64_t staleness_max = 0;
  uint32_t live_replicas = 0;
  bool staleness_reported = false; // the policy lets gradients go stale (async)
  double loss_sum = 0;             // training loss summed over the accepted pushes' samples
  std::vector<uint64_t> waited_on; // by replica: rounds that closed on its push (it came last)
  std::vector<trace_span> trace;   // with --trace: spans since the last stats
  // Gradients by staleness: [t] counts those t versions stale, the last
  // bucket those at least staleness_buckets - 1.
  std::vector<uint64_t> staleness_histogram;
  uint64_t membership = 0; // the membership epoch the answering shard was spawned in
  uint64_t next_round = 0; // a halted shard's: the round its pushes wait from
};

/// Buckets of store_stats::staleness_histogram.
constexpr size_t staleness_buckets = 65;

/// Describes one replica's job: which model, where its data lives, its place
/// among the replicas. Small, so a remote node can be sent it.
struct replica_config {
  uint32_t index = 0;
  uint32_t replicas = 1;
  std::string model = "784-128relu-10";
  std::string device = "cpu";
  std::string store_device = "cpu"; // where the store's shards step (--store-device)
  std::string data_dir;
  uint64_t seed = 0;
  uint32_t global_batch = 32;
  uint32_t step_timeout_ms = 60000;
  bool pin_core = false; // run on core index % cores (--pin-cores)
  float slowdown = 1;    // take this many times its compute per step (--slow-replica)
  bool trace = false;    // record trace spans (--trace)
  int32_t fault_signal = 0; // a node's --fault: this signal to the process (0: none)
  uint64_t fault_round = 0; //   before the push of this round
  uint64_t membership = 0;  // the run's membership epoch this actor is spawned in
  uint64_t train_rows = 0;  // trains on the data's first rows only (a validation split); 0: all
  std::vector<float> class_weights; // per class (--class-weights); empty: every sample weighs 1
  bool gradient_norm = false; // push the whole gradient's norm (push_msg::gradient_norm)
  // What its gradients are rounded to before they are pushed, and the
  // parameters of an epoch order on arrival (--wire, messages/float_codec.hpp).
  float_codec wire = float_codec::fp32;
  wire_coding coding{}; // with shards it reaches through the network (coded_traffic.hpp)
};

/// Carries one store shard's sum of squares of its slice of a round's
/// gradient (--global-clipnorm under a policy with rounds) to each of its
/// sibling shards: each adds every shard's sum, exactly, before it steps.
struct norm_msg {
  uint64_t round = 0;      // the store round whose step it is for
  uint32_t shard = 0;      // the sender
  uint64_t membership = 0; // the membership epoch the sender was spawned in
  std::vector<uint64_t> limbs; // square_sum::limbs
  bool non_finite = false;     // square_sum::non_finite
};

/// Describes one shard of a variable store: its part of the flat buffer, its
/// policy, its optimizer and where training starts. The one type both for a
/// shard spawned here and for a node that builds it (--store-nodes).
struct store_config {
  policy_spec policy;
  // What the shard does when a replica dies (--on-replica-loss): abort
  // stops it (actors/policy/stop_on_loss.hpp), continue closes rounds over
  // the survivors.
  replica_loss_action on_replica_loss = replica_loss_action::continue_run;
  optimizer_config optimizer;
  // Where the shard keeps its parameters and optimizer state and steps them:
  // "cpu" (host memory) or a GPU, "cuda:N" (--store-device).
  std::string device = "cpu";
  // Shard `shard` of `shards` owns split_into_shards(parameter_count,
  // shards)[shard] (model/shard_layout.hpp); 0 of 1 owns everything.
  uint32_t shard = 0;
  uint32_t shards = 1;
  uint64_t parameter_count = 0; // of the whole flat buffer; 0: the initial parameters'
  shared_floats initial_parameters; // the shard's slice
  uint64_t initial_version = 0;
  // A resumed run starts from a checkpoint's optimizer state (the shard's
  // slice of each plane) and round.
  shared_floats initial_optimizer_state;
  uint64_t initial_optimizer_steps = 0;
  uint64_t initial_round = 0;
  // The schedule's learning rate is times this (a callback's reductions so far).
  float learning_rate_factor = 1.0f;
  // The model's state in the shard's slice, as offsets from its start: the
  // shard moves it by the round's mean change rather than optimizing it
  // (model::state_spans, model/optim/averaged_state.hpp).
  std::vector<parameter_span> state_spans;
  // Every `checkpoint_every` rounds the policy closes (sync; async has no
  // rounds; 0: never) the shard sends its part to the run's checkpoint writer.
  uint32_t checkpoint_every = 0;
  // Every `snapshot_every` rounds (0: never) the shard sends its part to the
  // writer to be kept in memory, not written: the healing store's snapshots.
  uint32_t snapshot_every = 0;
  bool pin_core = false; // run on core shard % cores (--pin-cores)
  bool trace = false;    // record trace spans (--trace)
  uint64_t membership = 0; // the run's membership epoch this shard is spawned in
  int32_t fault_signal = 0; // a node's --fault: this signal to the process (0: none)
  uint64_t fault_round = 0; //   as the shard closes this round
  // What the parameters it answers pushes with are rounded to, and the
  // codec every pushed gradient must come in (--wire); it keeps and steps
  // fp32 masters.
  float_codec wire = float_codec::fp32;
};

/// Opens every coordinator-node connection: both sides send one and refuse
/// the other's on any mismatch, before any training.
struct handshake {
  uint32_t protocol_version = 0;
  std::string model;              // the model description the run trains
  uint64_t model_fingerprint = 0; // fingerprint(model) as the sender computes it
  shared_floats float_probe;      // known floats as raw bytes: byte order + IEEE format
  uint64_t heartbeat_interval_ms = 0;
  uint64_t connection_timeout_ms = 0;
  std::string data_dir;           // where the node reads the data (coordinator's hello)
  std::string peer;               // who speaks, for messages: "coordinator", "node HOST:PORT"
  // What decides the bits of a CPU step there (model/numerics_identity.hpp).
  std::string numerics_build;
  std::string numerics_libm;
  std::string gemm_kernel;
  std::string gemm_family;
  bool same_bits_required = false; // the coordinator's run promises the same bits (sync)
  int64_t clock_ns = 0; // the sender's steady clock when it made this (trace clock offsets)
  // A node's answer: its steady clock as it sent it, after its checks (which
  // may read the data); 0: as clock_ns.
  int64_t answered_ns = 0;
  uint64_t max_frame_size = 0; // a node's bound on a plaintext peer's frames (0: none)
};

/// Sums a finished fit for whoever started it.
struct fit_summary {
  std::string mode;
  uint32_t replicas = 0;      // at the start
  uint32_t live_replicas = 0; // at the end
  uint32_t epochs = 0;
  double test_loss = 0;
  double test_accuracy = 0;
  double samples_per_second = 0; // training loop only
  uint64_t version = 0;
  uint64_t params_fnv1a64 = 0;
  shared_floats params;
  std::vector<replica_report> replica_totals; // each replica's reports summed over the run
  std::vector<uint64_t> waited_on;            // by replica: rounds that closed on its push
  std::vector<uint32_t> lost_replicas;        // replicas that died during the run, in order
  uint32_t respawns = 0;                      // replicas respawned in a lost one's place
  uint32_t store_heals = 0;                   // store shards lost and healed from a snapshot
  uint64_t membership = 1;                    // the membership epoch at the end (1: unchanged)
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, trace_span& x) {
  return f(caf::meta::type_name("trace_span"), x.kind, x.round, x.start_ns, x.duration_ns);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, push_msg& x) {
  return f(caf::meta::type_name("push_msg"), x.replica, x.round, x.base_version,
           x.batch_size, x.loss_sum, x.device_answer, x.membership, x.gradient_norm,
           x.residual, x.wants_delta, x.delta_base, x.delta_membership, x.gradient,
           x.device_gradient);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, norm_msg& x) {
  return f(caf::meta::type_name("norm_msg"), x.round, x.shard, x.membership, x.limbs,
           x.non_finite);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, replica_loss& x) {
  return f(caf::meta::type_name("replica_loss"), x.round, x.replica, x.share_used);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, params_msg& x) {
  return f(caf::meta::type_name("params_msg"), x.version, x.round, x.staleness, x.offset,
           x.values, x.device_values, x.losses, x.membership, x.cut, x.delta);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, epoch_order& x) {
  return f(caf::meta::type_name("epoch_order"), x.epoch, x.params, x.start_round,
           x.membership, x.residual);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, replica_report& x) {
  return f(caf::meta::type_name("replica_report"), x.replica, x.samples, x.loss_sum,
           x.correct, x.pushes, x.compute_seconds, x.wait_seconds, x.trace, x.membership,
           x.residual, x.coded);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, store_stats& x) {
  return f(caf::meta::type_name("store_stats"), x.version, x.pushes, x.samples, x.rejected,
           x.dropped, x.fenced,
           x.apply_seconds, x.staleness_sum, x.staleness_count, x.staleness_max,
           x.live_replicas,
           x.staleness_reported, x.loss_sum, x.waited_on, x.trace, x.staleness_histogram,
           x.membership, x.next_round);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, replica_config& x) {
  return f(caf::meta::type_name("replica_config"), x.index, x.replicas, x.model,
           x.device, x.store_device, x.data_dir, x.seed, x.global_batch, x.step_timeout_ms, x.pin_core,
           x.slowdown, x.trace, x.fault_signal, x.fault_round, x.membership, x.train_rows,
           x.class_weights, x.gradient_norm, x.wire, x.coding);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, store_config& x) {
  return f(caf::meta::type_name("store_config"), x.policy, x.on_replica_loss, x.optimizer,
           x.device, x.shard, x.shards, x.parameter_count, x.initial_parameters,
           x.initial_version, x.initial_optimizer_state, x.initial_optimizer_steps,
           x.initial_round, x.learning_rate_factor, x.state_spans, x.checkpoint_every,
           x.snapshot_every, x.pin_core, x.trace,
           x.membership, x.fault_signal, x.fault_round, x.wire);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, handshake& x) {
  return f(caf::meta::type_name("handshake"), x.protocol_version, x.model,
           x.model_fingerprint, x.float_probe, x.heartbeat_interval_ms,
           x.connection_timeout_ms, x.data_dir, x.peer, x.numerics_build, x.numerics_libm,
           x.gemm_kernel, x.gemm_family, x.same_bits_required, x.clock_ns, x.answered_ns,
           x.max_frame_size);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, fit_summary& x) {
  return f(caf::meta::type_name("fit_summary"), x.mode, x.replicas, x.live_replicas,
           x.epochs, x.test_loss, x.test_accuracy, x.samples_per_second, x.version,
           x.params_fnv1a64, x.params, x.replica_totals, x.waited_on, x.lost_replicas,
           x.respawns, x.store_heals, x.membership);
}

} // namespace troupe::detail

// Beside the public type, where CAF's argument-dependent lookup finds it.
namespace troupe {

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, parameter_span& x) {
  return f(caf::meta::type_name("parameter_span"), x.offset, x.count);
}

} // namespace troupe
