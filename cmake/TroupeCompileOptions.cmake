# Compile options for Troupe's own targets: warnings on, and numerics that are
# the same bits on every x86-64 node (docs/backends.md, "What decides the bits").
# Third-party headers come in as SYSTEM includes through their imported targets.
#
# The default build targets a fixed baseline ISA (TROUPE_ISA) and never
# contracts a * b + c into an FMA behind our back: one binary runs on every
# node and computes the same floats there. Speed comes from the GEMM kernels,
# which pick the CPU's best instructions at run time (model/backend/cpu/gemm.hpp).
# TROUPE_NATIVE=ON opts into -march=native for a build that stays on one host.

set(TROUPE_ISA "x86-64-v2" CACHE STRING
  "Baseline -march of the portable build on x86-64 (x86-64, x86-64-v2, x86-64-v3, ...)")

# Tells (in out_var) whether the compiler, with `flags`, stores the probe's
# constant {9, 9, 9, 0} as a broadcast (cmake/probes/avx512_wide_constant.cpp).
function(troupe_probe_wide_constant_bug out_var flags)
  execute_process(
    COMMAND ${CMAKE_CXX_COMPILER} -std=c++17 -O2 ${flags} -S -o -
            ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/probes/avx512_wide_constant.cpp
    OUTPUT_VARIABLE asm ERROR_QUIET RESULT_VARIABLE result)
  if(result EQUAL 0 AND asm MATCHES "vpbroadcast")
    set(${out_var} TRUE PARENT_SCOPE)
  else()
    set(${out_var} FALSE PARENT_SCOPE)
  endif()
endfunction()

set(troupe_isa_flags "")
if(TROUPE_NATIVE)
  set(troupe_isa_flags -march=native)
  # GCC 12.2 with AVX-512, or with a Skylake-X-era -mtune, moves 32-byte
  # constants as OImode integers and turns some into broadcasts: it made a
  # test's literal {1, 1, 1, 0} read {1, 1, 1, 1}. Capping by-pieces moves at
  # 16 bytes keeps such constants out of that path; the vector loops keep AVX-512.
  troupe_probe_wide_constant_bug(troupe_miscompiles "${troupe_isa_flags}")
  if(troupe_miscompiles)
    list(APPEND troupe_isa_flags -mmove-max=128 -mstore-max=128)
    troupe_probe_wide_constant_bug(troupe_still_miscompiles "${troupe_isa_flags}")
    if(troupe_still_miscompiles)
      message(FATAL_ERROR "${CMAKE_CXX_COMPILER_ID} ${CMAKE_CXX_COMPILER_VERSION} with -march=native "
                          "miscompiles cmake/probes/avx512_wide_constant.cpp even with "
                          "-mmove-max=128 -mstore-max=128: build with TROUPE_NATIVE=OFF")
    endif()
    message(WARNING "${CMAKE_CXX_COMPILER_ID} ${CMAKE_CXX_COMPILER_VERSION} with -march=native "
                    "miscompiles wide constants (cmake/probes/avx512_wide_constant.cpp): "
                    "adding -mmove-max=128 -mstore-max=128")
  endif()
elseif(CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64)$")
  set(troupe_isa_flags -march=${TROUPE_ISA})
endif()

# What the connect handshake compares between nodes (model/numerics_identity.hpp).
if(TROUPE_NATIVE)
  set(TROUPE_BUILD_ISA "native")
elseif(troupe_isa_flags)
  set(TROUPE_BUILD_ISA "${TROUPE_ISA}")
else()
  set(TROUPE_BUILD_ISA "${CMAKE_SYSTEM_PROCESSOR}")
endif()
set(TROUPE_BUILD_NUMERICS
  "${CMAKE_CXX_COMPILER_ID} ${CMAKE_CXX_COMPILER_VERSION}, ${CMAKE_SYSTEM_PROCESSOR}, -march=${TROUPE_BUILD_ISA}, -ffp-contract=off")
message(STATUS "Troupe numerics: ${TROUPE_BUILD_NUMERICS}")

function(troupe_target_options target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic>
    # sqrt in the optimizer loops vectorizes only when it need not set errno.
    $<$<COMPILE_LANGUAGE:CXX>:-fno-math-errno>
    # No silent FMA: a fused and an unfused a * b + c differ in the last bit.
    $<$<COMPILE_LANGUAGE:CXX>:-ffp-contract=off>
    # Position-independent code (libtroupe) that still inlines and calls its
    # own functions directly: nothing interposes them.
    $<$<COMPILE_LANGUAGE:CXX>:-fno-semantic-interposition>
    $<$<COMPILE_LANGUAGE:CXX>:${troupe_isa_flags}>)
  # The repository's own targets see its internal headers and the public
  # ones; a program that links Troupe::troupe sees include/ only.
  target_include_directories(${target} PRIVATE ${PROJECT_SOURCE_DIR} ${PROJECT_SOURCE_DIR}/include)
  # libtroupe exports the public API alone (include/troupe/export.hpp):
  # every object that goes into it hides what TROUPE_API does not mark.
  set_target_properties(${target} PROPERTIES
    CXX_VISIBILITY_PRESET hidden
    CUDA_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON)
endfunction()

# Tests and benchmarks of the internals name them troupe::X, as the code
# under test does (tests/internal_names.hpp, included ahead of each source).
function(troupe_reach_internals target)
  set(names ${PROJECT_SOURCE_DIR}/tests/internal_names.hpp)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-include ${names}>
    $<$<COMPILE_LANGUAGE:CUDA>:--pre-include=${names}>)
endfunction()
