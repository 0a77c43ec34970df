// Compiled (never run) by TroupeCompileOptions.cmake to detect a GCC 12.2
// miscompile with AVX-512 enabled at -O2 and above: the 256-bit constant
// {9, 9, 9, 0} below is stored as a broadcast of 9 ({9, 9, 9, 9}).
// ix86_convert_const_wide_int_to_broadcast compares only the elements a
// CONST_WIDE_INT stores, and the upper zero element is implicit there.
// A correct compiler emits no vpbroadcast for this function.
#include <cstddef>
#include <cstring>

void store_three_nines_and_a_zero(std::size_t* out) {
  std::size_t values[4] = {9, 9, 9, 0};
  std::memcpy(out, values, sizeof values);
}
