// Checks of fit_options and what is derived from them.
#include "actors/config/fit_options.hpp"

#include <algorithm>
#include <sstream>

#include "actors/cluster/node_service.hpp"
#include "actors/threads/core_pinning.hpp"
#include "actors/replica/store_group.hpp"
#include "actors/policy/update_policy.hpp"
#include "messages/errors.hpp"
#include "model/backend/backend.hpp"
#include "model/model_spec.hpp"
#include "model/parameter_layout.hpp"
#include "model/shard_layout.hpp"

namespace troupe {

namespace {

// --store-device: a device make_backend knows, Adam (the one optimizer with
// a device step), and a device that opens here when the shards run here.
caf::expected<void> check_store_device(const fit_options& opts) {
  const std::string& device = opts.store_device;
  if (!names_a_device(device))
    return make_troupe_error(troupe_errc::bad_config,
                             "--store-device: '" + device
                               + "' is not a device (expected cpu or cuda:N)");
  if (device == "cpu")
    return {};
  if (opts.optimizer.name != "adam")
    return make_troupe_error(troupe_errc::bad_config,
                             "--store-device=" + device + " steps Adam only: use "
                               "--optimizer=adam, or --store-device=cpu for "
                               + opts.optimizer.name);
  if (opts.store_nodes.empty())
    if (auto opened = make_backend(device); !opened)
      return make_troupe_error(troupe_errc::bad_config,
                               "--store-device=" + device + ": " + opened.error().message);
  return {};
}

// --nodes and --store-node(s): every entry HOST:PORT, before anything connects.
caf::expected<void> check_addresses(const char* option, const std::vector<std::string>& list) {
  for (const auto& address : list)
    if (auto parsed = parse_host_port(address); !parsed)
      return make_troupe_error(troupe_errc::bad_config,
                               std::string(option) + ": " + describe(parsed.error()));
  return {};
}

} // namespace

caf::expected<fit_options> check_fit_options(fit_options options, const dataset_pair* data) {
  // The modes are the policy factory's: a new policy needs no change here.
  const auto& modes = update_policy_modes();
  if (std::find(modes.begin(), modes.end(), options.mode) == modes.end()) {
    std::string known; // "sync or async"
    for (size_t i = 0; i < modes.size(); ++i)
      known += (i == 0 ? "" : i + 1 == modes.size() ? " or " : ", ") + modes[i];
    return make_troupe_error(troupe_errc::bad_config,
                             "--mode: '" + options.mode + "' (expected " + known + ")");
  }
  auto loss_action = parse_replica_loss(options.on_replica_loss);
  if (!loss_action)
    return loss_action.error();
  options.loss_action = *loss_action;
  auto& opts = options;
  if (auto nodes = check_addresses("--nodes", opts.nodes); !nodes)
    return nodes.error();
  if (auto store_nodes = check_addresses("--store-nodes", opts.store_nodes); !store_nodes)
    return store_nodes.error();
  if (!opts.store_node.empty())
    if (auto store_node = check_addresses("--store-node", {opts.store_node}); !store_node)
      return store_node.error();
  if (!opts.nodes.empty()) {
    if (opts.replicas_per_node == 0)
      return make_troupe_error(troupe_errc::bad_config,
                               "--replicas-per-node must be at least 1");
    opts.replicas = static_cast<uint32_t>(opts.nodes.size()) * opts.replicas_per_node;
  }
  if (opts.replicas == 0)
    return make_troupe_error(troupe_errc::bad_config, "--replicas must be at least 1");
  if (opts.backup_replicas > 0 && opts.mode != "sync")
    return make_troupe_error(troupe_errc::bad_config,
                             "--backup-replicas works with --mode=sync, not " + opts.mode);
  if (opts.backup_replicas >= opts.replicas)
    return make_troupe_error(troupe_errc::bad_config,
                             "--backup-replicas=" + std::to_string(opts.backup_replicas)
                               + " leaves no replica to close a round (--replicas="
                               + std::to_string(opts.replicas) + ")");
  if (opts.staleness_lr != "none" && opts.staleness_lr != "inverse")
    return make_troupe_error(troupe_errc::bad_config,
                             "--staleness-lr: '" + opts.staleness_lr
                               + "' (expected none or inverse)");
  if (opts.staleness_lr == "inverse" && opts.mode != "async" && opts.mode != "ssp")
    return make_troupe_error(troupe_errc::bad_config,
                             "--staleness-lr=inverse works with --mode=async or ssp, not "
                               + opts.mode + " (its gradients are never stale)");
  if (opts.staleness > 0 && opts.mode != "ssp" && opts.mode != "delayed")
    return make_troupe_error(troupe_errc::bad_config,
                             "--staleness works with --mode=ssp or delayed, not " + opts.mode);
  if (opts.mode == "delayed" && opts.staleness == 0)
    return make_troupe_error(troupe_errc::bad_config,
                             "--mode=delayed needs --staleness=K with K >= 1 (K = 0 is sync)");
  if (!opts.slow_replica.empty()) {
    auto slow = parse_slow_replica(opts.slow_replica);
    if (!slow)
      return slow.error();
    if (slow->first >= opts.replicas)
      return make_troupe_error(troupe_errc::bad_config,
                               "--slow-replica: replica " + std::to_string(slow->first)
                                 + " does not exist (--replicas="
                                 + std::to_string(opts.replicas) + ")");
    opts.slow_index = slow->first;
    opts.slow_factor = slow->second;
  }
  if (opts.checkpoint_every > 0 && opts.checkpoint_path.empty())
    return make_troupe_error(troupe_errc::bad_config,
                             "--checkpoint-every needs --checkpoint=PATH");
  if (opts.epochs == 0)
    return make_troupe_error(troupe_errc::bad_config, "--epochs must be at least 1");
  if (opts.batch_size < opts.replicas)
    return make_troupe_error(troupe_errc::bad_config,
                             "--batch-size=" + std::to_string(opts.batch_size)
                               + " is smaller than --replicas="
                               + std::to_string(opts.replicas)
                               + " (the batch is global: each replica takes its share)");
  if (opts.step_timeout_ms == 0)
    return make_troupe_error(troupe_errc::bad_config, "--step-timeout must be positive");
  if (opts.optimizer.name != "adam" && opts.optimizer.name != "sgd")
    return make_troupe_error(troupe_errc::bad_config,
                             "--optimizer: '" + opts.optimizer.name
                               + "' (expected adam or sgd)");
  if (!(opts.optimizer.learning_rate > 0.0f))
    return make_troupe_error(troupe_errc::bad_config,
                             "--lr must be positive, got "
                               + std::to_string(opts.optimizer.learning_rate));
  auto device_plan = parse_devices(options.devices);
  if (!device_plan)
    return device_plan.error();
  options.device_plan = std::move(*device_plan);
  auto spec = parse_model_spec(opts.model);
  if (!spec)
    return to_caf_error(spec.error());
  if (!data || data->train.count == 0 || data->test.count == 0)
    return make_troupe_error(troupe_errc::bad_data, "no training or test data");
  if (auto fits = check_model_fits(*spec, data->train); !fits)
    return to_caf_error(fits.error());
  if (!opts.store_node.empty()) {
    if (!opts.store_nodes.empty())
      return make_troupe_error(troupe_errc::bad_config,
                               "--store-node and --store-nodes both name store nodes: "
                               "use --store-nodes alone");
    opts.store_nodes.push_back(opts.store_node);
    opts.store_node.clear();
  }
  if (auto store_device = check_store_device(opts); !store_device)
    return store_device.error();
  if (opts.store_shards == 0)
    opts.store_shards = default_store_shards(opts.replicas, usable_cores(),
                                             opts.store_nodes.size(),
                                             opts.store_device != "cpu");
  if (auto ranges = split_into_shards(parameter_layout(*spec).size(), opts.store_shards);
      !ranges)
    return make_troupe_error(troupe_errc::bad_config, "--store-shards: " + ranges.error().message);
  return options;
}

uint64_t run_fingerprint(const fit_options& o) {
  const std::string settings =
    o.mode + "|" + std::to_string(o.replicas) + "|" + std::to_string(o.batch_size) + "|"
    + std::to_string(o.seed) + "|" + o.model + "|" + o.optimizer.name + "|"
    + std::to_string(o.optimizer.learning_rate) + "|" + std::to_string(o.optimizer.beta1)
    + "|" + std::to_string(o.optimizer.beta2) + "|" + std::to_string(o.optimizer.epsilon)
    + "|" + std::to_string(o.optimizer.momentum) + "|" + (o.optimizer.nesterov ? "n" : "-");
  return fnv1a64(settings.data(), settings.size());
}

policy_settings policy_settings_for(const fit_options& options) {
  return policy_settings{options.staleness, options.backup_replicas,
                         options.staleness_lr == "inverse"};
}

caf::expected<std::pair<uint32_t, float>> parse_slow_replica(const std::string& text) {
  const auto colon = text.find(':');
  const auto bad = [&text](const std::string& why) {
    return make_troupe_error(troupe_errc::bad_config,
                             "--slow-replica: '" + text + "' " + why
                               + " (expected I:F, e.g. 3:2.5 for replica 3 at 2.5x its time)");
  };
  if (colon == std::string::npos)
    return bad("has no ':'");
  try {
    size_t used = 0;
    const auto index = std::stoul(text.substr(0, colon), &used);
    if (used != colon)
      return bad("does not start with a replica index");
    const auto rest = text.substr(colon + 1);
    const float factor = std::stof(rest, &used);
    if (used != rest.size() || !(factor >= 1.0f) || factor > 1000.0f)
      return bad("needs a factor from 1 to 1000");
    return std::make_pair(static_cast<uint32_t>(index), factor);
  } catch (const std::exception&) {
    return bad("is not a number pair");
  }
}

caf::expected<replica_loss_action> parse_replica_loss(const std::string& text) {
  if (text == "abort")
    return replica_loss_action::abort;
  if (text == "continue")
    return replica_loss_action::continue_run;
  return make_troupe_error(troupe_errc::bad_config,
                           "--on-replica-loss: '" + text + "' (expected abort or continue)");
}

caf::expected<device_choice> parse_devices(const std::string& text) {
  device_choice choice;
  if (text == "auto") {
    choice.automatic = true;
    return choice;
  }
  std::stringstream list(text);
  for (std::string device; std::getline(list, device, ',');) {
    if (!names_a_device(device))
      return make_troupe_error(troupe_errc::bad_config,
                               "--devices: '" + device
                                 + "' is not a device (expected cpu, cuda:N or auto)");
    choice.pool.push_back(device);
  }
  if (choice.pool.empty())
    return make_troupe_error(troupe_errc::bad_config, "--devices names no device");
  return choice;
}

std::vector<std::string> assign_devices(const device_choice& choice, uint32_t replicas) {
  std::vector<std::string> pool = choice.pool;
  if (choice.automatic) {
    for (int i = 0; i < 64; ++i) {
      auto probe = "cuda:" + std::to_string(i);
      if (!make_backend(probe))
        break;
      pool.push_back(probe);
    }
    if (pool.empty())
      pool.push_back("cpu");
  }
  std::vector<std::string> assigned;
  for (uint32_t i = 0; i < replicas; ++i)
    assigned.push_back(pool[i % pool.size()]);
  return assigned;
}

replica_config replica_config_for(const fit_options& options, uint32_t index,
                                  const std::string& device) {
  replica_config cfg;
  cfg.index = index;
  cfg.replicas = options.replicas;
  cfg.model = options.model;
  cfg.device = device;
  cfg.store_device = options.store_device;
  cfg.seed = options.seed;
  cfg.global_batch = options.batch_size;
  cfg.step_timeout_ms = options.step_timeout_ms;
  cfg.data_dir = options.data_dir;
  cfg.pin_core = options.pin_cores;
  cfg.slowdown = index == options.slow_index ? options.slow_factor : 1.0f;
  cfg.trace = !options.trace_path.empty();
  return cfg;
}

} // namespace troupe
