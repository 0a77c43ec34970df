// Troupe's version.
#pragma once

#include <troupe/export.hpp>

namespace troupe {

/// Returns this build's version, "MAJOR.MINOR.PATCH".
TROUPE_API const char* version();

} // namespace troupe
