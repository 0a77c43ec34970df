// What a plaintext peer may send a node or a coordinator: each case is a
// byte stream that once crashed a process, held its memory or made it wait,
// sent here over a real socket; the process must close the connection (or
// refuse the request) with a line that says why, and go on serving.
#include <csignal>

#include <caf/all.hpp>
#include <caf/io/all.hpp>

#include "actors/cluster/basp_header_check.hpp"
#include "actors/cluster/handshake.hpp"
#include "actors/cluster/remote_replicas.hpp"
#include "actors/store/variable_store.hpp"
#include "messages/errors.hpp"
#include "messages/interfaces.hpp"
#include "tests/cluster/cluster_test.hpp"
#include "tests/wire/basp_frames.hpp"
#include "tests/wire/raw_socket.hpp"
#include "tests/wire/peer_config.hpp"

using namespace troupe;
using namespace troupe::cluster_test;
using namespace troupe::wire_test;

namespace {

// How long a guarded connection may stall (three heartbeat timeouts, at
// least 3 s: actors/cluster/frame_guard.cpp), and the slack on top.
constexpr milliseconds stall_bound{3000};
constexpr milliseconds stall_slack{3000};

// The node still trains a real job after whatever came before.
void check_still_trains(const temp_dir& dir, node_process& node, const std::string& name) {
  auto run = run_mnist(dir, name, {"--nodes=" + node.address, "--epochs=1"}, run_timeout);
  INFO(run.description);
  CLUSTER_REQUIRE(run.status.exited, node.proc.get());
  CLUSTER_CHECK(run.status.code == 0, node.proc.get());
  CLUSTER_CHECK(node.proc->running(), node.proc.get());
}

// The node printed `text` on stderr (within notice_timeout).
void check_logged(node_process& node, const std::string& text) {
  CLUSTER_CHECK(node.proc->wait_for_line(stream::err, text, notice_timeout), node.proc.get());
}

// A peer system in the test process, connected to the node; `greet` has it
// pass the node's handshake as a coordinator does.
struct peer {
  peer_config config;
  caf::actor_system system{config};
  caf::node_id node;
  caf::actor owner = system.spawn([] { return caf::behavior{[](int32_t) {}}; });

  peer(const std::string& address, bool greet) {
    auto front_door = system.middleman().remote_actor<node_actor>("127.0.0.1", port_of(address));
    if (!front_door)
      throw std::runtime_error("cannot connect to " + address + ": "
                               + system.render(front_door.error()));
    node = front_door->node();
    if (!greet)
      return;
    caf::scoped_actor self{system};
    auto hello = make_handshake(system, "784-128relu-10", data_dir(), "coordinator",
                                troupe_protocol_version);
    self->request(*front_door, std::chrono::seconds(10), hello_atom::value, hello)
      .receive([](const handshake&) {},
               [&](caf::error& err) {
                 throw std::runtime_error("the node refused the handshake: "
                                          + system.render(err));
               });
  }

  ~peer() {
    caf::anon_send_exit(owner, caf::exit_reason::user_shutdown);
  }

  template <class Handle>
  caf::expected<Handle> spawn(const std::string& type, caf::message args) {
    return system.middleman().remote_spawn<Handle>(node, type, std::move(args),
                                                   std::chrono::seconds(10));
  }
};

store_config small_store() {
  store_config config;
  config.initial_parameters = shared_floats{std::vector<float>(6, 0.5f)};
  return config;
}

// Reads the node's server handshake off `socket` and returns the id of its
// front door, the actor CAF reads messages for first.
uint64_t front_door_of(caf::actor_system& system, raw_socket& socket) {
  auto server_handshake = socket.read_some(32, notice_timeout);
  REQUIRE(server_handshake.size() >= 32);
  const auto announced = read_basp_header(
    reinterpret_cast<const unsigned char*>(server_handshake.data())).payload_len;
  if (server_handshake.size() < 32 + announced) {
    const auto rest = socket.read_some(32 + announced - server_handshake.size(), notice_timeout);
    server_handshake.insert(server_handshake.end(), rest.begin(), rest.end());
  }
  const auto front_door = published_actor_of(system, server_handshake);
  REQUIRE(front_door != 0);
  return front_door;
}

// Waits until `whom` (an actor on the node) has ended.
void await_end(caf::actor_system& system, const caf::actor& whom) {
  caf::scoped_actor self{system};
  self->monitor(whom);
  self->receive([](caf::down_msg&) {}, caf::after(std::chrono::seconds(10)) >> [] {
    FAIL("the node's actor did not end within 10 s");
  });
}

} // namespace

TEST_CASE("a client handshake without payload closes the connection to a node, which "
          "trains on",
          "[wire][hardening]") {
  temp_dir dir{"troupe-wire"};
  auto node = start_node(dir, "node");
  auto socket = raw_socket::connect_to(port_of(node.address));
  REQUIRE(socket.connected());
  // 64 bytes: the empty handshake CAF 0.17 would dereference, and a heartbeat.
  auto stream = basp_header_bytes(1, 0, 0, 0, 0);
  auto heartbeat = basp_header_bytes(6, 0, 0, 0, 0);
  stream.insert(stream.end(), heartbeat.begin(), heartbeat.end());
  REQUIRE(stream.size() == 64);
  CLUSTER_REQUIRE(socket.send_all(stream, notice_timeout), node.proc.get());
  CLUSTER_CHECK(socket.closed_by_peer(notice_timeout), node.proc.get());
  check_logged(node, "client_handshake without payload");
  check_still_trains(dir, node, "after");
}

TEST_CASE("a server handshake without payload ends a coordinator's run with an error "
          "naming the node, not a crash",
          "[wire][hardening]") {
  temp_dir dir{"troupe-wire"};
  raw_listener fake_node;
  const auto address = "127.0.0.1:" + std::to_string(fake_node.port());
  process coordinator{mnist_command({"--nodes=" + address, "--epochs=1"}), dir.path(),
                      "coordinator"};
  auto socket = fake_node.accept(line_timeout);
  CLUSTER_REQUIRE(socket.connected(), &coordinator);
  auto stream = basp_header_bytes(0, 0, 3, 0, 0);
  auto heartbeat = basp_header_bytes(6, 0, 0, 0, 0);
  stream.insert(stream.end(), heartbeat.begin(), heartbeat.end());
  CLUSTER_REQUIRE(socket.send_all(stream, notice_timeout), &coordinator);
  // Each retry of the connect gets the same answer.
  for (int attempt = 0; attempt < 3; ++attempt) {
    if (attempt > 0) {
      socket = fake_node.accept(milliseconds{2000});
      if (!socket.connected())
        break;
      socket.send_all(stream, notice_timeout);
    }
  }
  const auto status = coordinator.wait(run_timeout);
  INFO(to_string(status));
  CLUSTER_REQUIRE(status.exited, &coordinator);
  CLUSTER_CHECK(status.code != 0, &coordinator);
  CLUSTER_CHECK(coordinator.err().find("server_handshake without payload") != std::string::npos,
                &coordinator);
  CLUSTER_CHECK(coordinator.err().find(address) != std::string::npos, &coordinator);
}

TEST_CASE("a store spawn with no arguments, or the wrong ones, is refused and the node "
          "trains on",
          "[wire][hardening]") {
  temp_dir dir{"troupe-wire"};
  auto node = start_node(dir, "node");
  {
    peer test{node.address, false};
    auto empty = test.spawn<caf::actor>(remote_store_type, caf::make_message());
    CLUSTER_CHECK(!empty, node.proc.get());
    auto wrong = test.spawn<caf::actor>(remote_store_type, caf::make_message(int32_t{7}));
    CLUSTER_CHECK(!wrong, node.proc.get());
    auto no_replica_args = test.spawn<caf::actor>(remote_replica_type, caf::make_message());
    CLUSTER_CHECK(!no_replica_args, node.proc.get());
  }
  check_logged(node, "refused to spawn troupe.store: its arguments are not");
  check_logged(node, "refused to spawn troupe.replica");
  check_still_trains(dir, node, "after");
}

TEST_CASE("spawns and watches naming actors that no longer exist are refused, and the node "
          "trains on",
          "[wire][hardening]") {
  temp_dir dir{"troupe-wire"};
  auto node = start_node(dir, "node");
  {
    peer stranger{node.address, false};
    // A peer the node never greeted: a shard it would own could never learn
    // that its owner is gone.
    auto unowned = stranger.spawn<store_actor>(
      remote_store_type, caf::make_message(small_store(), checkpoint_writer_actor{},
                                           stranger.owner));
    CLUSTER_CHECK(!unowned, node.proc.get());
    // Nor may a replica wait on a shard there.
    auto shard = spawn_variable_store(stranger.system, small_store());
    REQUIRE(shard);
    replica_config job;
    job.data_dir = data_dir();
    auto stranded = stranger.spawn<replica_actor>(
      remote_replica_type, caf::make_message(job, std::vector<store_actor>{*shard}));
    CLUSTER_CHECK(!stranded, node.proc.get());
    caf::anon_send_exit(*shard, caf::exit_reason::user_shutdown);
  }
  {
    peer test{node.address, true};
    auto orphan = test.spawn<store_actor>(
      remote_store_type, caf::make_message(small_store(), checkpoint_writer_actor{}, caf::actor{}));
    CLUSTER_CHECK(!orphan, node.proc.get());
    auto gone = test.spawn<store_actor>(remote_store_type,
                                        caf::make_message(small_store(), checkpoint_writer_actor{},
                                                          test.owner));
    CLUSTER_REQUIRE(gone, node.proc.get());
    caf::anon_send_exit(*gone, caf::exit_reason::user_shutdown);
    await_end(test.system, caf::actor_cast<caf::actor>(*gone));
    // On the node, a handle to its own actor that ended reads as null.
    replica_config job;
    job.data_dir = data_dir();
    auto replica = test.spawn<replica_actor>(
      remote_replica_type, caf::make_message(job, std::vector<store_actor>{*gone}));
    CLUSTER_CHECK(!replica, node.proc.get());
    auto alive = test.spawn<store_actor>(remote_store_type,
                                         caf::make_message(small_store(),
                                                           checkpoint_writer_actor{},
                                                           test.owner));
    CLUSTER_REQUIRE(alive, node.proc.get());
    caf::scoped_actor self{test.system};
    caf::error refused;
    self->request(*alive, std::chrono::seconds(10), watch_atom::value, uint32_t{0},
                  caf::actor_cast<replica_actor>(*gone), uint64_t{0})
      .receive([](uint64_t) {}, [&](caf::error& err) { refused = std::move(err); });
    CLUSTER_CHECK(refused == troupe_errc::unknown_replica, node.proc.get());
    caf::anon_send_exit(*alive, caf::exit_reason::user_shutdown);
  }
  check_logged(node, "store shard 0 of its job no longer exists");
  check_logged(node, "owner is on a node this node has not greeted");
  check_logged(node, "names no owner");
  check_logged(node, "store shard 0 of its job is on a node this node has not greeted");
  check_still_trains(dir, node, "after");
}

TEST_CASE("a 255-byte frame announcing 2^30 floats is refused without allocating them",
          "[wire][hardening]") {
  temp_dir dir{"troupe-wire"};
  auto node = start_node(dir, "node");
  const auto pid = node.proc->pid();
  peer_config config;
  caf::actor_system system{config};
  auto socket = raw_socket::connect_to(port_of(node.address));
  REQUIRE(socket.connected());
  // CAF reads a message only for an actor that exists: the node's front door.
  const auto front_door = front_door_of(system, socket);
  // A push of four floats with a pattern to find, its count then rewritten
  // from 4 (one varbyte) to 2^30 (five).
  push_msg push;
  push.gradient = shared_floats{std::vector<float>{1.5f, 2.5f, 3.5f, 4.5f}};
  auto frame = direct_message_frame(system, front_door, caf::make_message(push_atom::value, push));
  const float pattern_values[] = {1.5f, 2.5f, 3.5f, 4.5f};
  const bytes pattern(reinterpret_cast<const char*>(pattern_values),
                      reinterpret_cast<const char*>(pattern_values) + sizeof(pattern_values));
  const auto at = find_bytes(frame, pattern);
  REQUIRE(at < frame.size());
  REQUIRE(frame[at - 1] == 4);
  const char huge_count[] = {'\x80', '\x80', '\x80', '\x80', '\x04'}; // 2^30, varbyte
  frame.erase(frame.begin() + static_cast<long>(at) - 1);
  frame.insert(frame.begin() + static_cast<long>(at) - 1, huge_count, huge_count + 5);
  const auto patched =
    basp_header_bytes(2, static_cast<uint32_t>(frame.size() - 32), 0, 0, front_door);
  std::copy(patched.begin(), patched.end(), frame.begin());
  INFO("frame of " << frame.size() << " bytes");
  CHECK(frame.size() <= 255);
  const auto start_kib = status_kib(pid, "VmHWM");
  auto stream = client_handshake_frame(system);
  stream.insert(stream.end(), frame.begin(), frame.end());
  CLUSTER_REQUIRE(socket.send_all(stream, notice_timeout), node.proc.get());
  socket.read_some(1 << 20, milliseconds{1500});
  const auto peak_kib = status_kib(pid, "VmHWM");
  INFO("node VmHWM " << start_kib << " KiB before, " << peak_kib << " KiB after");
  CLUSTER_CHECK(peak_kib < start_kib + 64 * 1024, node.proc.get());
  CLUSTER_CHECK(node.proc->running(), node.proc.get());
  socket.close();
  check_still_trains(dir, node, "after");
}

TEST_CASE("messages of CAF's stream categories are dropped unread, and the node trains "
          "afterwards",
          "[wire][hardening]") {
  // CAF reads a message whose id has a stream category as a stream message
  // and, given an empty one, reads past it.
  temp_dir dir{"troupe-wire"};
  auto node = start_node(dir, "node");
  peer_config config;
  caf::actor_system system{config};
  auto socket = raw_socket::connect_to(port_of(node.address));
  REQUIRE(socket.connected());
  const auto front_door = front_door_of(system, socket);
  auto stream = client_handshake_frame(system);
  for (uint64_t category : {2, 3}) {
    const auto frame = direct_message_frame(system, front_door, caf::message{}, category << 60);
    stream.insert(stream.end(), frame.begin(), frame.end());
  }
  CLUSTER_REQUIRE(socket.send_all(stream, notice_timeout), node.proc.get());
  socket.read_some(1 << 20, milliseconds{1500});
  CLUSTER_CHECK(node.proc->running(), node.proc.get());
  check_logged(node, "of a stream category");
  socket.close();
  check_still_trains(dir, node, "after");
}

TEST_CASE("a header or a payload that stalls part way, and connections that never complete a "
          "handshake, are closed within the stall bound",
          "[wire][hardening]") {
  temp_dir dir{"troupe-wire"};
  auto node = start_node(dir, "node");
  const auto port = port_of(node.address);
  auto partial = raw_socket::connect_to(port);
  REQUIRE(partial.connected());
  const auto header = basp_header_bytes(1, 100, 0, 0, 0);
  CLUSTER_REQUIRE(partial.send_all(bytes(header.begin(), header.begin() + 8), notice_timeout),
                  node.proc.get());
  const auto stalled_since = clock_type::now(); // the node's stall clock starts about here
  // A peer past its handshake that sends a tenth of a message's payload.
  peer_config config;
  caf::actor_system system{config};
  auto halfway = raw_socket::connect_to(port);
  REQUIRE(halfway.connected());
  auto stream = client_handshake_frame(system);
  const auto big = basp_header_bytes(2, 100000, 0, 0, 1);
  stream.insert(stream.end(), big.begin(), big.end());
  stream.resize(stream.size() + 10000, 0);
  CLUSTER_REQUIRE(halfway.send_all(stream, notice_timeout), node.proc.get());
  // Silent peers, more than a node keeps unverified at once.
  std::vector<raw_socket> silent;
  for (int i = 0; i < 40; ++i) {
    silent.push_back(raw_socket::connect_to(port));
    CLUSTER_REQUIRE(silent.back().connected(), node.proc.get());
  }
  CLUSTER_CHECK(partial.closed_by_peer(stall_bound + stall_slack), node.proc.get());
  CLUSTER_CHECK(seconds_since(stalled_since) > 1.0, node.proc.get());
  CLUSTER_CHECK(halfway.closed_by_peer(stall_bound + stall_slack), node.proc.get());
  for (auto& socket : silent)
    CLUSTER_CHECK(socket.closed_by_peer(stall_bound + stall_slack), node.proc.get());
  check_logged(node, "sent part of a BASP header");
  check_logged(node, "have not completed their handshake yet");
  check_logged(node, "did not complete its BASP handshake");
  check_still_trains(dir, node, "after");
}

TEST_CASE("a handshake whose link drops ends the coordinator's wait at once, naming the node "
          "and the request",
          "[wire][hardening]") {
  temp_dir dir{"troupe-wire"};
  peer_config config;
  caf::actor_system system{config};
  raw_listener fake_node;
  const auto address = "127.0.0.1:" + std::to_string(fake_node.port());
  process coordinator{mnist_command({"--nodes=" + address, "--epochs=1"}), dir.path(),
                      "coordinator"};
  auto socket = fake_node.accept(line_timeout);
  CLUSTER_REQUIRE(socket.connected(), &coordinator);
  // A node's front door as CAF announces it, and then silence.
  const auto front_door = server_handshake_frame(system, 7, system.message_types<node_actor>());
  CLUSTER_REQUIRE(socket.send_all(front_door, notice_timeout), &coordinator);
  socket.read_some(1 << 16, milliseconds{1000});
  const auto cut = clock_type::now();
  socket.close();
  const auto status = coordinator.wait(run_timeout);
  INFO(to_string(status));
  CLUSTER_REQUIRE(status.exited, &coordinator);
  CLUSTER_CHECK(status.code != 0, &coordinator);
  // The step timeout is 60 s: the lost link, not the timeout, ended it.
  CLUSTER_CHECK(seconds_since(cut) < 10.0, &coordinator);
  CLUSTER_CHECK(coordinator.err().find("the handshake with node " + address)
                  != std::string::npos,
                &coordinator);
  CLUSTER_CHECK(coordinator.err().find("was lost") != std::string::npos, &coordinator);
}
