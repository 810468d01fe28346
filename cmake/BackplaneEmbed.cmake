# backplane_embed_files(OUTPUT <file.cpp> DIRECTORY <folder> GLOB <pattern> INCLUDE <header>
#                       NAMESPACE <namespace> ARRAY <name> COUNT <name>)
#
# Embeds text files in a program, so that it runs without its source tree: generates OUTPUT, a
# C++ source that defines <NAMESPACE>::<ARRAY>[], one EmbeddedFile {name, text} per file of
# DIRECTORY matching GLOB (in name order, each text as a raw string literal), and
# <NAMESPACE>::<COUNT>, their number. INCLUDE is the header that declares EmbeddedFile, the
# array and the count. OUTPUT is regenerated when a file changes and rewritten only when its
# content changes, so that an unchanged file rebuilds nothing.
#
# The same file is the script that writes OUTPUT (cmake -P, with the arguments as -D values).
set(_backplane_embed_script "${CMAKE_CURRENT_LIST_FILE}")

function(backplane_embed_files)
  cmake_parse_arguments(PARSE_ARGV 0 ARG "" "OUTPUT;DIRECTORY;GLOB;INCLUDE;NAMESPACE;ARRAY;COUNT"
                        "")
  foreach(required IN ITEMS OUTPUT DIRECTORY GLOB INCLUDE NAMESPACE ARRAY COUNT)
    if(NOT ARG_${required})
      message(FATAL_ERROR "backplane_embed_files: ${required} is required")
    endif()
  endforeach()
  file(GLOB files CONFIGURE_DEPENDS "${ARG_DIRECTORY}/${ARG_GLOB}")
  file(RELATIVE_PATH source_folder "${PROJECT_SOURCE_DIR}" "${ARG_DIRECTORY}")
  add_custom_command(
    OUTPUT "${ARG_OUTPUT}"
    COMMAND ${CMAKE_COMMAND} "-DDIRECTORY=${ARG_DIRECTORY}" "-DGLOB=${ARG_GLOB}"
            "-DSOURCE_FOLDER=${source_folder}" "-DOUTPUT=${ARG_OUTPUT}" "-DINCLUDE=${ARG_INCLUDE}"
            "-DNAMESPACE=${ARG_NAMESPACE}" "-DARRAY=${ARG_ARRAY}" "-DCOUNT=${ARG_COUNT}"
            -P "${_backplane_embed_script}"
    DEPENDS ${files} "${_backplane_embed_script}"
    COMMENT "Embedding ${source_folder}/${ARG_GLOB}"
    VERBATIM)
endfunction()

if(CMAKE_SCRIPT_MODE_FILE)
  file(GLOB names RELATIVE "${DIRECTORY}" "${DIRECTORY}/${GLOB}")
  list(SORT names)
  set(delimiter "BPEMBED")
  set(content "// Generated from ${SOURCE_FOLDER}/${GLOB} by cmake/BackplaneEmbed.cmake. ")
  string(APPEND content "Do not edit.\n")
  string(APPEND content "#include \"${INCLUDE}\"\n\n#include <iterator>\n\n")
  string(APPEND content "namespace ${NAMESPACE} {\n\nconst EmbeddedFile ${ARRAY}[] = {\n")
  foreach(name IN LISTS names)
    file(READ "${DIRECTORY}/${name}" text)
    string(FIND "${text}" ")${delimiter}\"" delimiter_at)
    if(NOT delimiter_at EQUAL -1)
      message(FATAL_ERROR "${DIRECTORY}/${name} contains the raw string delimiter )${delimiter}\"")
    endif()
    string(APPEND content "    {\"${name}\", R\"${delimiter}(${text})${delimiter}\"},\n")
  endforeach()
  string(APPEND content "};\n\nconst size_t ${COUNT} = std::size(${ARRAY});\n\n")
  string(APPEND content "}  // namespace ${NAMESPACE}\n")

  file(WRITE "${OUTPUT}.tmp" "${content}")
  file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
  file(REMOVE "${OUTPUT}.tmp")
endif()
