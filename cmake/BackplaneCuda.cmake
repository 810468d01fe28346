# Whether the CUDA backend can be built: the CUDA toolkit (nvcc, the runtime, cuBLASLt) is found.
# Sets BACKPLANE_CUDA_FOUND. The language is enabled here, at the top level, because the plugin,
# its tests and its benchmark (in sibling folders) all compile or link CUDA code; the toolkit's
# imported targets (CUDA::cudart, CUDA::cublasLt) are global for the same reason.
#
# Kernels are built for sm_80 (A100) and sm_90 (H100, H200), plus PTX that newer GPUs compile
# when the plugin loads; set CMAKE_CUDA_ARCHITECTURES to build for others.
option(BACKPLANE_CUDA "Build the CUDA backend when the CUDA toolkit is found" ON)
include(CheckLanguage)
set(BACKPLANE_CUDA_FOUND OFF)
if(BACKPLANE_CUDA)
  check_language(CUDA)
endif()
if(NOT BACKPLANE_CUDA)
  message(STATUS "BACKPLANE_CUDA is OFF: the cuda plugin is not built")
elseif(CMAKE_CUDA_COMPILER)
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
    set(CMAKE_CUDA_ARCHITECTURES "80-real;90-real;90-virtual")
  endif()
  enable_language(CUDA)
  # CMake 3.25 knows nvcc's C++ dialects only up to C++17, though nvcc 12 and later take C++20.
  if(NOT DEFINED CMAKE_CUDA20_STANDARD_COMPILE_OPTION
     AND CMAKE_CUDA_COMPILER_VERSION VERSION_GREATER_EQUAL 12.0)
    set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
    set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
  endif()
  # One CUDA runtime per process: the plugin's host code and its kernels share libcudart.so.
  set(CMAKE_CUDA_RUNTIME_LIBRARY Shared)
  find_package(CUDAToolkit GLOBAL)
  if(CUDAToolkit_FOUND AND TARGET CUDA::cublasLt)
    set(BACKPLANE_CUDA_FOUND ON)
  else()
    message(STATUS "nvcc found, but not the CUDA runtime and cuBLASLt: "
                   "the cuda plugin is not built")
  endif()
else()
  message(STATUS "CUDA toolkit not found (no nvcc on PATH or in CUDACXX): "
                 "the cuda plugin is not built")
endif()
