// The atoms that name Troupe's requests (CAF atoms hold at most 10 characters).
#pragma once

#include <caf/atom.hpp>

namespace troupe::detail {

using push_atom = caf::atom_constant<caf::atom("push")>;
using params_atom = caf::atom_constant<caf::atom("params")>;
using stats_atom = caf::atom_constant<caf::atom("stats")>;
using watch_atom = caf::atom_constant<caf::atom("watch")>;
using epoch_atom = caf::atom_constant<caf::atom("epoch")>;
using fit_atom = caf::atom_constant<caf::atom("fit")>;
using hello_atom = caf::atom_constant<caf::atom("hello")>;
using save_atom = caf::atom_constant<caf::atom("save")>;
using link_atom = caf::atom_constant<caf::atom("link")>;
using ready_atom = caf::atom_constant<caf::atom("ready")>;
using part_atom = caf::atom_constant<caf::atom("part")>;
using tick_atom = caf::atom_constant<caf::atom("tick")>;
using join_atom = caf::atom_constant<caf::atom("join")>;
using deadline_atom = caf::atom_constant<caf::atom("deadline")>;
using snapshot_atom = caf::atom_constant<caf::atom("snapshot")>;
using restore_atom = caf::atom_constant<caf::atom("restore")>;
using await_atom = caf::atom_constant<caf::atom("await")>;
using halt_atom = caf::atom_constant<caf::atom("halt")>;
using stop_atom = caf::atom_constant<caf::atom("stop")>;
using rate_atom = caf::atom_constant<caf::atom("rate")>;
using norm_atom = caf::atom_constant<caf::atom("norm")>;
using peers_atom = caf::atom_constant<caf::atom("peers")>;
using residual_atom = caf::atom_constant<caf::atom("residual")>;
using clock_atom = caf::atom_constant<caf::atom("clock")>;
using lane_atom = caf::atom_constant<caf::atom("lane")>;

} // namespace troupe::detail
