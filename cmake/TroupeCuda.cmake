# Decides whether the CUDA backend is built: with TROUPE_CUDA on and a working
# nvcc (CMAKE_CUDA_COMPILER, CUDACXX, PATH, else /usr/local/cuda/bin/nvcc) it
# enables CUDA, finds the toolkit and sets TROUPE_HAVE_CUDA. No GPU is needed.

set(TROUPE_HAVE_CUDA OFF)

if(NOT TROUPE_CUDA)
  message(STATUS "CUDA backend not built: TROUPE_CUDA is OFF")
  return()
endif()

# check_language tries the compiler in a child CMake run, which reads CUDACXX
# from the environment; that is how the fixed toolkit path reaches it.
if(NOT DEFINED CMAKE_CUDA_COMPILER AND NOT DEFINED ENV{CUDACXX})
  find_program(troupe_nvcc_in_path nvcc)
  if(NOT troupe_nvcc_in_path AND EXISTS /usr/local/cuda/bin/nvcc)
    set(ENV{CUDACXX} /usr/local/cuda/bin/nvcc)
  endif()
endif()

include(CheckLanguage)
check_language(CUDA)

if(NOT CMAKE_CUDA_COMPILER)
  message(STATUS "CUDA backend not built: no working nvcc found "
                 "(set CMAKE_CUDA_COMPILER, or put nvcc in PATH or /usr/local/cuda/bin)")
  return()
endif()

# sm_90 SASS for Hopper plus compute_90 PTX, which newer GPUs JIT-compile.
if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
  set(CMAKE_CUDA_ARCHITECTURES 90)
endif()
set(CMAKE_CUDA_STANDARD 17)
set(CMAKE_CUDA_STANDARD_REQUIRED ON)
set(CMAKE_CUDA_EXTENSIONS OFF)
enable_language(CUDA)
find_package(CUDAToolkit REQUIRED)

set(TROUPE_HAVE_CUDA ON)
message(STATUS "CUDA backend built with ${CMAKE_CUDA_COMPILER} "
               "(CUDA ${CUDAToolkit_VERSION}, architectures ${CMAKE_CUDA_ARCHITECTURES})")
