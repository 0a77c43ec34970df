// The public API's errors from the runtime's: the one place where a
// runtime failure becomes an errc a program can act on.
#include "api/errors.hpp"

#include <caf/sec.hpp>

#include "messages/errors.hpp"

namespace troupe::detail {

namespace {

// The public kind of a runtime failure.
errc public_code(const caf::error& err) {
  if (err.category() != caf::atom("troupe"))
    return err == caf::sec::request_timeout ? errc::timeout : errc::run_failed;
  switch (static_cast<troupe_errc>(err.code())) {
  case troupe_errc::bad_data:
  case troupe_errc::bad_gradient:
    return errc::bad_data;
  case troupe_errc::device_failure:
    return errc::device;
  case troupe_errc::timeout:
    return errc::timeout;
  case troupe_errc::replica_lost:
  case troupe_errc::store_lost:
  case troupe_errc::link_lost:
    return errc::node_lost;
  case troupe_errc::stopped:
    return errc::stopped;
  default: // a callback that threw; a node that refused the run (its options
             // were checked before it started: a refusal is the run's failure)
    return errc::run_failed;
  }
}

} // namespace

error invalid_option(const caf::error& err) {
  return fail(errc::invalid_argument, describe(err));
}

error run_failure(const caf::error& err) {
  return fail(public_code(err), describe(err));
}

} // namespace troupe::detail
