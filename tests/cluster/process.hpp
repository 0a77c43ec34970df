// Child processes for the cluster tests: start a program with its stdout and
// stderr in files, wait for a line or an exit with a deadline, send signals;
// whatever is still running when a process object dies is killed and reaped.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace troupe::cluster_test {

using std::chrono::milliseconds;
using clock_type = std::chrono::steady_clock;

/// Makes a fresh directory under $TMPDIR (or /tmp) and removes it with its
/// contents on destruction.
class temp_dir {
public:
  explicit temp_dir(const std::string& prefix);
  ~temp_dir();
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;

  const std::string& path() const { return path_; }
  /// Returns path() + "/" + name.
  std::string file(const std::string& name) const { return path_ + "/" + name; }

private:
  std::string path_;
};

/// Tells how a child ended (or that wait() gave up and killed it).
struct exit_status {
  bool timed_out = false; // still running at the deadline: wait() SIGKILLed it
  bool exited = false;    // ended by exit(): `code` holds its status
  int code = -1;
  int signal = 0;         // the signal that ended it, if one did
  double seconds = 0;     // time wait() spent
};

/// Renders a status for messages: "exit 1 after 0.2 s", "signal 9 (timed out)".
std::string to_string(const exit_status& status);

enum class stream { out, err };

/// Owns one child process. The child gets its own process group, dies with
/// the test process (PR_SET_PDEATHSIG) and is SIGKILLed and reaped by the
/// destructor, so no failed REQUIRE leaks it.
class process {
public:
  /// Starts argv (argv[0] is a path, or a name looked up in PATH) with stdout
  /// in `dir`/`name`.out and stderr in `dir`/`name`.err; throws on failure.
  process(std::vector<std::string> argv, const std::string& dir, std::string name);
  ~process();
  process(const process&) = delete;
  process& operator=(const process&) = delete;

  pid_t pid() const { return pid_; }
  const std::string& name() const { return name_; }

  /// Returns the first complete line of the stream that contains `text`,
  /// waiting at most `timeout`; nothing if it did not come in time or the
  /// process ended without printing it.
  std::optional<std::string> wait_for_line(stream which, const std::string& text,
                                           milliseconds timeout);

  /// Returns everything the process wrote to the stream so far.
  std::string text(stream which) const;
  std::string out() const { return text(stream::out); }
  std::string err() const { return text(stream::err); }

  /// Sends `signal` to the process (not to its group: `ip netns exec` execs).
  void send(int signal);

  /// Tells whether the process is still running (reaping it if it ended).
  bool running();

  /// Waits at most `timeout` for the process to end; at the deadline it is
  /// SIGKILLed and reaped, and the status says timed_out.
  exit_status wait(milliseconds timeout);

  /// Describes the process for failure messages: command, state, and the
  /// tails of its stdout and stderr.
  std::string describe() const;

private:
  bool reap(bool block);

  std::vector<std::string> argv_;
  std::string name_;
  std::string out_path_;
  std::string err_path_;
  pid_t pid_ = -1;
  bool reaped_ = false;
  int raw_status_ = 0;
};

/// Returns the absolute paths the build passes in.
std::string node_binary();
std::string mnist_binary();
std::string data_dir();
std::string source_dir();

/// A node program started on port 0, with the address it printed.
struct node_process {
  std::unique_ptr<process> proc;
  std::string address; // HOST:PORT from "troupe node listening on HOST:PORT (...)"
  std::string banner;  // that whole line
};

/// Starts `prefix... node --port=0 extra...` and waits (bounded) for its
/// listening line; throws with the node's output if it does not come.
node_process start_node(const temp_dir& dir, const std::string& name,
                        std::vector<std::string> extra = {},
                        std::vector<std::string> prefix = {});

/// Returns `prefix... mnist --data-dir=<test data> args...`.
std::vector<std::string> mnist_command(std::vector<std::string> args,
                                       std::vector<std::string> prefix = {});

/// A finished coordinator run.
struct run_result {
  exit_status status;
  std::string out;
  std::string err;
  std::vector<nlohmann::json> metrics; // from --metrics=<dir>/<name>.jsonl
  std::string description;             // process::describe() at the end
};

/// Runs `prefix... mnist --data-dir=... --metrics=<dir>/<name>.jsonl args...`
/// to its end, killing it at `timeout`.
run_result run_mnist(const temp_dir& dir, const std::string& name,
                     std::vector<std::string> args, milliseconds timeout,
                     std::vector<std::string> prefix = {});

/// Reads a JSON-lines metrics file (missing file: no records).
std::vector<nlohmann::json> read_metrics(const std::string& path);

/// Returns the records whose "record" field is `kind` ("epoch", "final").
std::vector<nlohmann::json> records_of(const std::vector<nlohmann::json>& records,
                                       const std::string& kind);

/// Holds a TCP port on 127.0.0.1 bound but never listening: a connect to it
/// is refused, and no other program can take the port while this lives.
class refused_port {
public:
  refused_port();
  ~refused_port();
  refused_port(const refused_port&) = delete;
  refused_port& operator=(const refused_port&) = delete;

  uint16_t port() const { return port_; }

private:
  int fd_ = -1;
  uint16_t port_ = 0;
};

/// Returns a "VmRSS"- or "VmHWM"-style field of /proc/<pid>/status in KiB
/// (0 if the process or the field is gone).
uint64_t status_kib(pid_t pid, const std::string& field);

/// Returns the port of a "HOST:PORT" address.
uint16_t port_of(const std::string& address);

/// Returns the seconds elapsed since `start`.
double seconds_since(clock_type::time_point start);

} // namespace troupe::cluster_test
