// Writing the Chrome trace-event file.
#include "actors/report/trace_file.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>

#include <nlohmann/json.hpp>

#include "messages/errors.hpp"

namespace troupe::detail {

namespace {

constexpr int coordinator_track = 0;

int replica_track(uint32_t replica) {
  return 1 + static_cast<int>(replica);
}

int shard_track(uint32_t shard) {
  return 1001 + static_cast<int>(shard);
}

nlohmann::json track_name(int tid, const std::string& name) {
  return {{"name", "thread_name"}, {"ph", "M"}, {"pid", 1}, {"tid", tid},
          {"args", {{"name", name}}}};
}

} // namespace

caf::expected<std::unique_ptr<trace_file>> trace_file::open(const std::string& path,
                                                            uint32_t replicas, uint32_t shards,
                                                            int64_t run_start_ns) {
  std::FILE* file = std::fopen(path.c_str(), "w");
  if (file == nullptr)
    return make_troupe_error(troupe_errc::bad_config,
                             "--trace: cannot write " + path + ": " + std::strerror(errno));
  std::unique_ptr<trace_file> trace{new trace_file(file, run_start_ns)};
  std::fputs("{\"traceEvents\":[\n", file);
  trace->write_event(track_name(coordinator_track, "coordinator").dump());
  for (uint32_t i = 0; i < replicas; ++i)
    trace->write_event(track_name(replica_track(i), "replica " + std::to_string(i)).dump());
  for (uint32_t k = 0; k < shards; ++k)
    trace->write_event(track_name(shard_track(k), "store shard " + std::to_string(k)).dump());
  return trace;
}

trace_file::trace_file(std::FILE* file, int64_t run_start_ns)
  : file_(file), run_start_ns_(run_start_ns) {
}

trace_file::~trace_file() {
  if (file_ != nullptr)
    close(0);
}

double trace_file::micros(int64_t ns) const {
  return static_cast<double>(ns - run_start_ns_) / 1e3;
}

void trace_file::write_event(const std::string& json) {
  if (file_ == nullptr)
    return;
  if (!first_)
    std::fputs(",\n", file_);
  first_ = false;
  std::fputs(json.c_str(), file_);
}

namespace {

const char* replica_span_name(uint8_t kind) {
  switch (static_cast<trace_kind>(kind)) {
  case trace_kind::compute: return "compute";
  case trace_kind::gather: return "gather";
  case trace_kind::join: return "join";
  case trace_kind::send: return "send";
  default: return "wait";
  }
}

} // namespace

void trace_file::add_replica_spans(uint32_t replica, const std::vector<trace_span>& spans,
                                   int64_t offset_ns) {
  // A round is its compute and then its wait; the gathering of its samples
  // lies in the wait of the round before, where it shows inside that
  // round's span. Spans come in time order.
  std::map<uint64_t, std::vector<const trace_span*>> rounds;
  for (const auto& span : spans)
    rounds[span.round].push_back(&span);
  const auto gathered = [](const trace_span* part) {
    return part->kind == static_cast<uint8_t>(trace_kind::gather);
  };
  for (const auto& [round, parts] : rounds) {
    int64_t from = INT64_MAX;
    int64_t to = INT64_MIN;
    for (const auto* part : parts)
      if (!gathered(part)) {
        from = std::min(from, part->start_ns);
        to = std::max(to, part->start_ns + part->duration_ns);
      }
    if (from > to) // only its gathering: the epoch ended before its compute
      from = to = parts.front()->start_ns;
    const int tid = replica_track(replica);
    write_event(nlohmann::json{{"name", "round " + std::to_string(round)}, {"cat", "round"},
                               {"ph", "X"}, {"pid", 1}, {"tid", tid},
                               {"ts", micros(from + offset_ns)}, {"dur", (to - from) / 1e3},
                               {"args", {{"round", round}}}}
                  .dump());
    for (const auto* part : parts)
      write_event(
        nlohmann::json{
          {"name", replica_span_name(part->kind)},
          {"cat", "replica"}, {"ph", "X"}, {"pid", 1}, {"tid", tid},
          {"ts", micros(part->start_ns + offset_ns)}, {"dur", part->duration_ns / 1e3},
          {"args", {{"round", round}}}}
          .dump());
  }
}

void trace_file::add_shard_spans(uint32_t shard, const std::vector<trace_span>& spans,
                                 int64_t offset_ns) {
  for (const auto& span : spans)
    write_event(nlohmann::json{{"name", "step " + std::to_string(span.round)}, {"cat", "store"},
                               {"ph", "X"}, {"pid", 1}, {"tid", shard_track(shard)},
                               {"ts", micros(span.start_ns + offset_ns)},
                               {"dur", span.duration_ns / 1e3},
                               {"args", {{"round", span.round}}}}
                  .dump());
}

void trace_file::add_instant(const std::string& name, int64_t at_ns) {
  write_event(nlohmann::json{{"name", name}, {"ph", "i"}, {"s", "g"}, {"pid", 1},
                             {"tid", coordinator_track}, {"ts", micros(at_ns)}}
                .dump());
}

void trace_file::close(int64_t clock_error_ns) {
  if (file_ == nullptr)
    return;
  const nlohmann::json other = {
    {"clock", "the coordinator's steady clock, microseconds since the run started; "
              "nodes' events moved by an offset estimated from the quickest of the "
              "handshake's and a few clock readings' round trips"},
    {"clock_error_us", clock_error_ns / 1e3}};
  std::fprintf(file_, "\n],\"displayTimeUnit\":\"ms\",\"otherData\":%s}\n", other.dump().c_str());
  std::fclose(file_);
  file_ = nullptr;
}

} // namespace troupe::detail
