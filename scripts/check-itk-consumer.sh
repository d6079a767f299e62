#!/usr/bin/env bash
# check-itk-consumer.sh ITK_DIR: builds ITK's MedianImageFilter example,
# unmodified, the way an ITK user builds a program (find_package(ITK
# COMPONENTS CudaImageFilters ...), include(${ITK_USE_FILE}),
# target_link_libraries(... ${ITK_LIBRARIES})) against an ITK build tree
# with the module enabled (scripts/build-itk-python-wrapping.sh makes one in
# ~/itk-wrapping/build), and checks that the object factory is registered
# with no change to the program: the registration library is linked
# (DT_NEEDED, under Debian's --as-needed), CUDAIMAGEFILTERS_VERBOSE=1 shows
# CudaMedianImageFilter, and the output equals ITK's (the same program run
# with CUDAIMAGEFILTERS_NO_ITK_OVERRIDES=1, which must not show our class;
# no build of this repository needed). Not in CI (it
# needs that ITK tree). CONSUMER_STYLE=itk6 builds it the way ITK 6's
# migration guide recommends instead (itk_generate_factory_registration(),
# ${ITK_INTERFACE_LIBRARIES} and ITK::ITKImageIO, no UseITK.cmake).
set -euo pipefail
itk_dir=${1:-$HOME/itk-wrapping/build}
repo=$(cd "$(dirname "$0")/.." && pwd)
examples=/usr/share/doc/insighttoolkit5-examples/examples
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [ "${CONSUMER_STYLE:-use-file}" = itk6 ]; then
  # ITK 6's recommended style (its migration guide): no UseITK.cmake;
  # itk_generate_factory_registration() before the executable, and the
  # ITKImageIO meta-module linked for ITK's own IO factories
  cat > "$work/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.22)
project(ItkExampleConsumer CXX)
set(CMAKE_CXX_STANDARD 17)
find_package(ITK REQUIRED COMPONENTS CudaImageFilters ITKIONRRD ITKIOMeta ITKSmoothing ITKImageIO)
itk_generate_factory_registration()
add_executable(MedianImageFilter $examples/Filtering/MedianImageFilter.cxx)
target_link_libraries(MedianImageFilter \${ITK_INTERFACE_LIBRARIES} ITK::ITKImageIO)
CMAKE
else
  cat > "$work/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.16)
project(ItkExampleConsumer CXX)
set(CMAKE_CXX_STANDARD 17)
find_package(ITK REQUIRED COMPONENTS CudaImageFilters ITKIONRRD ITKIOMeta ITKSmoothing)
include(\${ITK_USE_FILE})
add_executable(MedianImageFilter $examples/Filtering/MedianImageFilter.cxx)
target_link_libraries(MedianImageFilter \${ITK_LIBRARIES})
CMAKE
fi
cmake -S "$work" -B "$work/b" -DITK_DIR="$itk_dir" > "$work/configure.log"
cmake --build "$work/b" > "$work/build.log"
echo "linked: $(readelf -d "$work/b/MedianImageFilter" | grep -o 'lib[A-Za-z]*CudaImageFilters[A-Za-z-]*[0-9.]*so[0-9.]*' | tr '\n' ' ')"
input=$examples/Data/BrainProtonDensitySliceBorder20.nhdr
CUDAIMAGEFILTERS_VERBOSE=1 "$work/b/MedianImageFilter" "$input" "$work/module.nrrd" 2> "$work/stderr.txt"
cat "$work/stderr.txt"
grep -q "cudaimagefilters: CudaMedianImageFilter: " "$work/stderr.txt" || { echo "FAIL: the module's class did not run"; exit 1; }
# the reference: the same program with the module's overrides off (ITK's own filter runs), so
# that the check needs no build of this repository; the median is ITK-exact, the files equal
CUDAIMAGEFILTERS_NO_ITK_OVERRIDES=1 CUDAIMAGEFILTERS_VERBOSE=1 "$work/b/MedianImageFilter" "$input" "$work/itk.nrrd" 2> "$work/stderr-itk.txt"
if grep -q "cudaimagefilters: CudaMedianImageFilter: " "$work/stderr-itk.txt"; then
  echo "FAIL: CUDAIMAGEFILTERS_NO_ITK_OVERRIDES=1 did not turn the override off"; exit 1
fi
cmp -s "$work/itk.nrrd" "$work/module.nrrd" || { echo "FAIL: outputs differ from ITK's own filter"; exit 1; }
echo "PASS"
