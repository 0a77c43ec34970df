// A node that can host the factorization machine's replicas: register the
// model and the data source, then run Troupe's node.
#include <troupe/node.hpp>

#include "factorization_machine.hpp"
#include "interaction_data.hpp"

int main(int argc, char** argv) {
  register_factorization_machine();
  register_interaction_data();
  return troupe::node_main(argc, argv);
}
