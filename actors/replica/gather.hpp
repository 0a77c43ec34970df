// Gathering one answer from each of several actors (the store's shards):
// CAF 0.17 has no fan-out request, so this collects them in order.
#pragma once

#include <cstddef>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

#include <caf/error.hpp>

namespace troupe::detail {

/// Sends request `i` for every i < count through `send(i)` (which returns
/// CAF's response handle of an event-based actor's request), calls
/// `arrived(i, answer)` as each answer comes, and `done(answers)` with the
/// answers in request order once every one came, or `failed(error)` (or
/// `failed(i, error)`, naming the request) with the first error, once;
/// later answers are dropped.
template <class Answer, class Send, class Arrived, class Done, class Failed>
void gather(size_t count, Send send, Arrived arrived, Done done, Failed failed) {
  struct gathering {
    std::vector<Answer> answers;
    size_t missing = 0;
    bool failed = false;
  };
  auto pending = std::make_shared<gathering>();
  pending->answers.resize(count);
  pending->missing = count;
  for (size_t i = 0; i < count; ++i)
    send(i).then(
      [pending, i, arrived, done](Answer& answer) mutable {
        if (pending->failed)
          return;
        arrived(i, answer);
        pending->answers[i] = std::move(answer);
        if (--pending->missing == 0)
          done(pending->answers);
      },
      [pending, i, failed](caf::error& err) mutable {
        if (pending->failed)
          return;
        pending->failed = true;
        if constexpr (std::is_invocable_v<Failed&, size_t, caf::error&>)
          failed(i, err);
        else
          failed(err);
      });
}

/// gather() with nothing to do as each answer comes.
template <class Answer, class Send, class Done, class Failed>
void gather(size_t count, Send send, Done done, Failed failed) {
  gather<Answer>(
    count, std::move(send), [](size_t, const Answer&) {}, std::move(done), std::move(failed));
}

} // namespace troupe::detail
