// The checkpoint writer actor and the assembly of shard parts.
#include "actors/store/checkpoint_writer.hpp"

#include <algorithm>
#include <map>

#include <caf/all.hpp>

#include "messages/errors.hpp"
#include "model/shard_layout.hpp"

namespace troupe::detail {

namespace {

caf::error bad_parts(const std::string& why) {
  return make_troupe_error(troupe_errc::bad_config, why);
}

// A checkpoint of `target`'s run where `lead` says the store stands, without
// its values yet.
checkpoint checkpoint_header(const checkpoint_target& target, const checkpoint_part& lead) {
  checkpoint c;
  c.model = target.model;
  c.settings = target.settings;
  c.config_fingerprint = settings_fingerprint(target.settings);
  c.optimizer = target.optimizer;
  c.version = lead.version;
  c.round = lead.round;
  c.epoch = lead.epoch;
  c.epoch_round = lead.epoch_round;
  c.epoch_complete = lead.epoch_complete;
  c.optimizer_steps = lead.optimizer_steps;
  c.learning_rate_factor = lead.learning_rate_factor;
  return c;
}

// The replicas' residuals of every part (checkpoint_part::residuals), placed
// replica after replica into `out` (replicas x the parameter count); `out`
// stays empty unless every part has them.
caf::error place_residuals(const checkpoint_target& target,
                           const std::vector<checkpoint_part>& parts,
                           const std::vector<shard_range>& ranges, std::vector<float>& out) {
  const auto lacks = [](const checkpoint_part& p) { return p.residuals.size() == 0; };
  if (std::any_of(parts.begin(), parts.end(), lacks))
    return caf::none;
  const checkpoint_part& lead = parts.front();
  const size_t replicas = lead.residuals.size() / std::max<size_t>(ranges[lead.shard].count, 1);
  for (const checkpoint_part& part : parts)
    if (part.residuals.size() != replicas * ranges[part.shard].count || replicas == 0)
      return bad_parts("checkpoint part of store shard " + std::to_string(part.shard) + " has "
                       + std::to_string(part.residuals.size())
                       + " residual values, not a whole number of replicas' slices like shard "
                       + std::to_string(lead.shard) + "'s");
  out.assign(replicas * target.parameter_count, 0.0f);
  for (const checkpoint_part& part : parts) {
    const shard_range range = ranges[part.shard];
    for (size_t r = 0; r < replicas; ++r)
      std::copy_n(part.residuals.data() + r * range.count, range.count,
                  out.data() + r * target.parameter_count + range.offset);
  }
  return caf::none;
}

} // namespace

void attach_residuals(std::vector<checkpoint_part>& parts, const std::vector<float>& residuals,
                      size_t parameter_count) {
  if (residuals.empty() || parameter_count == 0 || residuals.size() % parameter_count != 0)
    return;
  const size_t replicas = residuals.size() / parameter_count;
  for (checkpoint_part& part : parts) {
    auto range = split_into_shards(parameter_count, part.shards);
    if (!range || part.shard >= range->size())
      continue;
    const shard_range own = (*range)[part.shard];
    std::vector<float> slices(replicas * own.count);
    for (size_t r = 0; r < replicas; ++r)
      std::copy_n(residuals.data() + r * parameter_count + own.offset, own.count,
                  slices.data() + r * own.count);
    part.residuals = shared_floats{std::move(slices)};
  }
}

caf::expected<checkpoint> assemble_checkpoint(const checkpoint_target& target,
                                         const std::vector<checkpoint_part>& parts) {
  auto ranges = split_into_shards(target.parameter_count, target.shards);
  if (!ranges)
    return to_caf_error(ranges.error());
  if (parts.size() != target.shards)
    return bad_parts(
                "a checkpoint needs one part from each of " + std::to_string(target.shards)
                  + " store shards, got " + std::to_string(parts.size()));
  const checkpoint_part& lead = parts.front();
  checkpoint c = checkpoint_header(target, lead);
  c.params.resize(target.parameter_count);
  std::vector<bool> seen(target.shards, false);
  for (const checkpoint_part& part : parts) {
    const auto what = "checkpoint part of store shard " + std::to_string(part.shard);
    if (part.shards != target.shards || part.shard >= target.shards || seen[part.shard])
      return bad_parts(
                  what + " of " + std::to_string(part.shards) + " does not fit a store of "
                    + std::to_string(target.shards) + " shards, or came twice");
    if (part.round != lead.round || part.version != lead.version
        || part.optimizer_steps != lead.optimizer_steps
        || part.learning_rate_factor != lead.learning_rate_factor)
      return bad_parts(
                  what + " is of round " + std::to_string(part.round) + ", version "
                    + std::to_string(part.version) + "; shard "
                    + std::to_string(lead.shard) + "'s of round "
                    + std::to_string(lead.round) + ", version "
                    + std::to_string(lead.version));
    const shard_range range = (*ranges)[part.shard];
    if (part.params.size() != range.count
        || (range.count > 0 && part.optimizer_state.size() % range.count != 0))
      return bad_parts(
                  what + " has " + std::to_string(part.params.size()) + " parameters, expected "
                    + std::to_string(range.count));
    seen[part.shard] = true;
    std::copy_n(part.params.data(), range.count, c.params.data() + range.offset);
    const size_t planes = part.optimizer_state.size() / range.count;
    if (c.optimizer_state.empty())
      c.optimizer_state.resize(planes * target.parameter_count);
    if (c.optimizer_state.size() != planes * target.parameter_count)
      return bad_parts(
                  what + " has optimizer state of another shape than shard "
                    + std::to_string(lead.shard) + "'s");
    place_optimizer_state(part.optimizer_state.data(), part.optimizer_state.size(),
                          target.parameter_count, range, c.optimizer_state.data());
  }
  if (auto err = place_residuals(target, parts, *ranges, c.residuals))
    return err;
  return c;
}

namespace {

using part_sets = std::map<uint64_t, std::vector<checkpoint_part>>; // by round

struct writer_state {
  static inline const char* name = "troupe.checkpoint_writer";

  checkpoint_target target;
  part_sets pending;           // periodic checkpoints' parts
  part_sets pending_snapshots; // snapshots' parts
  std::vector<checkpoint_part> snapshot; // the newest complete one; none yet: empty
  uint64_t written_round = 0; // the newest round written so far (+1; 0: none)
  checkpoint_stats stats;

  caf::expected<size_t> write(const std::vector<checkpoint_part>& parts) {
    auto assembled = assemble_checkpoint(target, parts);
    if (!assembled)
      return assembled.error();
    auto written = write_checkpoint(target.path, *assembled);
    if (!written)
      return to_caf_error(written.error());
    written_round = std::max(written_round, assembled->round + 1);
    ++stats.written;
    return *written;
  }

  // Adds `part` to its round's set (in place of an earlier part of the same
  // shard: a healed store sends its rounds again) and returns the set once
  // every shard's part is in, else null.
  std::vector<checkpoint_part>* add(part_sets& sets, checkpoint_part& part) {
    auto& parts = sets[part.round];
    auto same = std::find_if(parts.begin(), parts.end(), [&](const checkpoint_part& p) {
      return p.shard == part.shard;
    });
    if (same != parts.end())
      *same = std::move(part);
    else
      parts.push_back(std::move(part));
    return parts.size() < target.shards ? nullptr : &parts;
  }

  // Keeps a complete set as the snapshot unless a later one is kept already.
  void keep(const std::vector<checkpoint_part>& parts) {
    if (snapshot.empty() || parts.front().round >= snapshot.front().round)
      snapshot = parts;
  }
};

// Older rounds can no longer complete once `round` has: a shard sends its
// parts in order.
void drop_through(part_sets& sets, uint64_t round) {
  sets.erase(sets.begin(), sets.upper_bound(round));
}

checkpoint_writer_actor::behavior_type
checkpoint_writer(checkpoint_writer_actor::stateful_pointer<writer_state> self,
                  checkpoint_target target) {
  self->state.target = std::move(target);
  return {
    [self](part_atom, checkpoint_part& part) {
      auto& st = self->state;
      if (part.round + 1 <= st.written_round)
        return; // an epoch-end save of this round (or a later one) came first
      auto* parts = st.add(st.pending, part);
      if (!parts)
        return;
      const uint64_t round = parts->front().round;
      st.keep(*parts);
      // Not fatal: training goes on. The stats carry the failure to the
      // coordinator, which warns through the run's observer.
      if (auto written = st.write(*parts); !written) {
        ++st.stats.failed;
        st.stats.last_error = describe(written.error());
      }
      drop_through(st.pending, round);
    },
    [self](save_atom, std::vector<checkpoint_part>& parts) -> caf::result<uint64_t> {
      auto written = self->state.write(parts);
      if (!written)
        return written.error();
      return static_cast<uint64_t>(*written);
    },
    [self](snapshot_atom, checkpoint_part& part) {
      auto& st = self->state;
      if (auto* parts = st.add(st.pending_snapshots, part)) {
        const uint64_t round = parts->front().round;
        st.keep(*parts);
        drop_through(st.pending_snapshots, round);
      }
    },
    [self](snapshot_atom, std::vector<checkpoint_part>& parts) {
      if (parts.size() == self->state.target.shards)
        self->state.keep(parts);
    },
    [self](restore_atom) -> caf::result<std::vector<checkpoint_part>> {
      auto& st = self->state;
      if (st.snapshot.empty())
        return make_troupe_error(troupe_errc::store_lost, "no snapshot of the store is kept");
      // The parts still pending are the replaced shards' own.
      st.pending.clear();
      st.pending_snapshots.clear();
      return st.snapshot;
    },
    [self](stats_atom) -> checkpoint_stats { return self->state.stats; },
  };
}

} // namespace

checkpoint_writer_actor spawn_checkpoint_writer(caf::actor_system& system,
                                                checkpoint_target target) {
  return system.spawn(checkpoint_writer, std::move(target));
}

} // namespace troupe::detail
