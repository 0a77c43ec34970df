// The build's version, from the project's.
#include <troupe/version.hpp>

namespace troupe {

const char* version() { return TROUPE_VERSION; }

} // namespace troupe
