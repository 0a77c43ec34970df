// The recording proxy and a recorded job.
#include "tests/wire/recording.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <memory>
#include <stdexcept>

#include "tests/cluster/process.hpp"
#include "tests/wire/raw_socket.hpp"

namespace troupe::wire_test {

namespace {

// Writes all of `data` to a blocking socket; false if it closed.
bool write_all(int fd, const char* data, size_t size) {
  while (size > 0) {
    const auto n = ::send(fd, data, size, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    data += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

} // namespace

// One proxied connection: the accepted client and the connection to the target.
struct recording_proxy::link {
  int client = -1;
  int server = -1;
  recorded_connection bytes_seen;

  ~link() {
    if (client >= 0)
      ::close(client);
    if (server >= 0)
      ::close(server);
  }

  // Moves what is readable on `from` to `to`, keeping a copy; false once
  // either side closed.
  bool pass(int from, int to, bytes& keep) {
    char buffer[65536];
    const auto got = ::recv(from, buffer, sizeof(buffer), 0);
    if (got <= 0)
      return false;
    keep.insert(keep.end(), buffer, buffer + got);
    return write_all(to, buffer, static_cast<size_t>(got));
  }
};

recording_proxy::recording_proxy(uint16_t target_port)
  : target_port_(target_port), listener_(std::make_unique<raw_listener>()) {
  thread_ = std::thread([this] { run(); });
}

uint16_t recording_proxy::port() const {
  return listener_->port();
}

recording_proxy::~recording_proxy() {
  stop();
}

std::vector<recorded_connection> recording_proxy::stop() {
  stopping_ = true;
  if (thread_.joinable())
    thread_.join();
  std::lock_guard<std::mutex> lock{mutex_};
  return done_;
}

void recording_proxy::run() {
  std::vector<std::unique_ptr<link>> links;
  auto finish = [&](size_t i) {
    std::lock_guard<std::mutex> lock{mutex_};
    done_.push_back(std::move(links[i]->bytes_seen));
    links.erase(links.begin() + static_cast<long>(i));
  };
  while (!stopping_) {
    std::vector<pollfd> polled{{listener_->fd(), POLLIN, 0}};
    for (const auto& l : links) {
      polled.push_back({l->client, POLLIN, 0});
      polled.push_back({l->server, POLLIN, 0});
    }
    if (::poll(polled.data(), polled.size(), 50) <= 0)
      continue;
    for (size_t i = links.size(); i-- > 0;) {
      auto& l = *links[i];
      const auto& from_client = polled[1 + 2 * i];
      const auto& from_server = polled[2 + 2 * i];
      bool open = true;
      if (from_client.revents != 0)
        open = l.pass(l.client, l.server, l.bytes_seen.to_server);
      if (open && from_server.revents != 0)
        open = l.pass(l.server, l.client, l.bytes_seen.to_client);
      if (!open)
        finish(i);
    }
    if ((polled[0].revents & POLLIN) != 0) {
      auto l = std::make_unique<link>();
      l->client = listener_->accept(milliseconds{0}).release();
      l->server = raw_socket::connect_to(target_port_).release();
      if (l->client >= 0 && l->server >= 0)
        links.push_back(std::move(l));
    }
  }
  while (!links.empty())
    finish(links.size() - 1);
}

recorded_job record_job(const cluster_test::temp_dir& dir) {
  using namespace cluster_test;
  auto node = start_node(dir, "recorded-node");
  const auto pid = node.proc->pid();
  const auto node_start_kib = status_kib(pid, "VmRSS");
  recording_proxy proxy{port_of(node.address)};
  const auto via = "127.0.0.1:" + std::to_string(proxy.port());
  process coordinator{mnist_command({"--nodes=" + via, "--epochs=1", "--batch-size=64"}),
                      dir.path(), "recorded-coordinator"};
  recorded_job job;
  while (coordinator.running()) {
    job.coordinator_peak_kib =
      std::max(job.coordinator_peak_kib, status_kib(coordinator.pid(), "VmHWM"));
    std::this_thread::sleep_for(milliseconds{20});
  }
  const auto status = coordinator.wait(milliseconds{60000});
  if (!status.exited || status.code != 0)
    throw std::runtime_error("the job to record failed: " + coordinator.describe());
  job.node_job_kib = status_kib(pid, "VmHWM") - node_start_kib;
  auto connections = proxy.stop();
  for (auto& connection : connections)
    if (connection.to_server.size() + connection.to_client.size()
        > job.coordinator_to_node.to_server.size() + job.coordinator_to_node.to_client.size())
      job.coordinator_to_node = std::move(connection);
  if (job.coordinator_to_node.to_server.empty())
    throw std::runtime_error("the job's connection recorded nothing");
  return job;
}

} // namespace troupe::wire_test
