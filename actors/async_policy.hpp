// Asynchronous (parameter-server) updates: each gradient is applied on arrival
// and only its sender is answered.
#pragma once

#include "actors/update_policy.hpp"

namespace troupe {

/// Applies every push at once; the store records its staleness.
class async_policy final : public update_policy {
public:
  bool reproducible() const override { return false; }
  std::string name() const override { return "async"; }
  push_refusal check(const gradient_push&) const override { return push_refusal::none; }
  void on_push(gradient_push push, store_port& store) override;
  void on_replica_joined(uint32_t) override {}
  void on_replica_lost(uint32_t, store_port&) override {}
  bool keeps_rounds() const override { return false; }
  bool has_pushed(uint32_t) const override { return false; }
  uint64_t next_round() const override { return pushes_; }
  void set_next_round(uint64_t round) override { pushes_ = round; }

private:
  uint64_t pushes_ = 0;
};

} // namespace troupe
