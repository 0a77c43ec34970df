// The wire fuzzer: a recorded job's streams, mutated under a seed (bit flips,
// inserted and deleted bytes, truncation, BASP length and header fields set
// to edge values, varbyte counts inside payloads, duplicated frames and
// streams, streams cut and held open), replayed into a real node and from a
// fake node into real coordinators. Every mutation is a pure function of the
// stream, the seed and its index, so a failure replays.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "tests/wire/recording.hpp"

namespace troupe::cluster_test {
class temp_dir;
}

namespace troupe::wire_test {

/// One mutated stream and what was done to it.
struct mutation {
  std::string description;
  bytes stream;
  bool hold_open = false; // the peer stops sending but keeps the connection open
};

/// Returns the `index`-th mutation of `stream` under `seed`.
mutation mutate(const bytes& stream, uint64_t seed, uint64_t index);

/// What a campaign does.
struct fuzz_settings {
  uint64_t seed = 1;
  size_t node_connections = 80;
  size_t coordinator_runs = 20;
  std::string save_dir;                    // where failing streams go ("": nowhere)
  // How long a held connection may stay open: the stall bound and CAF's
  // connection timeout, with room for a loaded machine.
  std::chrono::milliseconds hold{10000};
  uint64_t node_max_frame_size = 1 << 20;  // the node's --max-frame-size
  std::function<void(const std::string&)> progress = {};
};

/// One mutated connection that crashed, hung or swelled a process.
struct fuzz_failure {
  std::string target;      // "node" or "coordinator"
  uint64_t index = 0;      // the mutation's index under the seed
  std::string mutation;    // its description
  std::string what;        // what went wrong
  std::string saved;       // the stream's file, when saved
};

/// What a campaign saw.
struct fuzz_report {
  std::vector<fuzz_failure> failures;
  size_t node_connections = 0;
  size_t coordinator_runs = 0;
  uint64_t node_start_kib = 0;
  uint64_t node_peak_kib = 0;
  uint64_t node_bound_kib = 0;
  uint64_t coordinator_peak_kib = 0;
  uint64_t coordinator_bound_kib = 0;
  bool node_trained_after = false;
  double seconds = 0;
};

/// Replays settings.node_connections mutations of the job's coordinator
/// stream into one node, then has it train a real job; the node must not die,
/// stop answering, keep a stalled connection open, or exceed its memory
/// bound: its start, twice the recorded job's cost (a replayed job may still
/// end while the next starts), its allocator's slack, one frame and the
/// longest stream.
void fuzz_node(const cluster_test::temp_dir& dir, const recorded_job& job,
               const fuzz_settings& settings, fuzz_report& report);

/// Runs settings.coordinator_runs coordinators against a fake node that
/// answers with a mutation of the job's node stream; each must end by itself
/// with an exit status (an error is fine), within its bound and memory.
void fuzz_coordinators(const cluster_test::temp_dir& dir, const recorded_job& job,
                       const fuzz_settings& settings, fuzz_report& report);

/// Sends the stream saved in `file` to a fresh node ("node") or from a fake
/// node to a fresh coordinator ("coordinator"); returns what went wrong, or
/// "" if the process survived it.
std::string replay_saved(const cluster_test::temp_dir& dir, const std::string& target,
                         const std::string& file);

/// Writes `m`'s stream to save_dir (created if needed); returns its path.
std::string save_mutation(const std::string& save_dir, const std::string& target,
                          uint64_t seed, uint64_t index, const mutation& m);

} // namespace troupe::wire_test
