// The coordinator's side of fencing: a replica's report counts only from
// the actor it holds as that replica, of the membership epoch it knows.
#include <catch2/catch.hpp>

#include <caf/all.hpp>

#include "actors/run/epoch_phases.hpp"
#include "messages/register.hpp"

using namespace troupe;

namespace {

struct fencing_config : caf::actor_system_config {
  fencing_config() { register_messages(*this); }
};

replica_actor::behavior_type idle_replica() {
  return {
    [](epoch_atom, const epoch_order&) { return replica_report{}; },
    [](ready_atom) { return uint32_t{0}; },
    [](residual_atom, uint64_t) { return shared_floats{}; },
    [](residual_atom) { return std::make_tuple(uint64_t{0}, shared_floats{}, shared_floats{}); },
    [](tick_atom) {},
  };
}

} // namespace

TEST_CASE("the coordinator drops and counts a report of a replaced actor, of another "
          "membership epoch, or a second one in an epoch",
          "[coordinator][fencing]") {
  fencing_config cfg;
  caf::actor_system sys{cfg};
  auto current = sys.spawn(idle_replica);
  auto replaced = sys.spawn(idle_replica);
  coordinator_state st;
  st.replicas.resize(1);
  st.replicas[0].actor = current;
  st.replicas[0].membership = 2;
  replica_report report;
  report.membership = 2;
  CHECK_FALSE(counts_as_report(st, 0, replaced.address(), report));
  CHECK(st.members.fenced_answers == 1);
  report.membership = 1;
  CHECK_FALSE(counts_as_report(st, 0, current.address(), report));
  CHECK(st.members.fenced_answers == 2);
  report.membership = 2;
  CHECK(counts_as_report(st, 0, current.address(), report));
  CHECK(st.members.fenced_answers == 2);
  st.replicas[0].reported = true;
  CHECK_FALSE(counts_as_report(st, 0, current.address(), report));
  CHECK(st.members.fenced_answers == 3);
  for (const auto& actor : {current, replaced})
    caf::anon_send_exit(actor, caf::exit_reason::user_shutdown);
}
