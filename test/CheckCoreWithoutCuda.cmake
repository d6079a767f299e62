# CTest: the core builds without CUDA. Every core's CUDA entry points then
# come from its *Stubs.cxx (compiled only when CUDAIMAGEFILTERS_WITH_CUDA is
# not defined, so a build with nvcc never compiles them): this configures the
# source tree with CUDAIMAGEFILTERS_USE_CUDA=OFF in a directory of its own,
# builds the core library alone, and links it with --no-undefined, so a stub
# that does not compile, or an instantiation list that names a type no stub
# instantiates, fails here.
# SKBUILD=ON configures the core alone, without ITK (as pip does), so the
# check needs only CMake and the compiler; where the compiler is absent (a
# packed build on the GPU machine may lack it) it prints SKIPPED.
#   cmake -DROOT=<source dir> -DDIR=<build dir> [-DCXX=<compiler>] -P CheckCoreWithoutCuda.cmake
cmake_minimum_required(VERSION 3.16)
if(CXX AND NOT EXISTS "${CXX}")
  message(STATUS "SKIPPED: no C++ compiler at ${CXX} on this machine")
  return()
endif()
# Compiled without optimisation (the Debug type's flags set to -O0 alone):
# the check is that every stub compiles and every symbol links, which the
# optimiser does not change (at -O0 nothing unused is dropped, so it is, if
# anything, stricter), and the core's optimised CPU code is already built
# by the main build and the CPU wheel.
set(args -S "${ROOT}" -B "${DIR}" -DCMAKE_BUILD_TYPE=Debug "-DCMAKE_CXX_FLAGS_DEBUG=-O0"
         -DCUDAIMAGEFILTERS_USE_CUDA=OFF -DSKBUILD=ON
         -DCUDAIMAGEFILTERS_BUILD_APPS=OFF -DCUDAIMAGEFILTERS_BUILD_BENCHMARKS=OFF
         -DCUDAIMAGEFILTERS_BUILD_PYTHON=OFF "-DCMAKE_SHARED_LINKER_FLAGS=-Wl,--no-undefined")
if(CXX)
  list(APPEND args "-DCMAKE_CXX_COMPILER=${CXX}")
endif()
execute_process(COMMAND "${CMAKE_COMMAND}" ${args} RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "configuring without CUDA failed:\n${out}")
endif()
execute_process(COMMAND "${CMAKE_COMMAND}" --build "${DIR}" --target CudaImageFiltersCore -j 2
                RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "the core without CUDA did not build or link:\n${out}")
endif()
file(GLOB library "${DIR}/lib/libCudaImageFiltersCore*")
if(NOT library)
  message(FATAL_ERROR "the build without CUDA made no libCudaImageFiltersCore in ${DIR}/lib")
endif()
message(STATUS "the core without CUDA builds and links (no undefined symbols): ${library}")
