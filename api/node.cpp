// The public node program.
#include <troupe/node.hpp>

#include "actors/cluster/node_main.hpp"

namespace troupe {

using namespace detail;

int node_main(int argc, char** argv) { return run_node_program(argc, argv); }

} // namespace troupe
