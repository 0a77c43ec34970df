// The coordinator's questions to the store's shards, and the fencing of
// their answers: an answer counts only from a shard of the store's current
// membership epoch, and only while no heal has replaced the shards asked.
#pragma once

#include <cstddef>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "actors/replica/gather.hpp"
#include "actors/run/epoch_phases.hpp"
#include "messages/errors.hpp"

namespace troupe::detail {

/// Says whether `answers` (from shards `shards`, asked at `generation`)
/// still count. A heal since drops them, counted as fenced; an answer of
/// another membership epoch than the store's is counted and fails the run,
/// as no current shard can send it.
template <class Answer>
bool current_answers(coordinator_pointer self, uint64_t generation,
                     const std::vector<size_t>& shards, const std::vector<Answer>& answers) {
  auto& st = self->state;
  if (st.done)
    return false;
  if (st.members.generation != generation) {
    st.members.fenced_answers += answers.size();
    return false;
  }
  for (size_t j = 0; j < answers.size(); ++j)
    if (answers[j].membership != st.members.store_epoch) {
      ++st.members.fenced_answers;
      fail_run(self, make_troupe_error(troupe_errc::fenced,
                                       "store shard " + std::to_string(shards[j])
                                         + " answered as membership epoch "
                                         + std::to_string(answers[j].membership)
                                         + "; the store's shards are of epoch "
                                         + std::to_string(st.members.store_epoch)));
      return false;
    }
  return true;
}

/// Asks shards `shards` (indices into the store's shards) through
/// `ask(k)`, which returns the request's handle, and calls `then(answers)`,
/// in that order, once every answer came and counts (current_answers). An
/// error fails the run, unless a heal replaced the shards asked since.
template <class Answer, class Ask, class Then>
void ask_shards(coordinator_pointer self, std::vector<size_t> shards, Ask ask, Then then) {
  const uint64_t generation = self->state.members.generation;
  gather<Answer>(
    shards.size(), [shards, ask](size_t j) mutable { return ask(shards[j]); },
    [self, generation, shards, then](std::vector<Answer>& answers) mutable {
      if (current_answers(self, generation, shards, answers))
        then(answers);
    },
    self->state.members.guard([self](caf::error& err) { fail_run(self, std::move(err)); }));
}

/// Asks every shard: ask_shards over all of them.
template <class Answer, class Ask, class Then>
void ask_every_shard(coordinator_pointer self, Ask ask, Then then) {
  std::vector<size_t> all(self->state.shards.size());
  std::iota(all.begin(), all.end(), size_t{0});
  ask_shards<Answer>(self, std::move(all), std::move(ask), std::move(then));
}

} // namespace troupe::detail
