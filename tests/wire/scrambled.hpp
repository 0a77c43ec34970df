// A valid message's bytes with a few of them set at random, and one time in
// eight cut short: what the codec tests feed their readers.
#pragma once

#include <random>
#include <vector>

namespace troupe::wire_test {

inline std::vector<char> scrambled(std::vector<char> bytes, std::mt19937_64& random) {
  for (int k = 1 + static_cast<int>(random() % 6); k > 0; --k)
    bytes[random() % bytes.size()] = static_cast<char>(random());
  if (random() % 8 == 0)
    bytes.resize(random() % bytes.size());
  return bytes;
}

} // namespace troupe::wire_test
