// Troupe's protocol errors as a CAF error category, and how to print any
// caf::error for a person.
#pragma once

#include <cstdint>
#include <string>

#include <caf/error.hpp>

#include "common/expected.hpp"

namespace troupe::detail {

/// Names why a request to a Troupe actor failed.
enum class troupe_errc : uint8_t {
  bad_gradient = 1,  // wrong size, NaN or Inf
  stale_round,       // a sync gradient for a round that is already closed
  unexpected_round,  // a sync gradient for a round that has not started
  duplicate_push,    // a replica pushed twice in one round
  unknown_replica,   // a push from a replica the store does not know
  replica_lost,      // a replica died and the run is configured to abort
  bad_data,          // a replica could not load or use its data
  bad_config,        // an option or job description makes no sense
  device_failure,    // a compute device is missing or failed
  timeout,           // a bounded wait ran out
  store_lost,        // the variable store died (a replica stops, the run fails)
  fenced,            // a message of another membership epoch than its receiver's
  link_lost,         // the link to the peer a request waited on was lost
  callback_failed,   // a callback of the caller threw, or the caller is gone
  stopped,           // the caller asked for a graceful stop (a signal, request_stop)
};

/// Names the code, e.g. "stale_round".
std::string to_string(troupe_errc code);

/// Builds an error without a sentence (lets `err == troupe_errc::x` work).
caf::error make_error(troupe_errc code);

/// Builds an error with a sentence for a person.
caf::error make_troupe_error(troupe_errc code, std::string why);

/// Turns a model/ error into a caf::error (data, config or device).
caf::error to_caf_error(const error& err);

/// Renders Troupe's errors for CAF (registered by register_messages).
std::string render_troupe_error(uint8_t code, const caf::message& context);

/// Prints an error for a person: the sentence for Troupe's own errors,
/// CAF's rendering otherwise.
std::string describe(const caf::error& err);

} // namespace troupe::detail
