// The wire's lossless codings on a replica's side: pushes with their zeros
// as a mask, and asking shards for coded answers and joining them.
#include "actors/replica/wire_codings.hpp"

#include <memory>
#include <string>

#include <caf/all.hpp>

#include "messages/masked_floats.hpp"

namespace troupe::detail {

void prepare_join(replica_state& st) {
  const auto& store = st.setup->store;
  // Held elsewhere too: a new buffer starts as its copy, since slices sent
  // ahead may have asked for answers coded against what it holds.
  std::shared_ptr<const std::vector<float>> held;
  if (st.joined.use_count() > 1)
    held = st.joined;
  if (make_join_buffer(st.joined, store.parameter_count)) {
    if (held && held->size() == store.parameter_count)
      *st.joined = *held;
    else
      st.joined_versions.clear();
  }
  if (st.joined_versions.size() != store.shards.size())
    st.joined_versions.assign(store.shards.size(), std::nullopt);
  st.join_fault.clear();
}

bool reached_through_network(replica_pointer self, size_t k) {
  const auto& store = self->state.setup->store;
  const auto& shard = store.shards[k];
  // A lane's handle is a proxy of its own with the shard's address.
  const bool through_lane = caf::actor_cast<caf::actor_control_block*>(store.push_route(k))
                            != caf::actor_cast<caf::actor_control_block*>(shard);
  return shard->node() != self->node() && !through_lane;
}

void mask_push_zeros(replica_pointer self, size_t k, push_msg& slice) {
  auto& st = self->state;
  auto& gradient = slice.gradient;
  if (!st.setup->config.coding.masked_pushes || gradient.size() == 0
      || gradient.codec == float_codec::int8 || !reached_through_network(self, k))
    return;
  auto masked = mask_floats(gradient.codec, gradient.data(), gradient.size());
  if (!masked)
    return;
  ++st.report.coded.pushes;
  st.report.coded.push_bytes += masked->wire_bytes();
  st.report.coded.push_whole_bytes += gradient.size() * codec_width(gradient.codec);
  gradient.masked = std::make_shared<const masked_floats>(std::move(*masked));
}

void ask_delta(replica_pointer self, size_t k, push_msg& slice) {
  const auto& st = self->state;
  if (!st.setup->config.coding.coded_answers || !st.joins_as_answers_come
      || k >= st.joined_versions.size() || !st.joined_versions[k]
      || !reached_through_network(self, k))
    return;
  slice.wants_delta = true;
  slice.delta_base = st.joined_versions[k]->version;
  slice.delta_membership = st.joined_versions[k]->membership;
}

void join_shard_answer(replica_state& st, size_t k, const params_msg& part) {
  if (k >= st.joined_versions.size())
    return;
  auto fault = join_answer(part, *st.joined, st.joined_versions[k]);
  if (!fault.empty()) {
    if (st.join_fault.empty())
      st.join_fault = "the answer of store shard " + std::to_string(k) + " " + fault;
    return;
  }
  if (part.delta) {
    ++st.report.coded.answers;
    st.report.coded.answer_bytes += part.delta.size_in_bytes();
    st.report.coded.answer_whole_bytes += part.delta.count * codec_width(part.delta.codec);
  }
}

} // namespace troupe::detail
