// Troupe's error category.
#include "messages/errors.hpp"

#include <caf/all.hpp>

namespace troupe::detail {

std::string to_string(troupe_errc code) {
  switch (code) {
    case troupe_errc::bad_gradient: return "bad_gradient";
    case troupe_errc::stale_round: return "stale_round";
    case troupe_errc::unexpected_round: return "unexpected_round";
    case troupe_errc::duplicate_push: return "duplicate_push";
    case troupe_errc::unknown_replica: return "unknown_replica";
    case troupe_errc::replica_lost: return "replica_lost";
    case troupe_errc::bad_data: return "bad_data";
    case troupe_errc::bad_config: return "bad_config";
    case troupe_errc::device_failure: return "device_failure";
    case troupe_errc::timeout: return "timeout";
    case troupe_errc::store_lost: return "store_lost";
    case troupe_errc::fenced: return "fenced";
    case troupe_errc::link_lost: return "link_lost";
    case troupe_errc::callback_failed: return "callback_failed";
    case troupe_errc::stopped: return "stopped";
  }
  return "troupe_errc(" + std::to_string(static_cast<int>(code)) + ")";
}

caf::error make_error(troupe_errc code) {
  return caf::error{static_cast<uint8_t>(code), caf::atom("troupe")};
}

caf::error make_troupe_error(troupe_errc code, std::string why) {
  return caf::error{static_cast<uint8_t>(code), caf::atom("troupe"),
                    caf::make_message(std::move(why))};
}

std::string render_troupe_error(uint8_t code, const caf::message& context) {
  if (context.size() == 1 && context.match_element<std::string>(0))
    return context.get_as<std::string>(0);
  return to_string(static_cast<troupe_errc>(code));
}

caf::error to_caf_error(const error& err) {
  switch (err.code) {
    case errc::device:
      return make_troupe_error(troupe_errc::device_failure, err.message);
    case errc::invalid_argument:
      return make_troupe_error(troupe_errc::bad_config, err.message);
    default:
      return make_troupe_error(troupe_errc::bad_data, err.message);
  }
}

std::string describe(const caf::error& err) {
  if (!err)
    return "no error";
  if (err.category() == caf::atom("troupe"))
    return render_troupe_error(err.code(), err.context());
  if (err == caf::exit_reason::remote_link_unreachable)
    return "its node became unreachable (process killed or frozen, or the link cut)";
  if (err == caf::exit_reason::user_shutdown)
    return "it was shut down";
  return caf::to_string(err);
}

} // namespace troupe::detail
