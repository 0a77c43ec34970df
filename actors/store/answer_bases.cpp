// Coding a shard's answers against the versions its replicas hold.
#include "actors/store/answer_bases.hpp"

namespace troupe::detail {

const answer_bases::kept_version* answer_bases::find(uint64_t version) const {
  for (const auto& kept : versions_)
    if (kept.version == version)
      return &kept;
  return nullptr;
}

void answer_bases::keep(const params_msg& answer) {
  if (find(answer.version) != nullptr)
    return;
  if (!versions_.empty() && versions_.back().values->size() != answer.values.size())
    versions_.clear(); // a shard of another size: none of its versions is a base any more
  versions_.push_back({answer.version, std::make_shared<const std::vector<float>>(
                                         answer.values.to_vector())});
  if (versions_.size() > kept_versions)
    versions_.pop_front();
}

void answer_bases::code(params_msg& answer, std::optional<uint64_t> base) {
  if (answer.values.size() == 0)
    return;
  // Nothing is kept before a replica first asks: runs of one process never do.
  asked_ = asked_ || base.has_value();
  if (!asked_)
    return;
  keep(answer);
  if (!base)
    return;
  if (!last_code_ || last_code_->base != *base || last_code_->version != answer.version) {
    const kept_version* before = find(*base);
    const kept_version* now = find(answer.version);
    if (before == nullptr || now == nullptr) // keep() holds versions of one size only
      return;
    last_code_ = kept_code{*base, answer.version,
                           code_delta(answer.values.codec, before->values->data(),
                                      now->values->data(), now->values->size(), *base)};
  }
  if (!last_code_->delta)
    return;
  answer.delta = *last_code_->delta;
  answer.values = shared_floats{};
}

} // namespace troupe::detail
