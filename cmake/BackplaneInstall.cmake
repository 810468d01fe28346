# `make install PREFIX=...`: headers, libbackplane, bp-codegen, bp-info, bp-conformance, every
# bundled plugin this build made under lib/backplane/plugins, ops.yaml, the docs and the vendor
# sample the plugin guide walks through under share/backplane, and a CMake package so that
# vendors can find_package(Backplane) and call backplane_add_plugin. The Python package installs
# from python/CMakeLists.txt.
include(CMakePackageConfigHelpers)

set(BACKPLANE_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/Backplane)

set_target_properties(bp-info bp-codegen bp-conformance
                      PROPERTIES INSTALL_RPATH "$ORIGIN/../${CMAKE_INSTALL_LIBDIR}")
install(TARGETS backplane backplane_sdk EXPORT BackplaneTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS bp-info bp-codegen bp-conformance RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
get_property(bundled_plugins GLOBAL PROPERTY BACKPLANE_BUNDLED_PLUGINS)
install(TARGETS ${bundled_plugins} LIBRARY DESTINATION ${BACKPLANE_PLUGIN_SUBDIR})

install(DIRECTORY ${PROJECT_SOURCE_DIR}/sdk/include/ ${PROJECT_SOURCE_DIR}/core/include/
        ${PROJECT_BINARY_DIR}/core/generated/public/
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES ${PROJECT_SOURCE_DIR}/core/ops/ops.yaml
        DESTINATION ${CMAKE_INSTALL_DATADIR}/backplane)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DATADIR}/backplane/docs)
# Each bundled backend is documented in its own folder's README; the docs link to them as
# ../plugins/<name>/README.md, which this layout keeps valid once installed.
foreach(backend IN ITEMS cpu cuda opencl)
  install(FILES ${PROJECT_SOURCE_DIR}/plugins/${backend}/README.md
          DESTINATION ${CMAKE_INSTALL_DATADIR}/backplane/plugins/${backend})
endforeach()
install(DIRECTORY ${PROJECT_SOURCE_DIR}/samples/vendor_plugin
        DESTINATION ${CMAKE_INSTALL_DATADIR}/backplane/samples)

install(EXPORT BackplaneTargets NAMESPACE Backplane:: DESTINATION ${BACKPLANE_CMAKE_DIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/BackplaneConfig.cmake.in
  ${PROJECT_BINARY_DIR}/BackplaneConfig.cmake
  INSTALL_DESTINATION ${BACKPLANE_CMAKE_DIR}
  PATH_VARS CMAKE_INSTALL_BINDIR CMAKE_INSTALL_DATADIR)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/BackplaneConfigVersion.cmake
  COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/BackplaneConfig.cmake
              ${PROJECT_BINARY_DIR}/BackplaneConfigVersion.cmake
              ${PROJECT_SOURCE_DIR}/cmake/BackplanePlugin.cmake
        DESTINATION ${BACKPLANE_CMAKE_DIR})
