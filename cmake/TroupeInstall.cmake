# What `cmake --install build --prefix P` puts in P: the public headers
# (include/troupe/), libtroupe and, built with CUDA, its CUDA module
# libtroupe_cuda, the node program as troupe-node, troupe-model
# (a saved model evaluated, predicting, exported), the node's systemd unit,
# and the CMake package (find_package(Troupe CONFIG) -> Troupe::troupe);
# cmake/TroupePackaging.cmake makes Debian packages of them.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(TROUPE_CMAKE_DIR "${CMAKE_INSTALL_LIBDIR}/cmake/Troupe")

install(DIRECTORY "${PROJECT_SOURCE_DIR}/include/troupe"
        DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}" COMPONENT development)
install(TARGETS troupe
        EXPORT TroupeTargets
        LIBRARY DESTINATION "${CMAKE_INSTALL_LIBDIR}" COMPONENT runtime
                NAMELINK_COMPONENT development)
if(TARGET troupe_cuda) # the CUDA module, loaded at run time from beside libtroupe
  install(TARGETS troupe_cuda
          LIBRARY DESTINATION "${CMAKE_INSTALL_LIBDIR}" COMPONENT cuda NAMELINK_SKIP)
endif()
install(TARGETS troupe-node troupe-model
        EXPORT TroupeTargets
        RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}" COMPONENT node)
install(EXPORT TroupeTargets
        NAMESPACE Troupe::
        DESTINATION "${TROUPE_CMAKE_DIR}" COMPONENT development)

configure_package_config_file(
  "${PROJECT_SOURCE_DIR}/cmake/TroupeConfig.cmake.in"
  "${PROJECT_BINARY_DIR}/TroupeConfig.cmake"
  INSTALL_DESTINATION "${TROUPE_CMAKE_DIR}")
write_basic_package_version_file(
  "${PROJECT_BINARY_DIR}/TroupeConfigVersion.cmake"
  VERSION "${PROJECT_VERSION}"
  COMPATIBILITY SameMinorVersion)
install(FILES "${PROJECT_BINARY_DIR}/TroupeConfig.cmake"
              "${PROJECT_BINARY_DIR}/TroupeConfigVersion.cmake"
        DESTINATION "${TROUPE_CMAKE_DIR}" COMPONENT development)

include(TroupePackaging)
