// Parsing --slow-replica.
#include "actors/config/slow_replica.hpp"

#include <stdexcept>

#include "messages/errors.hpp"

namespace troupe::detail {

caf::expected<slow_replica> parse_slow_replica(const std::string& text) {
  if (text.empty())
    return slow_replica{};
  const auto colon = text.find(':');
  const auto bad = [&text](const std::string& why) {
    return make_troupe_error(troupe_errc::bad_config,
                             "--slow-replica: '" + text + "' " + why
                               + " (expected I:F, e.g. 3:2.5 for replica 3 at 2.5x its time)");
  };
  if (colon == std::string::npos)
    return bad("has no ':'");
  try {
    size_t used = 0;
    const auto index = std::stoul(text.substr(0, colon), &used);
    if (used != colon)
      return bad("does not start with a replica index");
    const auto rest = text.substr(colon + 1);
    const float factor = std::stof(rest, &used);
    if (used != rest.size() || !(factor >= 1.0f) || factor > 1000.0f)
      return bad("needs a factor from 1 to 1000");
    return slow_replica{static_cast<uint32_t>(index), factor};
  } catch (const std::exception&) {
    return bad("is not a number pair");
  }
}

} // namespace troupe::detail
