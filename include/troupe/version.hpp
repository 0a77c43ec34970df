// Troupe's version.
#pragma once

namespace troupe {

/// Returns this build's version, "MAJOR.MINOR.PATCH".
const char* version();

} // namespace troupe
