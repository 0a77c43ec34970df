// Rendering the progress line.
#include "actors/report/progress_bar.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/core.h>

namespace troupe::detail {

namespace {

// "52k" from 52,340; "980" below a thousand.
std::string short_count(double value) {
  if (value >= 1e6)
    return fmt::format("{:.1f}M", value / 1e6);
  if (value >= 1e3)
    return fmt::format("{:.0f}k", value / 1e3);
  return fmt::format("{:.0f}", value);
}

} // namespace

std::string render_progress_bar(const epoch_progress& p, int width) {
  const uint64_t total = std::max<uint64_t>(p.rounds, 1);
  const uint64_t samples = std::min(p.samples, p.epoch_samples);
  const double fraction = p.epoch_samples > 0 ? double(samples) / double(p.epoch_samples) : 0;
  const auto done = static_cast<uint64_t>(std::floor(fraction * double(total) + 1e-9));
  const int filled = static_cast<int>(std::floor(fraction * width + 1e-9));
  std::string bar;
  if (filled >= width)
    bar.assign(static_cast<size_t>(width), '=');
  else {
    bar.assign(static_cast<size_t>(std::max(0, filled - 1)), '=');
    bar += '>';
    bar.append(static_cast<size_t>(width - static_cast<int>(bar.size())), '.');
  }
  const double rate = p.seconds > 0 ? double(samples) / p.seconds : 0;
  const double left = rate > 0 ? double(p.epoch_samples - samples) / rate : 0;
  const int digits = static_cast<int>(std::to_string(total).size());
  return fmt::format("{:>{}}/{} [{}] - ETA: {:.0f}s - loss: {:.4f} - {} samples/s", done, digits,
                     total, bar, std::ceil(left), p.train_loss, short_count(rate));
}

} // namespace troupe::detail
