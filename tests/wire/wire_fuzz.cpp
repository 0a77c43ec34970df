// The fuzzer's campaigns: mutated streams into a real node, and from a fake
// node into real coordinators.
#include "tests/wire/wire_fuzz.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <thread>

#include "tests/cluster/process.hpp"
#include "tests/wire/raw_socket.hpp"

namespace troupe::wire_test {

namespace {

using namespace cluster_test;

constexpr milliseconds send_timeout{10000};
constexpr milliseconds coordinator_bound{40000}; // a coordinator ends by itself within this
constexpr const char* coordinator_step_timeout = "--step-timeout=10000";
// What a process's allocator may keep between the jobs the replays start
// (each thread's malloc arena), beside the jobs themselves.
constexpr uint64_t allocator_slack_kib = 16 * 1024;

std::string describe_end(const exit_status& status) {
  if (status.timed_out)
    return "did not end within " + std::to_string(coordinator_bound.count()) + " ms (hung)";
  if (!status.exited)
    return "died by signal " + std::to_string(status.signal);
  return "";
}

std::string node_args_frame(const fuzz_settings& settings) {
  return "--max-frame-size=" + std::to_string(settings.node_max_frame_size);
}

// A node answers a fresh connection with its server handshake at once:
// its I/O loop is alive.
bool node_answers(const node_process& node) {
  auto socket = raw_socket::connect_to(port_of(node.address));
  return socket.connected() && socket.read_some(32, milliseconds{3000}).size() >= 32;
}

// Sends one mutation into the node and closes, or holds it open until the
// node closes it; returns what went wrong ("" if nothing).
std::string send_to_node(const node_process& node, const mutation& m, milliseconds hold) {
  auto socket = raw_socket::connect_to(port_of(node.address));
  if (!socket.connected())
    return "the node refused the connection";
  socket.send_all(m.stream, send_timeout);
  if (m.hold_open) {
    if (!socket.closed_by_peer(hold))
      return "the node kept a stalled connection open for " + std::to_string(hold.count())
             + " ms";
  } else {
    socket.read_some(1 << 20, milliseconds{20});
  }
  return "";
}

// Plays the fake node for one coordinator; returns what went wrong.
std::string run_coordinator(const temp_dir& dir, const std::string& name, const mutation& m,
                            milliseconds hold, uint64_t bound_kib, uint64_t& peak_kib) {
  raw_listener fake_node;
  process coordinator{mnist_command({"--nodes=127.0.0.1:" + std::to_string(fake_node.port()),
                                     "--epochs=1", coordinator_step_timeout}),
                      dir.path(), name};
  auto socket = fake_node.accept(milliseconds{15000});
  if (socket.connected()) {
    socket.send_all(m.stream, send_timeout);
    if (m.hold_open)
      socket.closed_by_peer(hold);
    socket.close();
  }
  const auto start = clock_type::now();
  uint64_t peak = 0;
  while (coordinator.running() && clock_type::now() - start < coordinator_bound) {
    peak = std::max(peak, status_kib(coordinator.pid(), "VmHWM"));
    fake_node.accept(milliseconds{20}); // a retried connect: closed at once
  }
  const auto status = coordinator.wait(milliseconds{1000});
  peak_kib = std::max(peak_kib, peak);
  auto ended = describe_end(status);
  if (!ended.empty())
    return "the coordinator " + ended + "\n" + coordinator.describe();
  if (peak > bound_kib)
    return "the coordinator's memory peaked at " + std::to_string(peak) + " KiB, over "
           + std::to_string(bound_kib) + " KiB";
  return "";
}

void fail(fuzz_report& report, const fuzz_settings& settings, const std::string& target,
          uint64_t index, const mutation& m, std::string what) {
  fuzz_failure failure{target, index, m.description, std::move(what), ""};
  if (!settings.save_dir.empty())
    failure.saved = save_mutation(settings.save_dir, target, settings.seed, index, m);
  if (settings.progress)
    settings.progress("FAILED " + target + " #" + std::to_string(index) + " (" + m.description
                      + "): " + failure.what);
  report.failures.push_back(std::move(failure));
}

} // namespace

void fuzz_node(const temp_dir& dir, const recorded_job& job, const fuzz_settings& settings,
               fuzz_report& report) {
  const auto start = clock_type::now();
  auto node = start_node(dir, "fuzzed-node", {node_args_frame(settings)});
  report.node_start_kib = status_kib(node.proc->pid(), "VmRSS");
  size_t longest = 0;
  int restarts = 0;
  for (size_t i = 0; i < settings.node_connections; ++i) {
    const auto m = mutate(job.coordinator_to_node.to_server, settings.seed, i);
    longest = std::max(longest, m.stream.size());
    report.node_bound_kib = report.node_start_kib + 2 * job.node_job_kib + allocator_slack_kib
                            + (settings.node_max_frame_size + longest) / 1024;
    auto what = send_to_node(node, m, settings.hold);
    if (what.empty() && !node.proc->running())
      what = "the node died: " + to_string(node.proc->wait(milliseconds{1000}));
    if (what.empty() && i % 10 == 9 && !node_answers(node))
      what = "the node stopped answering new connections";
    const auto peak = status_kib(node.proc->pid(), "VmHWM");
    report.node_peak_kib = std::max(report.node_peak_kib, peak);
    if (what.empty() && peak > report.node_bound_kib)
      what = "the node's memory peaked at " + std::to_string(peak) + " KiB, over "
             + std::to_string(report.node_bound_kib) + " KiB";
    ++report.node_connections;
    if (!what.empty()) {
      fail(report, settings, "node", i, m, what + "\n" + node.proc->describe());
      node = start_node(dir, "fuzzed-node-" + std::to_string(++restarts),
                        {node_args_frame(settings)});
    } else if (settings.progress && i % 20 == 19) {
      settings.progress("node: " + std::to_string(i + 1) + " connections");
    }
  }
  auto run = run_mnist(dir, "after-fuzz", {"--nodes=" + node.address, "--epochs=1"},
                       milliseconds{60000});
  report.node_trained_after = run.status.exited && run.status.code == 0 && node.proc->running();
  report.seconds += std::chrono::duration<double>(clock_type::now() - start).count();
}

void fuzz_coordinators(const temp_dir& dir, const recorded_job& job,
                       const fuzz_settings& settings, fuzz_report& report) {
  const auto start = clock_type::now();
  for (size_t j = 0; j < settings.coordinator_runs; ++j) {
    // Indices after the node's, so the two campaigns never share a mutation.
    const uint64_t index = settings.node_connections + j;
    const auto m = mutate(job.coordinator_to_node.to_client, settings.seed, index);
    report.coordinator_bound_kib =
      std::max(report.coordinator_bound_kib,
               job.coordinator_peak_kib + (uint64_t{64} << 10) + m.stream.size() / 1024);
    auto what = run_coordinator(dir, "fuzzed-coordinator-" + std::to_string(j), m, settings.hold,
                                report.coordinator_bound_kib, report.coordinator_peak_kib);
    ++report.coordinator_runs;
    if (!what.empty())
      fail(report, settings, "coordinator", index, m, what);
    else if (settings.progress && j % 10 == 9)
      settings.progress("coordinator: " + std::to_string(j + 1) + " runs");
  }
  report.seconds += std::chrono::duration<double>(clock_type::now() - start).count();
}

std::string save_mutation(const std::string& save_dir, const std::string& target, uint64_t seed,
                          uint64_t index, const mutation& m) {
  ::mkdir(save_dir.c_str(), 0755);
  const auto base = save_dir + "/" + target + "-seed" + std::to_string(seed) + "-"
                    + std::to_string(index);
  std::ofstream{base + ".bin", std::ios::binary}.write(m.stream.data(),
                                                      static_cast<long>(m.stream.size()));
  std::ofstream{base + ".txt"} << (m.hold_open ? "hold\n" : "close\n") << m.description << "\n";
  return base + ".bin";
}

std::string replay_saved(const temp_dir& dir, const std::string& target, const std::string& file) {
  std::ifstream in{file, std::ios::binary};
  if (!in)
    return "cannot read " + file;
  mutation m;
  m.stream.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  const auto txt = file.substr(0, file.rfind('.')) + ".txt";
  std::ifstream notes{txt};
  std::string mode;
  std::getline(notes, mode);
  m.hold_open = mode == "hold";
  m.description = "saved " + file;
  const milliseconds hold{5000};
  if (target == "coordinator") {
    uint64_t peak = 0;
    return run_coordinator(dir, "replayed-coordinator", m, hold, uint64_t{1} << 30, peak);
  }
  auto node = start_node(dir, "replayed-node");
  auto what = send_to_node(node, m, hold);
  std::this_thread::sleep_for(milliseconds{500});
  if (what.empty() && !node.proc->running())
    what = "the node died: " + to_string(node.proc->wait(milliseconds{1000}));
  if (what.empty() && !node_answers(node))
    what = "the node stopped answering new connections";
  return what;
}

} // namespace troupe::wire_test
