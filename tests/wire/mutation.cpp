// The fuzzer's mutations of a recorded BASP stream, each a pure function of
// the stream, the seed and its index.
#include "tests/wire/wire_fuzz.hpp"

#include <random>

#include "actors/cluster/basp_header_check.hpp"

namespace troupe::wire_test {

namespace {

using rng_type = std::mt19937_64;

size_t pick(rng_type& rng, size_t below) {
  return below == 0 ? 0 : std::uniform_int_distribution<size_t>(0, below - 1)(rng);
}

// Where each complete frame starts, walking the headers' payload lengths.
std::vector<size_t> frame_starts(const bytes& stream) {
  std::vector<size_t> starts;
  size_t at = 0;
  while (at + basp_header_size <= stream.size()) {
    starts.push_back(at);
    const auto header = read_basp_header(reinterpret_cast<const unsigned char*>(&stream[at]));
    at += basp_header_size + header.payload_len;
  }
  return starts;
}

void put_big_endian(bytes& stream, size_t at, uint64_t value, int width) {
  for (int i = 0; i < width && at + i < stream.size(); ++i)
    stream[at + i] = static_cast<char>(value >> (8 * (width - 1 - i)));
}

bytes varbyte(uint64_t value) {
  bytes out;
  do {
    auto byte = static_cast<char>(value & 0x7f);
    value >>= 7;
    if (value != 0)
      byte = static_cast<char>(byte | 0x80);
    out.push_back(byte);
  } while (value != 0);
  return out;
}

std::string at_frame(const bytes& stream, size_t frame, size_t start) {
  return "frame " + std::to_string(frame) + " ("
         + basp_operation_name(static_cast<uint8_t>(stream[start])) + " at byte "
         + std::to_string(start) + ")";
}

// Each mutation kind edits m.stream in place and says what it did.
void flip_bits(mutation& m, rng_type& rng) {
  const size_t count = 1 + pick(rng, 8);
  m.description = "flip bits at";
  for (size_t i = 0; i < count && !m.stream.empty(); ++i) {
    const size_t at = pick(rng, m.stream.size());
    m.stream[at] = static_cast<char>(m.stream[at] ^ (1 << pick(rng, 8)));
    m.description += " " + std::to_string(at);
  }
}

void insert_bytes(mutation& m, rng_type& rng) {
  const size_t at = pick(rng, m.stream.size() + 1);
  const size_t count = 1 + pick(rng, 16);
  bytes inserted(count);
  for (auto& b : inserted)
    b = static_cast<char>(pick(rng, 256));
  m.stream.insert(m.stream.begin() + static_cast<long>(at), inserted.begin(), inserted.end());
  m.description = "insert " + std::to_string(count) + " random bytes at " + std::to_string(at);
}

void delete_bytes(mutation& m, rng_type& rng) {
  const size_t at = pick(rng, m.stream.size());
  const size_t count = std::min(1 + pick(rng, 64), m.stream.size() - at);
  m.stream.erase(m.stream.begin() + static_cast<long>(at),
                 m.stream.begin() + static_cast<long>(at + count));
  m.description = "delete " + std::to_string(count) + " bytes at " + std::to_string(at);
}

void truncate(mutation& m, rng_type& rng) {
  m.stream.resize(pick(rng, m.stream.size()));
  m.description = "truncate to " + std::to_string(m.stream.size()) + " bytes";
}

void edge_payload_len(mutation& m, rng_type& rng) {
  const auto starts = frame_starts(m.stream);
  const size_t frame = pick(rng, starts.size());
  const size_t start = starts.at(frame);
  const auto old = read_basp_header(reinterpret_cast<const unsigned char*>(&m.stream[start]));
  const uint64_t edges[] = {0,          1,          old.payload_len - 1u, old.payload_len + 1u,
                            0x7FFFFFFF, 0xFFFFFFFF, uint64_t{1} << 30,   (uint64_t{1} << 20) + 1};
  const uint64_t value = edges[pick(rng, 8)] & 0xFFFFFFFF;
  put_big_endian(m.stream, start + 4, value, 4);
  m.description = "set payload_len of " + at_frame(m.stream, frame, start) + " to "
                  + std::to_string(value);
}

void payload_varbyte(mutation& m, rng_type& rng) {
  const auto starts = frame_starts(m.stream);
  const size_t frame = pick(rng, starts.size());
  const size_t start = starts.at(frame);
  const auto header = read_basp_header(reinterpret_cast<const unsigned char*>(&m.stream[start]));
  if (header.payload_len == 0 || start + basp_header_size >= m.stream.size())
    return flip_bits(m, rng);
  const uint64_t counts[] = {uint64_t{1} << 30, 0x7FFFFFFF, uint64_t{1} << 28, 0xFFFFFFFF,
                             uint64_t{1} << 62};
  const auto encoded = varbyte(counts[pick(rng, 5)]);
  const size_t at = start + basp_header_size
                    + pick(rng, std::min<size_t>(header.payload_len,
                                                 m.stream.size() - start - basp_header_size));
  for (size_t i = 0; i < encoded.size() && at + i < m.stream.size(); ++i)
    m.stream[at + i] = encoded[i];
  m.description = "write a varbyte count of " + std::to_string(encoded.size()) + " bytes at "
                  + std::to_string(at) + " in the payload of " + at_frame(m.stream, frame, start);
}

void edge_header_field(mutation& m, rng_type& rng) {
  const auto starts = frame_starts(m.stream);
  const size_t frame = pick(rng, starts.size());
  const size_t start = starts.at(frame);
  const uint64_t values[] = {0, 1, 0xFFFFFFFFFFFFFFFF, 0x8000000000000000, pick(rng, 1u << 20)};
  const uint64_t value = values[pick(rng, 5)];
  const char* names[] = {"operation", "flags", "operation_data", "source_actor", "dest_actor"};
  const size_t field = pick(rng, 5);
  const size_t offsets[] = {0, 3, 8, 16, 24};
  const int widths[] = {1, 1, 8, 8, 8};
  const uint64_t written = field == 0 ? pick(rng, 9) : value;
  put_big_endian(m.stream, start + offsets[field], written, widths[field]);
  m.description = "set " + std::string{names[field]} + " of " + at_frame(m.stream, frame, start)
                  + " to " + std::to_string(written);
}

void duplicate_frame(mutation& m, rng_type& rng) {
  const auto starts = frame_starts(m.stream);
  const size_t frame = pick(rng, starts.size());
  const size_t start = starts.at(frame);
  const size_t end = frame + 1 < starts.size() ? starts[frame + 1] : m.stream.size();
  const bytes copy(m.stream.begin() + static_cast<long>(start),
                   m.stream.begin() + static_cast<long>(end));
  m.stream.insert(m.stream.begin() + static_cast<long>(end), copy.begin(), copy.end());
  m.description = "duplicate " + at_frame(m.stream, frame, start);
}

void duplicate_stream(mutation& m, rng_type&) {
  const bytes copy = m.stream;
  m.stream.insert(m.stream.end(), copy.begin(), copy.end());
  m.description = "send the whole stream twice";
}

void cut_and_hold(mutation& m, rng_type& rng) {
  m.stream.resize(pick(rng, m.stream.size()));
  m.hold_open = true;
  m.description = "cut at " + std::to_string(m.stream.size()) + " bytes and hold the "
                  + "connection open";
}

} // namespace

mutation mutate(const bytes& stream, uint64_t seed, uint64_t index) {
  std::seed_seq seeds{static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32),
                      static_cast<uint32_t>(index), static_cast<uint32_t>(index >> 32)};
  rng_type rng{seeds};
  using edit = void (*)(mutation&, rng_type&);
  // Weighted: each entry is one chance in the table's size.
  static const edit table[] = {
    flip_bits,        flip_bits,         flip_bits,         insert_bytes,    insert_bytes,
    delete_bytes,     delete_bytes,      truncate,          truncate,        edge_payload_len,
    edge_payload_len, edge_payload_len,  payload_varbyte,   payload_varbyte, edge_header_field,
    edge_header_field, edge_header_field, duplicate_frame,  duplicate_stream, cut_and_hold,
  };
  mutation m;
  m.stream = stream;
  if (m.stream.size() < basp_header_size)
    return m;
  table[pick(rng, std::size(table))](m, rng);
  return m;
}

} // namespace troupe::wire_test
