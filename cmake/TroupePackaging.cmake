# Debian packages of what cmake/TroupeInstall.cmake installs, built with
# `cpack -G DEB --config build/CPackConfig.cmake`:
#   libtroupe0.1   the runtime library (its dependencies from dpkg-shlibdeps)
#   libtroupe-cuda0.1  built with CUDA: the CUDA module libtroupe loads for cuda:N
#   libtroupe-dev  the public headers, the libtroupe.so link and the CMake package
#   troupe-node    troupe-node with a systemd unit (troupe-node.service, options
#                  from /etc/default/troupe-node) and troupe-model
set(TROUPE_PACKAGE_PREFIX /usr)
set(TROUPE_NODE_PATH "${TROUPE_PACKAGE_PREFIX}/${CMAKE_INSTALL_BINDIR}/troupe-node")
configure_file("${PROJECT_SOURCE_DIR}/packaging/troupe-node.service.in"
               "${PROJECT_BINARY_DIR}/packaging/troupe-node.service" @ONLY)
install(FILES "${PROJECT_BINARY_DIR}/packaging/troupe-node.service"
        DESTINATION lib/systemd/system COMPONENT node)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME troupe)
set(CPACK_PACKAGE_VENDOR "Troupe")
set(CPACK_PACKAGE_CONTACT "Troupe maintainers <maintainers@troupe.invalid>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "actor-model runtime for distributed data-parallel training")
set(CPACK_PACKAGING_INSTALL_PREFIX "${TROUPE_PACKAGE_PREFIX}")
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL runtime development node)
if(TARGET troupe_cuda)
  list(APPEND CPACK_COMPONENTS_ALL cuda)
endif()
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION libs)

set(troupe_runtime_package "libtroupe${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR}")
set(troupe_exact_runtime "${troupe_runtime_package} (= ${PROJECT_VERSION})")
set(CPACK_DEBIAN_RUNTIME_PACKAGE_NAME "${troupe_runtime_package}")
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SHLIBDEPS ON)
# The CUDA module links the toolkit's runtime and cuBLAS, which no Debian
# package of the archive provides: dpkg-shlibdeps treats them as private
# (docs/api.md says what a host needs).
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS "${CUDAToolkit_LIBRARY_DIR}")
set(CPACK_COMPONENT_RUNTIME_DESCRIPTION "Troupe's runtime library")

set(CPACK_DEBIAN_CUDA_PACKAGE_NAME "libtroupe-cuda${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR}")
set(CPACK_DEBIAN_CUDA_PACKAGE_DEPENDS "${troupe_exact_runtime}")
set(CPACK_COMPONENT_CUDA_DESCRIPTION
    "Troupe's CUDA backend, loaded for cuda:N devices (needs the CUDA toolkit's runtime and cuBLAS)")

set(CPACK_DEBIAN_DEVELOPMENT_PACKAGE_NAME libtroupe-dev)
set(CPACK_DEBIAN_DEVELOPMENT_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_DEVELOPMENT_PACKAGE_DEPENDS "${troupe_exact_runtime}")
set(CPACK_COMPONENT_DEVELOPMENT_DESCRIPTION
    "Troupe's public headers and CMake package (find_package(Troupe))")

set(CPACK_DEBIAN_NODE_PACKAGE_NAME troupe-node)
set(CPACK_DEBIAN_NODE_PACKAGE_SECTION net)
set(CPACK_DEBIAN_NODE_PACKAGE_DEPENDS "${troupe_exact_runtime}")
set(CPACK_COMPONENT_NODE_DESCRIPTION
    "troupe-node, a daemon that hosts Troupe replicas and store shards, and troupe-model")

include(CPack)
