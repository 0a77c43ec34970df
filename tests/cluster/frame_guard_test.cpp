// Unauthenticated peers on a plaintext node's port: BASP headers announcing
// 4 GiB payloads must not make the node allocate or stall, out-of-range
// --max-frame-size values are refused, and nothing else listens.
#include "tests/cluster/cluster_test.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <dirent.h>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

using namespace troupe::cluster_test;

namespace {

// A raw TCP connection to 127.0.0.1, closed on destruction.
class raw_connection {
public:
  explicit raw_connection(uint16_t port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = fd_ >= 0
                 && ::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  }
  ~raw_connection() {
    if (fd_ >= 0)
      ::close(fd_);
  }
  raw_connection(const raw_connection&) = delete;
  raw_connection& operator=(const raw_connection&) = delete;

  bool connected() const { return connected_; }

  /// Sends one 32-byte BASP header, big-endian: operation, three zero
  /// bytes, payload_len (u32), operation_data (u64), source and destination
  /// actor (i64): struct.pack(">BBBBIQqq", op, 0, 0, 0, len, 0, 0, dest).
  bool send_header(uint8_t operation, uint32_t payload_len, uint64_t dest_actor) {
    unsigned char header[32] = {};
    header[0] = operation;
    for (int i = 0; i < 4; ++i)
      header[4 + i] = static_cast<unsigned char>(payload_len >> (24 - 8 * i));
    for (int i = 0; i < 8; ++i)
      header[24 + i] = static_cast<unsigned char>(dest_actor >> (56 - 8 * i));
    return ::send(fd_, header, sizeof(header), MSG_NOSIGNAL) == sizeof(header);
  }

  /// Tells whether the peer closed the connection within `timeout`
  /// (whatever it sent first, e.g. CAF's server handshake, is skipped).
  bool closed_by_peer(milliseconds timeout) {
    const auto deadline = clock_type::now() + timeout;
    char buffer[4096];
    for (;;) {
      const auto left = std::chrono::duration_cast<milliseconds>(deadline - clock_type::now());
      if (left.count() <= 0)
        return false;
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(left.count())) <= 0)
        return false;
      const auto got = ::recv(fd_, buffer, sizeof(buffer), 0);
      if (got == 0 || (got < 0 && errno == ECONNRESET))
        return true;
      if (got < 0 && errno != EINTR && errno != EAGAIN)
        return false;
    }
  }

private:
  int fd_ = -1;
  bool connected_ = false;
};

// Returns the local ports of the TCP sockets `pid` listens on, by matching
// its socket inodes against /proc/net/tcp and tcp6 (state 0A: LISTEN).
std::set<uint16_t> listening_ports(pid_t pid) {
  std::set<std::string> inodes;
  const auto fd_dir = "/proc/" + std::to_string(pid) + "/fd";
  if (auto* dir = ::opendir(fd_dir.c_str())) {
    while (auto* entry = ::readdir(dir)) {
      char target[256] = {};
      const auto path = fd_dir + "/" + entry->d_name;
      const auto n = ::readlink(path.c_str(), target, sizeof(target) - 1);
      const std::string link{target, n > 0 ? static_cast<size_t>(n) : 0};
      if (link.rfind("socket:[", 0) == 0)
        inodes.insert(link.substr(8, link.size() - 9));
    }
    ::closedir(dir);
  }
  std::set<uint16_t> ports;
  for (const char* table : {"/proc/net/tcp", "/proc/net/tcp6"}) {
    std::ifstream in{table};
    std::string line;
    std::getline(in, line); // header
    while (std::getline(in, line)) {
      std::istringstream fields{line};
      std::string slot, local, remote, state, queues, timer, retransmits, uid, timeout, inode;
      fields >> slot >> local >> remote >> state >> queues >> timer >> retransmits >> uid
        >> timeout >> inode;
      if (state == "0A" && inodes.count(inode) != 0)
        ports.insert(static_cast<uint16_t>(std::stoul(local.substr(local.rfind(':') + 1),
                                                      nullptr, 16)));
    }
  }
  return ports;
}

std::string to_text(const std::set<uint16_t>& ports) {
  std::string text;
  for (auto port : ports)
    text += (text.empty() ? "" : ", ") + std::to_string(port);
  return "{" + text + "}";
}

constexpr uint64_t rss_bound_kb = 256 * 1024; // over the node's own start

} // namespace

TEST_CASE("a plaintext node closes connections announcing 4 GiB frames without allocating, "
          "and still trains",
          "[cluster][frame_guard]") {
  temp_dir dir{"troupe-cluster"};
  auto node = start_node(dir, "node");
  const auto pid = node.proc->pid();
  const auto port = port_of(node.address);
  const auto start_kb = status_kib(pid, "VmRSS");
  REQUIRE(start_kb > 0);
  // Four unauthenticated peers at once: two client handshakes (operation 1)
  // and two direct messages (operation 2, to actor 1: BASP drops one to
  // actor 0 as invalid before sizing anything), each announcing 2^32 - 1
  // payload bytes that never come.
  std::vector<std::unique_ptr<raw_connection>> peers;
  for (uint8_t operation : {1, 2, 1, 2}) {
    peers.push_back(std::make_unique<raw_connection>(port));
    CLUSTER_REQUIRE(peers.back()->connected(), node.proc.get());
    CLUSTER_REQUIRE(peers.back()->send_header(operation, 0xFFFFFFFFu,
                                              operation == 2 ? 1 : 0),
                    node.proc.get());
  }
  // Unguarded, CAF zero-fills 4 GiB per connection at several hundred MB/s:
  // watch the peak for 3 s, and stop at the first sample over the bound.
  uint64_t peak_kb = 0;
  const auto watch_start = clock_type::now();
  while (seconds_since(watch_start) < 3 && peak_kb < start_kb + rss_bound_kb) {
    peak_kb = std::max(peak_kb, status_kib(pid, "VmHWM"));
    std::this_thread::sleep_for(milliseconds{50});
  }
  INFO("node VmRSS at start " << start_kb << " kB, peak " << peak_kb << " kB");
  CLUSTER_REQUIRE(peak_kb < start_kb + rss_bound_kb, node.proc.get());
  for (auto& peer : peers)
    CLUSTER_CHECK(peer->closed_by_peer(notice_timeout), node.proc.get());
  CLUSTER_CHECK(node.proc->wait_for_line(stream::err, "announced a frame of 4294967295 bytes",
                                         notice_timeout),
                node.proc.get());
  // The peers' sockets stay open on this side while a real job runs.
  auto run = run_mnist(dir, "coordinator",
                       {"--nodes=" + node.address, "--replicas-per-node=1", "--epochs=1"},
                       run_timeout);
  INFO(run.description);
  CLUSTER_REQUIRE(run.status.exited, node.proc.get());
  CLUSTER_CHECK(run.status.code == 0, node.proc.get());
  CHECK(records_of(run.metrics, "final").size() == 1);
  CHECK(status_kib(pid, "VmHWM") < start_kb + rss_bound_kb + 512 * 1024);
  CLUSTER_CHECK(node.proc->running(), node.proc.get());
}

TEST_CASE("a node with a --max-frame-size below the model's parameter block refuses the "
          "job at the handshake, saying so, and one above it trains",
          "[cluster][frame_guard]") {
  temp_dir dir{"troupe-cluster"};
  // 784-128relu-10: 101,770 floats, ~407 KB per parameter or gradient block.
  auto small = start_node(dir, "node-small", {"--max-frame-size=262144"});
  auto run = run_mnist(dir, "coordinator-small",
                       {"--nodes=" + small.address, "--replicas-per-node=1", "--epochs=1"},
                       run_timeout);
  {
    INFO(run.description);
    CLUSTER_REQUIRE(run.status.exited, small.proc.get());
    CLUSTER_CHECK(run.status.code != 0, small.proc.get());
    CLUSTER_CHECK(small.proc->wait_for_line(stream::err,
                                            "over this node's --max-frame-size=262144",
                                            notice_timeout),
                  small.proc.get());
    CLUSTER_CHECK(run.err.find("frames of 411176 bytes, over this node's --max-frame-size=262144")
                    != std::string::npos,
                  small.proc.get());
  }
  auto fits = start_node(dir, "node-fits", {"--max-frame-size=1048576"});
  auto ok = run_mnist(dir, "coordinator-fits",
                      {"--nodes=" + fits.address, "--replicas-per-node=1", "--epochs=1"},
                      run_timeout);
  INFO(ok.description);
  CLUSTER_REQUIRE(ok.status.exited, fits.proc.get());
  CLUSTER_CHECK(ok.status.code == 0, fits.proc.get());
  CLUSTER_CHECK(fits.proc->err().find("--max-frame-size") == std::string::npos,
                fits.proc.get());
}

TEST_CASE("a node refuses a --max-frame-size out of range at start-up",
          "[cluster][frame_guard]") {
  temp_dir dir{"troupe-cluster"};
  for (const char* value : {"1000", "4294967296"}) {
    process node{{node_binary(), "--port=0", std::string{"--max-frame-size="} + value},
                 dir.path(), std::string{"node-"} + value};
    const auto status = node.wait(exit_timeout);
    INFO(to_string(status));
    CLUSTER_REQUIRE(status.exited, &node);
    CLUSTER_CHECK(status.code == 2, &node);
    CLUSTER_CHECK(node.err().find(std::string{"--max-frame-size="} + value + " is out of range")
                    != std::string::npos,
                  &node);
  }
}

TEST_CASE("a node listens on its published port only, and a coordinator on none",
          "[cluster][frame_guard]") {
  temp_dir dir{"troupe-cluster"};
  auto node = start_node(dir, "node");
  // CAF's automatic connections would add an unguarded port on every
  // interface, in plaintext even in a TLS process.
  const auto ports = listening_ports(node.proc->pid());
  INFO("node listening on " << to_text(ports));
  CLUSTER_CHECK(ports == std::set<uint16_t>{port_of(node.address)}, node.proc.get());
  process coordinator{mnist_command({"--nodes=" + node.address, "--epochs=20",
                                     "--batch-size=8"}),
                      dir.path(), "coordinator"};
  CLUSTER_REQUIRE(coordinator.wait_for_line(stream::out, "Epoch 1/20", line_timeout),
                  &coordinator, node.proc.get());
  const auto coordinator_ports = listening_ports(coordinator.pid());
  INFO("coordinator listening on " << to_text(coordinator_ports));
  CLUSTER_CHECK(coordinator_ports.empty(), &coordinator);
  coordinator.send(SIGKILL);
  coordinator.wait(exit_timeout);
}
