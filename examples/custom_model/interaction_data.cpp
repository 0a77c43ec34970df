// The example's data source: features from a hash of (seed, index, feature).
#include "interaction_data.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>

namespace {

// SplitMix64's finalizer: a well-mixed 64-bit value from any input.
uint64_t mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

float feature(uint64_t seed, uint64_t index, int j) {
  const uint64_t bits = mix(mix(seed) ^ mix(index * 8 + static_cast<uint64_t>(j) + 1));
  return static_cast<float>(bits >> 40) / 8388608.0f - 1.0f; // 24 bits into [-1, 1)
}

// Reads "rows=N,seed=S" (either may be left out).
troupe::expected<std::shared_ptr<const troupe::data_source>>
open_interaction(const std::string& settings, troupe::data_split) {
  unsigned long long rows = 4096, seed = 1;
  size_t begin = 0;
  while (begin < settings.size()) {
    const size_t end = std::min(settings.find(',', begin), settings.size());
    const std::string item = settings.substr(begin, end - begin);
    char extra = 0;
    if (std::sscanf(item.c_str(), "rows=%llu%c", &rows, &extra) != 1
        && std::sscanf(item.c_str(), "seed=%llu%c", &seed, &extra) != 1)
      return troupe::fail(troupe::errc::invalid_argument,
                          "unknown setting '" + item + "' (rows=N,seed=S)");
    begin = end + 1;
  }
  if (rows == 0 || rows > 100000000)
    return troupe::fail(troupe::errc::invalid_argument,
                        "rows=" + std::to_string(rows) + " is outside 1..100000000");
  return std::shared_ptr<const troupe::data_source>(
    std::make_shared<interaction_data>(static_cast<uint32_t>(rows), seed));
}

} // namespace

void interaction_data::gather(const uint32_t* indices, size_t count, float* features_out,
                              int32_t* labels_out, float*) const {
  for (size_t i = 0; i < count; ++i) {
    float* x = features_out + i * 8;
    for (int j = 0; j < 8; ++j)
      x[j] = feature(seed_, indices[i], j);
    if (labels_out != nullptr)
      labels_out[i] = x[0] * x[1] > 0 ? 1 : 0;
  }
}

std::string interaction_data::name() const {
  return "interaction:rows=" + std::to_string(rows_) + ",seed=" + std::to_string(seed_);
}

bool interaction_data::write_csv(const std::string& path) const {
  std::FILE* out = std::fopen(path.c_str(), "w");
  if (out == nullptr)
    return false;
  std::fprintf(out, "x0,x1,x2,x3,x4,x5,x6,x7,label\n");
  for (uint32_t n = 0; n < rows_; ++n) {
    float x[8];
    int32_t label = 0;
    gather(&n, 1, x, &label, nullptr);
    for (float value : x)
      std::fprintf(out, "%.9g,", value);
    std::fprintf(out, "%d\n", label);
  }
  return std::fclose(out) == 0;
}

void register_interaction_data() {
  if (!troupe::register_data_source("interaction", open_interaction))
    std::abort(); // "interaction" is a valid kind name

}
