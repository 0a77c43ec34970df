// Child processes for the cluster tests (see process.hpp).
#include "tests/cluster/process.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace troupe::cluster_test {

namespace {

constexpr milliseconds poll_interval{5};
constexpr milliseconds node_start_timeout{15000};

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

std::string tail(const std::string& text, size_t max_chars) {
  if (text.size() <= max_chars)
    return text;
  return "..." + text.substr(text.size() - max_chars);
}

std::string join(const std::vector<std::string>& words) {
  std::string result;
  for (const auto& word : words)
    result += (result.empty() ? "" : " ") + word;
  return result;
}

} // namespace

// -- temp_dir -----------------------------------------------------------------

temp_dir::temp_dir(const std::string& prefix) {
  const char* base = std::getenv("TMPDIR");
  std::string pattern = std::string(base != nullptr && *base != '\0' ? base : "/tmp") + "/"
                        + prefix + "-XXXXXX";
  std::vector<char> buffer(pattern.begin(), pattern.end());
  buffer.push_back('\0');
  if (mkdtemp(buffer.data()) == nullptr)
    throw std::runtime_error("mkdtemp " + pattern + ": " + std::strerror(errno));
  path_ = buffer.data();
}

temp_dir::~temp_dir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

// -- exit_status --------------------------------------------------------------

std::string to_string(const exit_status& status) {
  std::ostringstream out;
  if (status.exited)
    out << "exit " << status.code;
  else if (status.signal != 0)
    out << "signal " << status.signal;
  else
    out << "unknown";
  if (status.timed_out)
    out << " (timed out: killed)";
  out << " after " << status.seconds << " s";
  return out.str();
}

// -- process ------------------------------------------------------------------

process::process(std::vector<std::string> argv, const std::string& dir, std::string name)
  : argv_(std::move(argv)),
    name_(std::move(name)),
    out_path_(dir + "/" + name_ + ".out"),
    err_path_(dir + "/" + name_ + ".err") {
  if (argv_.empty())
    throw std::invalid_argument("process: empty command");
  // Everything the child needs is made before fork: after it, only
  // async-signal-safe calls.
  std::vector<char*> args;
  for (auto& arg : argv_)
    args.push_back(arg.data());
  args.push_back(nullptr);
  const int out_fd = ::open(out_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  const int err_fd = ::open(err_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  const int null_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  int report[2] = {-1, -1}; // the child writes errno here if exec fails
  if (out_fd < 0 || err_fd < 0 || null_fd < 0 || ::pipe2(report, O_CLOEXEC) != 0) {
    const auto why = std::string(std::strerror(errno));
    for (int fd : {out_fd, err_fd, null_fd, report[0], report[1]})
      if (fd >= 0)
        ::close(fd);
    throw std::runtime_error("process " + name_ + ": cannot open its files in " + dir + ": "
                             + why);
  }
  const pid_t parent = ::getpid();
  pid_ = ::fork();
  if (pid_ == 0) {
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent)
      ::_exit(127); // the test process is already gone
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::dup2(null_fd, STDIN_FILENO);
    ::dup2(out_fd, STDOUT_FILENO);
    ::dup2(err_fd, STDERR_FILENO);
    ::execvp(args[0], args.data());
    const int error = errno;
    (void) !::write(report[1], &error, sizeof error);
    ::_exit(127);
  }
  const int fork_errno = errno;
  for (int fd : {out_fd, err_fd, null_fd, report[1]})
    ::close(fd);
  if (pid_ < 0) {
    ::close(report[0]);
    throw std::runtime_error("process " + name_ + ": fork failed: "
                             + std::strerror(fork_errno));
  }
  int exec_errno = 0;
  ssize_t got;
  do
    got = ::read(report[0], &exec_errno, sizeof exec_errno);
  while (got < 0 && errno == EINTR);
  ::close(report[0]);
  if (got > 0) {
    reap(true);
    throw std::runtime_error("process " + name_ + ": cannot run " + argv_[0] + ": "
                             + std::strerror(exec_errno));
  }
}

process::~process() {
  if (pid_ > 0 && !reaped_) {
    ::kill(pid_, SIGKILL); // works on a stopped (SIGSTOP) process too
    reap(true);
  }
}

bool process::reap(bool block) {
  if (reaped_)
    return true;
  for (;;) {
    int status = 0;
    const pid_t got = ::waitpid(pid_, &status, block ? 0 : WNOHANG);
    if (got == pid_) {
      reaped_ = true;
      raw_status_ = status;
      return true;
    }
    if (got == 0)
      return false;
    if (errno == EINTR)
      continue;
    reaped_ = true; // ECHILD: nothing left to wait for
    return true;
  }
}

std::string process::text(stream which) const {
  return read_file(which == stream::out ? out_path_ : err_path_);
}

std::optional<std::string> process::wait_for_line(stream which, const std::string& text_part,
                                                  milliseconds timeout) {
  const auto deadline = clock_type::now() + timeout;
  for (;;) {
    // Read before checking for an exit, so that a last line is never missed.
    const bool ended = !running();
    const auto content = text(which);
    size_t begin = 0;
    for (size_t end; (end = content.find('\n', begin)) != std::string::npos; begin = end + 1) {
      auto line = content.substr(begin, end - begin);
      if (line.find(text_part) != std::string::npos)
        return line;
    }
    if (ended || clock_type::now() >= deadline)
      return std::nullopt;
    std::this_thread::sleep_for(poll_interval);
  }
}

void process::send(int signal) {
  if (pid_ > 0 && !reaped_)
    ::kill(pid_, signal);
}

bool process::running() {
  return !reap(false);
}

exit_status process::wait(milliseconds timeout) {
  const auto start = clock_type::now();
  const auto deadline = start + timeout;
  exit_status status;
  while (!reap(false)) {
    if (clock_type::now() >= deadline) {
      status.timed_out = true;
      ::kill(pid_, SIGKILL);
      reap(true);
      break;
    }
    std::this_thread::sleep_for(poll_interval);
  }
  status.seconds = seconds_since(start);
  if (WIFEXITED(raw_status_)) {
    status.exited = true;
    status.code = WEXITSTATUS(raw_status_);
  } else if (WIFSIGNALED(raw_status_)) {
    status.signal = WTERMSIG(raw_status_);
  }
  return status;
}

std::string process::describe() const {
  std::ostringstream out;
  out << "process " << name_ << " (pid " << pid_ << ", " << (reaped_ ? "ended" : "running")
      << "): " << join(argv_) << "\n--- stdout:\n"
      << tail(text(stream::out), 3000) << "\n--- stderr:\n"
      << tail(text(stream::err), 3000) << "\n---";
  return out.str();
}

// -- programs -------------------------------------------------------------------

std::string node_binary() {
  return TROUPE_NODE_BINARY;
}

std::string mnist_binary() {
  return TROUPE_MNIST_BINARY;
}

std::string data_dir() {
  return std::filesystem::absolute(TROUPE_TEST_DATA_DIR).string();
}

std::string source_dir() {
  return TROUPE_SOURCE_DIR;
}

node_process start_node(const temp_dir& dir, const std::string& name,
                        std::vector<std::string> extra, std::vector<std::string> prefix) {
  auto argv = std::move(prefix);
  argv.push_back(node_binary());
  argv.push_back("--port=0");
  for (auto& arg : extra)
    argv.push_back(std::move(arg));
  node_process node;
  node.proc = std::make_unique<process>(std::move(argv), dir.path(), name);
  auto line = node.proc->wait_for_line(stream::out, "troupe node listening on ",
                                       node_start_timeout);
  static const std::regex listening{R"(troupe node listening on (\S+:[0-9]+) \(.*\))"};
  std::smatch match;
  if (!line || !std::regex_search(*line, match, listening))
    throw std::runtime_error("node " + name + " did not print its address:\n"
                             + node.proc->describe());
  node.address = match[1];
  node.banner = *line;
  return node;
}

std::vector<std::string> mnist_command(std::vector<std::string> args,
                                       std::vector<std::string> prefix) {
  auto argv = std::move(prefix);
  argv.push_back(mnist_binary());
  argv.push_back("--data-dir=" + data_dir());
  for (auto& arg : args)
    argv.push_back(std::move(arg));
  return argv;
}

run_result run_mnist(const temp_dir& dir, const std::string& name,
                     std::vector<std::string> args, milliseconds timeout,
                     std::vector<std::string> prefix) {
  const auto metrics_path = dir.file(name + ".jsonl");
  args.push_back("--metrics=" + metrics_path);
  process coordinator{mnist_command(std::move(args), std::move(prefix)), dir.path(), name};
  run_result result;
  result.status = coordinator.wait(timeout);
  result.out = coordinator.out();
  result.err = coordinator.err();
  result.metrics = read_metrics(metrics_path);
  result.description = coordinator.describe() + "\n" + to_string(result.status);
  return result;
}

std::vector<nlohmann::json> read_metrics(const std::string& path) {
  std::vector<nlohmann::json> records;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);)
    if (auto record = nlohmann::json::parse(line, nullptr, false); !record.is_discarded())
      records.push_back(std::move(record)); // a torn last line of a killed run is skipped
  return records;
}

std::vector<nlohmann::json> records_of(const std::vector<nlohmann::json>& records,
                                       const std::string& kind) {
  std::vector<nlohmann::json> result;
  for (const auto& record : records)
    if (record.value("record", "") == kind)
      result.push_back(record);
  return result;
}

refused_port::refused_port() {
  fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd_ < 0)
    throw std::runtime_error(std::string("socket: ") + std::strerror(errno));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  socklen_t length = sizeof address;
  if (::bind(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0
      || ::getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    const auto why = std::string(std::strerror(errno));
    ::close(fd_);
    throw std::runtime_error("bind 127.0.0.1:0: " + why);
  }
  port_ = ntohs(address.sin_port);
}

refused_port::~refused_port() {
  ::close(fd_);
}

double seconds_since(clock_type::time_point start) {
  return std::chrono::duration<double>(clock_type::now() - start).count();
}

uint64_t status_kib(pid_t pid, const std::string& field) {
  std::ifstream in{"/proc/" + std::to_string(pid) + "/status"};
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(field + ":", 0) == 0)
      return std::stoull(line.substr(field.size() + 1));
  return 0;
}

uint16_t port_of(const std::string& address) {
  return static_cast<uint16_t>(std::stoul(address.substr(address.rfind(':') + 1)));
}

} // namespace troupe::cluster_test
