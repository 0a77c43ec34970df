// The saved-model format: a fixed 49-byte header, the two texts, the
// parameters, then an FNV-1a 64 checksum of everything before it.
#include "model/export/saved_model.hpp"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <optional>
#include <system_error>

#include "model/atomic_write.hpp"
#include "model/layers/layer_spec.hpp"
#include "model/model_spec.hpp"
#include "model/parameter_layout.hpp"

namespace troupe::detail {

namespace {

// Layout (every integer unsigned little-endian; floats IEEE float32
// little-endian), so that the file reads the same on every host:
//   0   char[13] magic "troupe-model\n"
//   13  u32      format version
//   17  u32      inputs
//   21  u32      outputs
//   25  u64      model text length M
//   33  u64      loss text length L
//   41  u64      parameter count P
//   49  M bytes  model text, then L bytes loss text, then P float32
//   end u64      FNV-1a 64 of every byte before it
// The lengths in the header fix the file's size before any field is read.
constexpr char magic[] = "troupe-model\n";
constexpr size_t magic_size = sizeof(magic) - 1;
// Version 2 has version 1's layout; it marks a layered model's description
// (model/layers/layer_spec.hpp), which a reader of version 1 cannot build.
constexpr uint32_t format_version = 2;
constexpr size_t header_size = 49;
constexpr size_t checksum_size = 8;

static_assert(std::numeric_limits<float>::is_iec559, "saved models store IEEE floats");

void put_u32(std::string& out, uint32_t value) {
  for (int shift = 0; shift < 32; shift += 8)
    out.push_back(static_cast<char>((value >> shift) & 0xff));
}

void put_u64(std::string& out, uint64_t value) {
  for (int shift = 0; shift < 64; shift += 8)
    out.push_back(static_cast<char>((value >> shift) & 0xff));
}

uint64_t get_le(const std::string& in, size_t offset, size_t bytes) {
  uint64_t value = 0;
  for (size_t i = 0; i < bytes; ++i)
    value |= static_cast<uint64_t>(static_cast<unsigned char>(in[offset + i])) << (8 * i);
  return value;
}

std::string encode(const saved_model& m) {
  std::string out;
  out.reserve(header_size + m.model.size() + m.loss.size() + 4 * m.parameters.size()
              + checksum_size);
  out.append(magic, magic_size);
  put_u32(out, names_layered_model(m.model) ? format_version : 1);
  put_u32(out, static_cast<uint32_t>(m.inputs));
  put_u32(out, static_cast<uint32_t>(m.outputs));
  put_u64(out, m.model.size());
  put_u64(out, m.loss.size());
  put_u64(out, m.parameters.size());
  out += m.model;
  out += m.loss;
  for (float value : m.parameters) {
    uint32_t bits;
    std::memcpy(&bits, &value, sizeof(bits));
    put_u32(out, bits);
  }
  put_u64(out, fnv1a64(out.data(), out.size()));
  return out;
}

// Says how the widths and parameter count disagree with the model text when
// that text is a model_spec; a model registered by name is not checked.
// `source` names who claims the widths and count ("the header").
std::optional<std::string> spec_disagreement(const std::string& model, uint64_t inputs,
                                             uint64_t outputs, uint64_t parameters,
                                             const char* source) {
  auto spec = parse_model_spec(model);
  if (!spec)
    return std::nullopt;
  const uint64_t expected_parameters = parameter_layout(*spec).size();
  if (inputs != static_cast<uint64_t>(spec->inputs)
      || outputs != static_cast<uint64_t>(spec->classes()) || parameters != expected_parameters)
    return "model " + model + " has " + std::to_string(spec->inputs) + " inputs, "
           + std::to_string(spec->classes()) + " outputs and "
           + std::to_string(expected_parameters) + " parameters, but "
           + source + " says " + std::to_string(inputs) + ", " + std::to_string(outputs)
           + " and " + std::to_string(parameters);
  return std::nullopt;
}

error bad_format(const std::string& path, const std::string& what) {
  return fail(errc::bad_data, path + ": " + what);
}

expected<std::string> read_all(const std::string& path) {
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr)
    return fail(errc::io, path + ": cannot open saved model: "
                                        + std::error_code(errno, std::generic_category()).message());
  std::string in;
  char chunk[1 << 16];
  size_t n = 0;
  while ((n = std::fread(chunk, 1, sizeof(chunk), file)) > 0)
    in.append(chunk, n);
  const int err = std::ferror(file) ? errno : 0;
  std::fclose(file);
  if (err != 0)
    return fail(errc::io, path + ": cannot read saved model: "
                                        + std::error_code(err, std::generic_category()).message());
  return in;
}

// Checks magic, version, the size the header promises and the checksum;
// leaves the fields to decode().
status validate(const std::string& in, const std::string& path) {
  if (in.empty())
    return bad_format(path, "the file is empty, not a Troupe saved model");
  if (std::memcmp(in.data(), magic, std::min(in.size(), magic_size)) != 0)
    return bad_format(path, "not a Troupe saved model: the file does not start with "
                            "\"troupe-model\\n\"");
  if (in.size() < header_size)
    return bad_format(path, "truncated: " + std::to_string(in.size())
                              + " bytes, shorter than the " + std::to_string(header_size)
                              + "-byte header");
  const auto version = get_le(in, 13, 4);
  if (version > format_version)
    return bad_format(path, "format version " + std::to_string(version)
                              + " is newer than this build reads (up to "
                              + std::to_string(format_version) + "): read it with a newer Troupe");
  if (version == 0)
    return bad_format(path, "unknown format version 0 (the header is corrupt)");
  const uint64_t model_size = get_le(in, 25, 8);
  const uint64_t loss_size = get_le(in, 33, 8);
  const uint64_t parameters = get_le(in, 41, 8);
  // Each length is at most the file's size before they are added, so no sum overflows.
  if (model_size > in.size() || loss_size > in.size() || parameters > in.size())
    return bad_format(path, "truncated or corrupt: the header's lengths (model " + std::to_string(model_size)
                              + " bytes, loss " + std::to_string(loss_size) + " bytes, "
                              + std::to_string(parameters) + " parameters) exceed the file's "
                              + std::to_string(in.size()) + " bytes");
  const uint64_t promised = header_size + model_size + loss_size + 4 * parameters + checksum_size;
  if (in.size() < promised)
    return bad_format(path, "truncated: " + std::to_string(in.size()) + " bytes, the header promises "
                              + std::to_string(promised) + " (" + std::to_string(parameters)
                              + " parameters)");
  if (in.size() > promised)
    return bad_format(path, std::to_string(in.size() - promised) + " trailing bytes after the "
                              + std::to_string(promised) + " the header promises ("
                              + std::to_string(parameters) + " parameters)");
  const size_t content = in.size() - checksum_size;
  if (get_le(in, content, 8) != fnv1a64(in.data(), content))
    return bad_format(path, "checksum mismatch: the file is corrupt");
  return {};
}

expected<saved_model> decode(const std::string& in, const std::string& path) {
  const uint64_t inputs = get_le(in, 17, 4);
  const uint64_t outputs = get_le(in, 21, 4);
  const size_t model_size = get_le(in, 25, 8);
  const size_t loss_size = get_le(in, 33, 8);
  const size_t parameters = get_le(in, 41, 8);
  if (inputs < 1 || outputs < 1 || inputs > INT_MAX || outputs > INT_MAX)
    return bad_format(path, "the header says " + std::to_string(inputs) + " inputs and "
                              + std::to_string(outputs) + " outputs; each must be 1 to "
                              + std::to_string(INT_MAX));
  saved_model m;
  m.inputs = static_cast<int>(inputs);
  m.outputs = static_cast<int>(outputs);
  m.model = in.substr(header_size, model_size);
  m.loss = in.substr(header_size + model_size, loss_size);
  if (auto disagreement = spec_disagreement(m.model, inputs, outputs, parameters, "the header"))
    return bad_format(path, *disagreement);
  m.parameters.resize(parameters);
  const size_t first = header_size + model_size + loss_size;
  for (size_t i = 0; i < parameters; ++i) {
    const auto bits = static_cast<uint32_t>(get_le(in, first + 4 * i, 4));
    std::memcpy(&m.parameters[i], &bits, sizeof(bits));
  }
  return m;
}

} // namespace

status save_model(const std::string& path, const saved_model& m) {
  if (m.model.empty() || m.inputs < 1 || m.outputs < 1)
    return fail(errc::invalid_argument,
                path + ": cannot save a model without a description or with "
                  + std::to_string(m.inputs) + " inputs and " + std::to_string(m.outputs)
                  + " outputs (each must be at least 1)");
  if (auto disagreement = spec_disagreement(m.model, static_cast<uint64_t>(m.inputs),
                                            static_cast<uint64_t>(m.outputs),
                                            m.parameters.size(), "the saved_model"))
    return fail(errc::invalid_argument, path + ": cannot save: " + *disagreement);
  return write_file_atomically(path, encode(m));
}

expected<saved_model> load_saved_model(const std::string& path) {
  auto in = read_all(path);
  if (!in)
    return in.error();
  if (auto valid = validate(*in, path); !valid)
    return valid.error();
  return decode(*in, path);
}

} // namespace troupe::detail
