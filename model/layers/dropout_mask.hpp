// Which values dropout keeps: a counter-based draw per (seed, step, sample,
// place), written once for the host and for CUDA kernels so that the CPU
// layer and its CUDA twin drop exactly the same values.
#pragma once

#include <cstdint>

#include "model/layers/host_device.hpp"

namespace troupe::detail::dropout_mask {

/// Returns splitmix64's finalizer of `z`.
TROUPE_HOST_DEVICE inline uint64_t finalize(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/// Returns value `place` (from 0) of the splitmix64 stream seeded with
/// `seed`: random_stream(seed)'s next() called place + 1 times.
TROUPE_HOST_DEVICE inline uint64_t draw_at(uint64_t seed, uint64_t place) {
  return finalize(seed + (place + 1) * 0x9e3779b97f4a7c15ull);
}

/// Returns one sample's seed: mix_seed(seed, step, index) of model/random.hpp.
TROUPE_HOST_DEVICE inline uint64_t sample_seed(uint64_t seed, uint64_t step, uint64_t index) {
  return draw_at(seed ^ (step * 0x9e3779b97f4a7c15ull) ^ (index * 0xc2b2ae3d27d4eb4full), 0);
}

/// Tells whether the value at `place` of the sample seeded `sample` is kept
/// at dropout rate `rate`: its uniform draw in [0, 1), from the top 24 bits,
/// is at least the rate.
TROUPE_HOST_DEVICE inline bool kept(uint64_t sample, uint64_t place, float rate) {
  return static_cast<float>(draw_at(sample, place) >> 40) * 0x1.0p-24f >= rate;
}

} // namespace troupe::detail::dropout_mask
