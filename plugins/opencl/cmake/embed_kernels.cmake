# Embeds the OpenCL C files of a folder in a C++ source file, as raw string literals:
#   cmake -DKERNEL_DIR=<folder of *.cl> -DOUTPUT=<file.cpp> -P embed_kernels.cmake
# The output defines bp::opencl::kEmbeddedKernelFiles (declared in runtime/kernel_source.h) and
# is rewritten only when its content changes, so that an unchanged kernel rebuilds nothing.
file(GLOB kernel_files RELATIVE "${KERNEL_DIR}" "${KERNEL_DIR}/*.cl")
list(SORT kernel_files)

set(content "// Generated from plugins/opencl/kernels/*.cl by embed_kernels.cmake. Do not edit.\n")
string(APPEND content "#include \"runtime/kernel_source.h\"\n\nnamespace bp::opencl {\n\n")
string(APPEND content "const EmbeddedFile kEmbeddedKernelFiles[] = {\n")
foreach(name IN LISTS kernel_files)
  file(READ "${KERNEL_DIR}/${name}" text)
  if(text MATCHES "\\)BPCL\"")
    message(FATAL_ERROR "${KERNEL_DIR}/${name} contains the raw string delimiter )BPCL\"")
  endif()
  string(APPEND content "    {\"${name}\", R\"BPCL(${text})BPCL\"},\n")
endforeach()
string(APPEND content "};\n\n")
string(APPEND content
       "const size_t kEmbeddedKernelFileCount = std::size(kEmbeddedKernelFiles);\n\n")
string(APPEND content "}  // namespace bp::opencl\n")

file(WRITE "${OUTPUT}.tmp" "${content}")
file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUTPUT}.tmp")
