// Building a replica's setup from its configuration.
#include "actors/replica/replica_setup.hpp"

#include <algorithm>

#include <caf/all.hpp>

#include "actors/replica/data_cache.hpp"
#include "messages/errors.hpp"
#include "model/builtin_model.hpp"
#include "model/class_weights.hpp"
#include "model/data/row_range.hpp"
#include "model/model_description.hpp"
#include "model/shard_layout.hpp"

namespace troupe::detail {

namespace {

// Tells whether a replica hands gradients and parameters over in device
// memory: it computes on a device of the kind the store steps on
// (--store-device; the same device, or another GPU the shard copies from),
// and every shard lives in its process (`here`), where device pointers hold.
bool hands_over_on_device(const replica_config& config, const std::vector<store_actor>& shards,
                          const caf::node_id& here) {
  if (config.device == "cpu" || config.store_device == "cpu"
      || device_kind(config.device) != device_kind(config.store_device))
    return false;
  return std::all_of(shards.begin(), shards.end(),
                     [&here](const store_actor& shard) { return shard.node() == here; });
}

// Class weights need a model that honours them and a replica on the host
// (the device steps weigh every sample 1); they get an entry per output.
caf::error check_replica_weights(replica_config& config, const model_description& model) {
  if (config.class_weights.empty())
    return caf::none;
  const std::string replica = "replica " + std::to_string(config.index) + ": ";
  if (config.device != "cpu")
    return make_troupe_error(troupe_errc::bad_config,
                             replica + "--class-weights weighs samples on cpu replicas only, "
                                       "not on " + config.device + " (use --devices=cpu)");
  if (!model.honours_sample_weights())
    return make_troupe_error(troupe_errc::bad_config,
                             replica + "--class-weights: model " + model.text()
                               + " does not honour sample weights");
  if (auto why = refuse_class_weights(config.class_weights, model.classes()); !why.empty())
    return make_troupe_error(troupe_errc::bad_config, replica + why);
  config.class_weights = class_weights_for(std::move(config.class_weights), model.classes());
  return caf::none;
}

// The rows a replica trains on: `train`, or the set of config.data_dir when
// it is null (as on a remote node), cut to config.train_rows if set.
caf::expected<std::shared_ptr<const data_source>>
training_rows(const replica_config& config, std::shared_ptr<const data_source> train) {
  if (!train) {
    auto cached = cached_train_set(config.data_dir);
    if (!cached)
      return cached.error();
    train = *cached;
  }
  if (config.train_rows > train->size())
    return make_troupe_error(troupe_errc::bad_data,
                             "replica " + std::to_string(config.index) + " is to train on "
                               + std::to_string(config.train_rows) + " rows of "
                               + config.data_dir + ", which has "
                               + std::to_string(train->size()));
  if (config.train_rows > 0 && config.train_rows < train->size())
    train = row_range(std::move(train), 0, config.train_rows);
  return train;
}

// Builds the replica's own instance of its model: the built-in network on
// the replica's backend, any other model as its description makes it.
caf::error build_model(replica_setup& setup, const model_description& described) {
  if (const model_spec* spec = described.builtin()) {
    setup.model = std::make_unique<builtin_model>(*spec, setup.compute, setup.max_batch);
  } else {
    auto instance = described.instantiate_on(setup.config.device);
    if (!instance)
      return to_caf_error(instance.error());
    setup.model = std::move(*instance);
  }
  setup.device = device_capability_of(*setup.model);
  return caf::none;
}

} // namespace

caf::expected<std::shared_ptr<replica_setup>>
make_replica_setup(replica_config config, std::vector<store_actor> shards,
                   std::shared_ptr<const data_source> train, const backend_wrapper& wrap,
                   const caf::node_id& here) {
  if (config.replicas == 0 || config.index >= config.replicas)
    return make_troupe_error(troupe_errc::bad_config,
                "replica index " + std::to_string(config.index) + " is outside 0.."
                  + std::to_string(config.replicas));
  if (config.global_batch < config.replicas)
    return make_troupe_error(troupe_errc::bad_config,
                "batch size " + std::to_string(config.global_batch)
                  + " is smaller than the number of replicas ("
                  + std::to_string(config.replicas) + ")");
  auto described = model_description::resolve(config.model);
  if (!described)
    return to_caf_error(described.error());
  auto rows = training_rows(config, std::move(train));
  if (!rows)
    return rows.error();
  train = std::move(*rows);
  if (auto fits = check_model_fits(*described, *train); !fits)
    return to_caf_error(fits.error());
  if (auto err = check_replica_weights(config, *described))
    return err;
  if (auto refused = described->refuse_device(config.device); !refused.empty())
    return make_troupe_error(troupe_errc::bad_config,
                             "replica " + std::to_string(config.index) + ": " + refused);
  store_group store;
  store.parameter_count = described->parameter_count();
  auto ranges = split_into_shards(store.parameter_count, shards.size());
  if (!ranges)
    return to_caf_error(ranges.error());
  store.ranges = std::move(*ranges);
  const bool handover = hands_over_on_device(config, shards, here);
  store.shards = std::move(shards);
  auto compute = make_backend(config.device);
  if (!compute)
    return to_caf_error(compute.error());
  if (wrap)
    *compute = wrap(config.index, std::move(*compute));
  auto setup = std::make_shared<replica_setup>();
  setup->config = config;
  setup->store = std::move(store);
  setup->train = std::move(train);
  setup->compute = std::move(*compute);
  setup->max_batch = (config.global_batch + config.replicas - 1) / config.replicas;
  setup->inputs = described->inputs();
  if (auto err = build_model(*setup, *described))
    return err;
  setup->device_handover = handover && setup->device != nullptr;
  return setup;
}

} // namespace troupe::detail
