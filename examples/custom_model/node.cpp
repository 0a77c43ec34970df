// A node that can host the factorization machine's replicas: register the
// model, then run Troupe's node.
#include <troupe/node.hpp>

#include "factorization_machine.hpp"

int main(int argc, char** argv) {
  register_factorization_machine();
  return troupe::node_main(argc, argv);
}
