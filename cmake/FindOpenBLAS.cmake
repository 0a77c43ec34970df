# Finds OpenBLAS (Debian's libopenblas-dev) and defines OpenBLAS::OpenBLAS.
# Only bench/train_bench uses it, to compare Troupe's own GEMM kernels with
# OpenBLAS's cblas_sgemm in the same run.

find_path(OpenBLAS_INCLUDE_DIR NAMES cblas-openblas.h cblas.h
          PATH_SUFFIXES x86_64-linux-gnu aarch64-linux-gnu openblas)
find_library(OpenBLAS_LIBRARY NAMES openblas)

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(OpenBLAS REQUIRED_VARS OpenBLAS_INCLUDE_DIR OpenBLAS_LIBRARY)

if(OpenBLAS_FOUND AND NOT TARGET OpenBLAS::OpenBLAS)
  add_library(OpenBLAS::OpenBLAS UNKNOWN IMPORTED)
  set_target_properties(OpenBLAS::OpenBLAS PROPERTIES
    IMPORTED_LOCATION "${OpenBLAS_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${OpenBLAS_INCLUDE_DIR}")
  if(EXISTS "${OpenBLAS_INCLUDE_DIR}/cblas-openblas.h")
    set_property(TARGET OpenBLAS::OpenBLAS PROPERTY
      INTERFACE_COMPILE_DEFINITIONS TROUPE_CBLAS_HEADER=<cblas-openblas.h>)
  else()
    set_property(TARGET OpenBLAS::OpenBLAS PROPERTY
      INTERFACE_COMPILE_DEFINITIONS TROUPE_CBLAS_HEADER=<cblas.h>)
  endif()
endif()
mark_as_advanced(OpenBLAS_INCLUDE_DIR OpenBLAS_LIBRARY)
