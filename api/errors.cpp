// The public API's errors.
#include "api/errors.hpp"

#include "messages/errors.hpp"

namespace troupe {

model_error invalid_option(const caf::error& err) {
  return fail(model_errc::invalid_argument, describe(err));
}

model_error run_failure(const caf::error& err) {
  if (err == troupe_errc::stopped)
    return fail(model_errc::stopped, describe(err));
  return fail(model_errc::run_failed, describe(err));
}

} // namespace troupe
