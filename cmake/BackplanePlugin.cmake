# backplane_add_plugin(NAME <target> YAML <backend.yaml> SOURCES <file>... [OUTPUT_DIRECTORY <dir>])
#
# Builds a Backplane device backend plugin: runs bp-codegen on the backend YAML to generate
# <Backend>NativeFunctions.h and Register<Backend>.cpp, and compiles them with SOURCES into a
# shared library, libbackplane_<backend in lower case>.so, that exports only the plugin entry
# point. NAME is the CMake target. A project that sets no CMAKE_BUILD_TYPE (with a
# single-configuration generator) gets the plugin built with -O2 all the same.
#
# Needs BACKPLANE_CODEGEN (the bp-codegen target or executable) and BACKPLANE_OPS_YAML (the
# ops.yaml the core was built from); in-tree builds and find_package(Backplane) set both.
function(backplane_add_plugin)
  cmake_parse_arguments(PARSE_ARGV 0 ARG "" "NAME;YAML;OUTPUT_DIRECTORY" "SOURCES")
  if(NOT ARG_NAME OR NOT ARG_YAML)
    message(FATAL_ERROR "backplane_add_plugin: NAME and YAML are required")
  endif()
  get_filename_component(yaml "${ARG_YAML}" ABSOLUTE)
  if(NOT EXISTS "${yaml}")
    message(FATAL_ERROR "backplane_add_plugin(${ARG_NAME}): YAML file ${yaml} does not exist")
  endif()
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${yaml}")

  # The generated file names and the plugin's own file name carry the backend name, so it is
  # read here (plain or quoted); bp-codegen validates the whole file when it runs.
  file(STRINGS "${yaml}" backend_line REGEX "^backend:[ \t]*[\"']?[A-Za-z0-9_]+")
  if(NOT backend_line)
    message(FATAL_ERROR "${yaml}: no 'backend: <Name>' line at the start of a line; every "
                        "backend YAML names its backend")
  endif()
  list(GET backend_line 0 backend_line)
  string(REGEX REPLACE "^backend:[ \t]*[\"']?([A-Za-z0-9_]+).*" "\\1" backend "${backend_line}")
  # The loader selects the plugins of a folder by file name (BACKPLANE_BACKENDS) before opening
  # them, so the file is named after the backend, not after the target.
  string(TOLOWER "${backend}" backend_file_name)

  set(gen_dir "${CMAKE_CURRENT_BINARY_DIR}/${ARG_NAME}_generated")
  set(gen_header "${gen_dir}/${backend}NativeFunctions.h")
  set(gen_source "${gen_dir}/Register${backend}.cpp")
  add_custom_command(
    OUTPUT "${gen_header}" "${gen_source}"
    COMMAND ${BACKPLANE_CODEGEN} backend --ops "${BACKPLANE_OPS_YAML}" --backend "${yaml}"
            --out "${gen_dir}"
    DEPENDS "${yaml}" "${BACKPLANE_OPS_YAML}" ${BACKPLANE_CODEGEN}
    COMMENT "bp-codegen: ${backend} plugin registration"
    VERBATIM)

  add_library(${ARG_NAME} MODULE ${ARG_SOURCES} "${gen_source}" "${gen_header}")
  target_include_directories(${ARG_NAME} PRIVATE "${gen_dir}")
  if(TARGET Backplane::sdk)
    target_link_libraries(${ARG_NAME} PRIVATE Backplane::sdk)
  else()
    target_link_libraries(${ARG_NAME} PRIVATE backplane_sdk)
  endif()
  set_target_properties(${ARG_NAME} PROPERTIES
    PREFIX "libbackplane_"
    OUTPUT_NAME "${backend_file_name}"
    CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON)
  if(ARG_OUTPUT_DIRECTORY)
    set_target_properties(${ARG_NAME} PROPERTIES LIBRARY_OUTPUT_DIRECTORY "${ARG_OUTPUT_DIRECTORY}")
  endif()
  # CMake's empty build type compiles without optimisation, which makes kernels several times
  # slower; a plugin is compute code, so it is optimised unless its project asks otherwise.
  get_property(multi_config GLOBAL PROPERTY GENERATOR_IS_MULTI_CONFIG)
  if(NOT multi_config AND NOT CMAKE_BUILD_TYPE)
    target_compile_options(${ARG_NAME} PRIVATE $<$<COMPILE_LANG_AND_ID:CXX,GNU,Clang>:-O2>)
    message(STATUS "backplane_add_plugin(${ARG_NAME}): no CMAKE_BUILD_TYPE is set, so the plugin "
                   "is built with -O2; set CMAKE_BUILD_TYPE (Debug, Release, ...) to choose")
  endif()
  if(CMAKE_SYSTEM_NAME STREQUAL "Linux")
    # A plugin resolves nothing from the core: the ABI is all it uses.
    target_link_options(${ARG_NAME} PRIVATE "LINKER:--no-undefined")
  endif()
endfunction()
