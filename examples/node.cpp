// A node: hosts replicas and store shards for a remote coordinator. Start one
// per worker host, then point the coordinator at them:
//
//   build/examples/node --port=4001                      (loopback by default)
//   build/examples/mnist --nodes=127.0.0.1:4001,127.0.0.1:4002 --replicas-per-node=1
//
// It serves job after job until SIGINT or SIGTERM; when a coordinator dies,
// its replicas here stop with it. `node --help` lists the options. Installed,
// it is troupe-node.
#include <troupe/node.hpp>

int main(int argc, char** argv) {
  return troupe::node_main(argc, argv);
}
