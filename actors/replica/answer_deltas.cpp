// Asking shards for coded answers and joining them.
#include "actors/replica/answer_deltas.hpp"

#include <string>

#include <caf/all.hpp>

namespace troupe::detail {

void prepare_join(replica_state& st) {
  const auto& store = st.setup->store;
  if (make_join_buffer(st.joined, store.parameter_count)
      || st.joined_versions.size() != store.shards.size())
    st.joined_versions.assign(store.shards.size(), std::nullopt);
  st.join_fault.clear();
}

void ask_delta(replica_pointer self, size_t k, push_msg& slice) {
  const auto& st = self->state;
  const auto& store = st.setup->store;
  if (!st.setup->config.delta_answers || !st.joins_as_answers_come
      || k >= st.joined_versions.size() || !st.joined_versions[k])
    return;
  const auto& shard = store.shards[k];
  // A lane's handle is a proxy of its own with the shard's address.
  const bool through_lane = caf::actor_cast<caf::actor_control_block*>(store.push_route(k))
                            != caf::actor_cast<caf::actor_control_block*>(shard);
  if (shard->node() == self->node() || through_lane)
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
    ++st.report.delta_answers;
    st.report.delta_bytes += part.delta.size_in_bytes();
    st.report.delta_whole_bytes += part.delta.count * codec_width(part.delta.codec);
  }
}

} // namespace troupe::detail
