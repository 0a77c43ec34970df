# Compile options for Troupe's own targets: warnings on, fast float loops.
# Third-party headers come in as SYSTEM includes through their imported targets.

function(troupe_target_options target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic>
    # sqrt in the optimizer loops vectorizes only when it need not set errno.
    $<$<COMPILE_LANGUAGE:CXX>:-fno-math-errno>)
  if(TROUPE_NATIVE)
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-march=native>)
  endif()
  target_include_directories(${target} PUBLIC ${PROJECT_SOURCE_DIR})
endfunction()
