// Checking a device shard's steps for NaN or Inf on the device.
#include "actors/store/device_verdicts.hpp"

#include "messages/errors.hpp"
#include "model/backend/device_buffers.hpp"

namespace troupe::detail {

void device_verdicts::note_checked(const device_floats& gradient, uint32_t replica,
                                   uint64_t round) {
  checked_[gradient.floats.data()] = checked_gradient{replica, round, gradient.non_finite};
}

std::optional<device_verdicts::step_verdict>
device_verdicts::guard(const std::vector<weighted_gradient>& terms, optimizer& optim) {
  if (checked_.empty())
    return std::nullopt;
  if (unchecked_) // a policy closing several rounds at once
    (void) check();
  step_verdict verdict;
  std::vector<weighted_gradient> flag_terms;
  for (const auto& term : terms) {
    auto found = checked_.find(term.gradient);
    if (found == checked_.end())
      continue;
    if (auto flag = found->second.flag.lock()) {
      flag_terms.push_back(weighted_gradient{1.0f, flag.get()});
      verdict.flags.emplace_back(found->second, std::move(flag));
    }
    checked_.erase(found);
  }
  if (flag_terms.empty())
    return std::nullopt;
  const float* skip_if = flag_terms.front().gradient;
  if (flag_terms.size() > 1) {
    if (!any_flagged_)
      any_flagged_ = make_device_buffer(device_, 1);
    device_->weighted_sum(flag_terms, 1, any_flagged_.get());
    skip_if = any_flagged_.get();
  }
  optim.skip_next_step_if(skip_if); // an optimizer that steps on the device can
  if (!verdict_slot_)
    verdict_slot_ = make_host_buffer(device_, 1);
  verdict.skipped = verdict_slot_;
  device_->queue_copy_to_host(verdict.skipped.get(), skip_if, sizeof(float));
  return verdict;
}

void device_verdicts::queue(std::optional<step_verdict> verdict) {
  if (!verdict)
    return;
  verdict->done = device_->record_event();
  unchecked_ = std::move(verdict);
}

caf::error device_verdicts::check() {
  if (refused_ || !unchecked_)
    return refused_;
  auto verdict = std::move(*unchecked_);
  unchecked_.reset();
  verdict.done->wait_host();
  if (*verdict.skipped == 0.0f)
    return caf::none;
  std::string culprits;
  for (const auto& [checked, flag] : verdict.flags) {
    float value = 0.0f;
    device_->copy_to_host(&value, flag.get(), sizeof(float));
    if (value != 0.0f)
      culprits += (culprits.empty() ? "" : "; ") + ("replica " + std::to_string(checked.replica)
                  + ": its gradient of round " + std::to_string(checked.round)
                  + " contains NaN or Inf");
  }
  refused_ = make_troupe_error(troupe_errc::bad_gradient,
                               culprits + " (store shard " + std::to_string(shard_)
                                 + " did not apply it)");
  return refused_;
}

} // namespace troupe::detail
