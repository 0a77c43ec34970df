// The header of a .npy file: its Python dict literal, parsed strictly.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/expected.hpp"

namespace troupe::detail {

/// Holds the header's fields; `seen` marks which of descr, fortran_order and
/// shape came.
struct npy_header {
  std::string descr;
  bool fortran_order = false;
  std::vector<uint64_t> shape;
  bool seen[3] = {false, false, false};
};

/// Parses the header text of the .npy file `path`: exactly the keys 'descr',
/// 'fortran_order' and 'shape', each once, as numpy.save writes them; an
/// error (bad_data) quotes where it went wrong.
expected<npy_header> parse_npy_header(const std::string& path, const std::string& text);

} // namespace troupe::detail
