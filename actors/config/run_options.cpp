// Binding a run's options, and parsing the typed ones.
#include "actors/config/run_options.hpp"

#include <cstdlib>
#include <sstream>

#include "actors/policy/policy_registry.hpp"
#include "messages/errors.hpp"
#include "model/class_weights.hpp"
#include "model/data/dataset.hpp"
#include "model/optim/lr_schedule_text.hpp"
#include "model/optim/optimizer.hpp"

namespace troupe::detail {

namespace {

// "sync (one step per round ...), async (...)": the registered policies.
std::string mode_help() {
  std::string text = "the store's update policy, one of";
  const auto names = policy_names();
  for (size_t i = 0; i < names.size(); ++i)
    text += std::string(i == 0 ? " " : "; ") + names[i] + ": " + find_policy(names[i])->summary;
  return text;
}

// The optimizer's options; --weight-decay and --lr-schedule bind as text
// (parse_optimizer_texts reads them).
void bind_optimizer(cluster_config& cli, optimizer_config& o, std::string& weight_decay,
                    std::string& schedule) {
  const auto g = option_group::training;
  cli.bind(g, o.name, "optimizer", optimizer_names() + " (Keras-exact)");
  cli.bind(g, o.learning_rate, "lr", "learning rate (where a --lr-schedule starts)");
  cli.bind(g, schedule, "lr-schedule",
           "the learning rate by optimizer step, Keras's schedules: constant, "
           "step:every=N,factor=X, exponential:decay_steps=N,decay_rate=X[,staircase] or "
           "cosine:decay_steps=N[,alpha=X][,warmup_steps=N,warmup_target=X] (docs/api.md)",
           {"KIND[:NAME=VALUE,...]"});
  cli.bind(g, weight_decay, "weight-decay",
           "decoupled weight decay, any optimizer (Keras 3): w -= lr x X x w before each step",
           option_hint{"X"}.otherwise("0.004 for adamw, else 0"));
  cli.bind(g, o.global_clipnorm, "global-clipnorm",
           "clip the gradient by global norm, any optimizer (Keras 3's global_clipnorm): each "
           "step's whole gradient g, every store shard's slice, times X / max(||g||, X); 0: off",
           option_hint{"X"});
  cli.bind(g, o.beta1, "beta1", "adam, adamw: decay of the first moment");
  cli.bind(g, o.beta2, "beta2", "adam, adamw: decay of the second moment");
  cli.bind(g, o.epsilon, "epsilon",
           "adam, adamw: added to the root of the second moment; rmsprop: added under it");
  cli.bind(g, o.momentum, "momentum", "sgd, rmsprop: momentum");
  cli.bind(g, o.nesterov, "nesterov", "sgd: Nesterov momentum");
  cli.bind(g, o.rho, "rho", "rmsprop: decay of the mean square of the gradient");
  cli.bind(g, o.centered, "centered",
           "rmsprop: divide by the root of the gradient's variance, not of its mean square");
}

void bind_training(cluster_config& cli, run_config& c, std::string& weight_decay,
                   std::string& schedule, std::string& class_weights) {
  const auto g = option_group::training;
  cli.bind(g, c.model, "model", "layer list: inputs, then hidden layers with activations, then "
                                "classes (784-128relu-10); or a registered model: NAME[:SETTINGS]");
  cli.bind(g, c.data_dir, "data-dir",
           "directory with the four (Fashion-)MNIST IDX files, gzipped or not; nodes read it "
           "from their own disk", {"DIR"});
  cli.bind(g, c.epochs, "epochs", "passes over the training set", option_hint{}.at_least(1));
  cli.bind(g, c.batch_size, "batch-size", "samples per round across all replicas (global)",
           option_hint{}.in("samples").at_least(1));
  bind_optimizer(cli, c.optimizer, weight_decay, schedule);
  cli.bind(g, c.seed, "seed", "seed of the initial weights and of every epoch's shuffle");
  cli.bind(g, c.validation_split, "validation-split",
           "the last fraction of the training data validates after each epoch instead of the "
           "test set, as Keras's validation_split (0: none)", {"FRACTION"});
  cli.bind(g, c.extra_metrics, "extra-metrics",
           "metrics scored on the validation data after each epoch besides loss and accuracy: "
           "top_K_accuracy (K a number), mae, mse; comma-separated", {"LIST"});
  cli.bind(g, class_weights, "class-weights",
           "Keras's class_weight: each training sample's loss times its class's weight, "
           "summed and divided by the batch's samples (validation is not weighted); classes "
           "not named weigh 1; cpu replicas",
           option_hint{"C:W,C:W"}.otherwise("every class weighs 1"));
}

// --weight-decay (empty: the optimizer's Keras default) and --lr-schedule.
caf::error parse_optimizer_texts(const std::string& weight_decay, const std::string& schedule,
                                 optimizer_config& o) {
  if (weight_decay.empty()) {
    const auto* kind = find_optimizer_kind(o.name);
    o.weight_decay = kind != nullptr ? kind->weight_decay : 0.0f;
  } else {
    char* end = nullptr;
    o.weight_decay = std::strtof(weight_decay.c_str(), &end);
    if (end != weight_decay.c_str() + weight_decay.size())
      return make_troupe_error(troupe_errc::bad_config, "--weight-decay=" + weight_decay
                                                          + ": --weight-decay takes a number");
  }
  auto parsed = parse_lr_schedule(schedule);
  if (!parsed)
    return make_troupe_error(troupe_errc::bad_config, "--lr-schedule: " + parsed.error().message);
  o.schedule = std::move(*parsed);
  return caf::none;
}

void bind_consistency(cluster_config& cli, run_config& c, std::string& staleness_lr) {
  const auto g = option_group::consistency;
  cli.bind(g, c.policy.name, "mode", mode_help());
  cli.bind(g, c.policy.settings.staleness, "staleness",
           "ssp: pushes a replica may run ahead of the slowest live one (0: as sync); delayed: "
           "K >= 1 versions every gradient is stale", option_hint{"K"});
  cli.bind(g, c.policy.settings.backup_replicas, "backup-replicas",
           "sync: close each round on the first replicas - N gradients and drop the late ones "
           "(gives up bitwise reproducibility)");
  cli.bind(g, staleness_lr, "staleness-lr",
           "async, ssp: none, or inverse (a gradient of staleness t steps at lr / max(1, t))");
}

// --on-replica-loss; empty: respawn where the mode's policy can, else abort.
caf::expected<replica_loss_action> parse_loss_action(const std::string& text,
                                                     const policy_spec& policy) {
  if (text.empty()) {
    const auto* mode = find_policy(policy.name);
    return mode && mode->traits(policy.settings).respawns ? replica_loss_action::respawn
                                                          : replica_loss_action::abort;
  }
  if (text == "respawn")
    return replica_loss_action::respawn;
  if (text == "abort")
    return replica_loss_action::abort;
  if (text == "continue")
    return replica_loss_action::continue_run;
  return make_troupe_error(troupe_errc::bad_config, "--on-replica-loss: '" + text
                                                      + "' (expected respawn, abort or continue)");
}

// --staleness-lr and --wire.
caf::error parse_named_choices(const std::string& staleness_lr, const std::string& wire,
                               run_config& c) {
  if (staleness_lr != "none" && staleness_lr != "inverse")
    return make_troupe_error(troupe_errc::bad_config,
                             "--staleness-lr: '" + staleness_lr + "' (expected none or inverse)");
  c.policy.settings.staleness_lr = staleness_lr == "inverse" ? staleness_lr_rule::inverse
                                                             : staleness_lr_rule::none;
  auto codec = parse_float_codec(wire);
  if (!codec)
    return make_troupe_error(troupe_errc::bad_config,
                             "--wire: '" + wire + "' (expected fp32, bf16, fp16 or int8)");
  c.wire = *codec;
  return caf::none;
}

} // namespace

run_options::run_options(cluster_config& cli) : cli_(cli) {
  config_.data_dir = default_data_dir();
  auto& c = config_;
  bind_training(cli, c, weight_decay_, lr_schedule_, class_weights_);
  bind_consistency(cli, c, staleness_lr_);
  bind_distribution();
  bind_store();
  bind_failures();
  const auto k = option_group::checkpoints;
  cli.bind(k, c.checkpoint_path, "checkpoint",
           "write a checkpoint to this file (atomically) after each epoch", {"FILE"});
  cli.bind(k, c.checkpoint_every, "checkpoint-every",
           "also every N sync rounds (0: after each epoch only)", option_hint{}.in("sync rounds"));
  cli.bind(k, c.resume_path, "resume", "continue the run saved in this checkpoint", {"FILE"});
  cli.bind(option_group::output, c.trace_path, "trace",
           "write a Chrome trace of every round (Perfetto, chrome://tracing) to this file",
           {"FILE"});
}

void run_options::bind_distribution() {
  auto& cli = cli_;
  auto& c = config_;
  const auto d = option_group::distribution;
  cli.bind(d, c.replicas, "replicas", "replicas, each computing its share of every round",
           option_hint{}.otherwise("one per core here, or nodes x --replicas-per-node"));
  cli.bind(d, devices_, "devices", "cpu, cuda:0,cuda:1,... (round-robin over the replicas) or "
                                   "auto (every GPU that opens, else cpu)");
  cli.bind(d, nodes_, "nodes", "node programs to run the replicas on (default: all here)",
           {"H:P,H:P"});
  cli.bind(d, c.replicas_per_node, "replicas-per-node", "replicas on each node (with --nodes)",
           option_hint{}.at_least(1));
  cli.bind(d, accept_joins_, "accept-joins",
           "listen here for nodes that join the run (node --join=H:P): each gets replicas "
           "moved from the busiest places; ADDRESS defaults to 127.0.0.1",
           {"[ADDRESS:]PORT"});
  cli.bind(d, c.max_replicas_per_node, "max-replicas-per-node",
           "the most replicas a node hosts after respawns and joins (0: no bound)");
  cli.bind(d, slow_replica_, "slow-replica",
           "I:F makes replica I take F times its compute per step (a reproducible straggler)",
           {"I:F"});
}

void run_options::bind_store() {
  auto& cli = cli_;
  auto& c = config_;
  const auto s = option_group::store;
  cli.bind(s, c.store_shards, "store-shards",
           "shard actors, each owning a range of the parameters and its optimizer state",
           option_hint{}.otherwise("one per replica, at most one per core; with "
                                   "--store-nodes one per node; with --store-device=cuda:N one"));
  cli.bind(s, store_nodes_, "store-nodes",
           "nodes to run the store's shards on, round-robin, or here (this process)",
           option_hint{"H:P,H:P|here"}.otherwise(
             "with --nodes and a cpu store, the replica nodes; else this process"));
  cli.bind(s, store_node_, "store-node", "one node to run the whole store on", {"H:P"});
  cli.bind(s, wire_, "wire",
           "fp32, bf16 or fp16: gradients are rounded to it before they are pushed and the "
           "parameters the shards answer with (they keep and step fp32), in one process too; "
           "between processes they travel in its width. int8: gradients as int8 with one fp32 "
           "scale per block of 256 values and error feedback on each replica, parameters as "
           "bf16", {"CODEC"});
  cli.bind(s, c.whole_answers, "whole-answers",
           "shards answer replicas they reach through the network with the parameters whole, "
           "not coded against the version the replica holds (the codes are lossless and "
           "smaller, but take CPU: whole answers suit links faster than the coding)");
  cli.bind(s, c.whole_pushes, "whole-pushes",
           "replicas push shards they reach through the network every value of their "
           "gradient, not a mask of its zeros and the values it selects (lossless and smaller "
           "where a gradient holds zeros, but takes CPU)");
  cli.bind(s, c.pushes_ahead, "pushes-ahead",
           "replicas send a shard they reach through the network its slice as soon as the "
           "model has written it, so the wire carries it while the model computes the rest, "
           "not once the backward pass is done (it pays where each process has a core to "
           "spare for sending)");
  cli.bind(s, c.store_device, "store-device",
           "cpu or cuda:N: where the shards keep and step the parameters (replicas on the same "
           "device hand gradients over in device memory)");
}

void run_options::bind_failures() {
  auto& cli = cli_;
  auto& c = config_;
  const auto f = option_group::failures;
  cli.bind(f, on_replica_loss_, "on-replica-loss",
           "respawn (a new replica takes the lost one's place and goes on with its samples: "
           "sync's bits do not change, and no sample is trained twice), abort (end the run) "
           "or continue (the survivors finish the epoch)",
           option_hint{}.otherwise("respawn, or abort for sync with --backup-replicas"));
  cli.bind(f, c.respawn_timeout_ms, "respawn-timeout",
           "with no live node to host a respawn, wait this long for a node to join "
           "(--accept-joins) before the run ends (0: end it at once)",
           option_hint{"MS"}.in("ms"));
  cli.bind(f, respawn_, "respawn",
           "where a lost replica or store shard of a run on nodes respawns: nodes (a live "
           "node) or anywhere (this process too, once no node is left)");
  cli.bind(f, c.snapshot_every, "snapshot-every",
           "with the store on nodes or --wire=int8 on nodes (under respawn): keep the shards' "
           "state in this process every N closed rounds (sync, delayed; the others at each "
           "epoch's end only); a shard's death (or an int8 sync replica's) rolls back there",
           option_hint{}.in("rounds").otherwise("100 where the store heals, else 0: none"));
  cli.bind(f, c.step_timeout_ms, "step-timeout", "longest wait for one push's answer",
           option_hint{"MS"}.in("ms").at_least(1));
}

caf::expected<run_config> run_options::to_run_config() const {
  run_config c = config_;
  c.tls = cli_.tls();
  c.pin_cores = cli_.pin_cores;
  c.protocol_version = static_cast<uint32_t>(cli_.protocol_version);
  if (auto err = parse_optimizer_texts(weight_decay_, lr_schedule_, c.optimizer))
    return err;
  auto weights = parse_class_weights(class_weights_);
  if (!weights)
    return make_troupe_error(troupe_errc::bad_config, weights.error().message);
  c.class_weights = std::move(*weights);
  auto devices = parse_devices(devices_);
  if (!devices)
    return devices.error();
  c.devices = std::move(*devices);
  auto nodes = parse_host_port_list("nodes", nodes_);
  if (!nodes)
    return nodes.error();
  c.nodes = std::move(*nodes);
  c.store_here = store_nodes_ == "here";
  auto store_nodes = parse_host_port_list(store_node_.empty() ? "store-nodes" : "store-node",
                                          store_node_.empty() && !c.store_here ? store_nodes_
                                                                               : store_node_);
  if (!store_nodes)
    return store_nodes.error();
  if (!store_node_.empty() && !store_nodes_.empty())
    return make_troupe_error(troupe_errc::bad_config,
                             "--store-node and --store-nodes both name store nodes: use "
                             "--store-nodes alone");
  c.store_nodes = std::move(*store_nodes);
  auto loss = parse_loss_action(on_replica_loss_, c.policy);
  if (!loss)
    return loss.error();
  c.on_replica_loss = *loss;
  if (respawn_ != "nodes" && respawn_ != "anywhere")
    return make_troupe_error(troupe_errc::bad_config,
                             "--respawn: '" + respawn_ + "' (expected nodes or anywhere)");
  c.respawn_anywhere = respawn_ == "anywhere";
  if (!accept_joins_.empty()) {
    const bool port_only = accept_joins_.find(':') == std::string::npos;
    auto joins = parse_host_port(port_only ? "127.0.0.1:" + accept_joins_ : accept_joins_);
    if (!joins)
      return make_troupe_error(troupe_errc::bad_config,
                               "--accept-joins: " + describe(joins.error()));
    c.accept_joins = *joins;
  }
  if (auto err = parse_named_choices(staleness_lr_, wire_, c))
    return err;
  auto slow = parse_slow_replica(slow_replica_);
  if (!slow)
    return slow.error();
  c.slow = *slow;
  return c;
}

caf::expected<device_plan> parse_devices(const std::string& text) {
  device_plan plan;
  if (text == "auto") {
    plan.automatic = true;
    plan.pool.clear();
    return plan;
  }
  plan.pool.clear();
  std::stringstream list(text);
  for (std::string device; std::getline(list, device, ',');)
    plan.pool.push_back(device); // check_run_config says which name no device
  if (plan.pool.empty())
    return make_troupe_error(troupe_errc::bad_config, "--devices names no device");
  return plan;
}

} // namespace troupe::detail
