// The error values of model/ are the public API's (<troupe/expected.hpp>).
#pragma once

#include <troupe/expected.hpp>
