#!/usr/bin/env bash
# ---------------------------------------------------------------------------
# build-itk-versions.sh: builds ITK 5.4 and ITK 6.0 from source with this
# module as a remote module, then builds and runs the module's C++ tests
# against each. Not run in CI (hours on 2 cores); CI keeps Debian's 5.2.1.
#
# What it does, for each version asked for (default "5.4 6.0"):
#   1. Fetches ITK's source.
#      - 5.4: Debian's source package, as scripts/build-itk-python-wrapping.sh
#        fetches 5.2.1, but from Debian unstable (insighttoolkit5 5.4.x with
#        Debian's patches): `apt-get source` with a private apt configuration
#        under WORKDIR/apt (a deb-src line for sid, its own lists and cache),
#        so the system's apt sources are not touched and no root is needed.
#        ITK_54_SUITE picks another suite (trixie has 5.4.3).
#      - 6.0: Debian has no ITK 6 (neither unstable nor experimental, checked
#        2026-11-27), so it is a shallow clone of ITK's git tag
#        ITK_60_TAG (default v6.0b02, the newest beta) from ITK_GIT (default
#        https://github.com/InsightSoftwareConsortium/ITK.git; a local
#        mirror works: ITK_GIT=file:///path/to/ITK.git).
#   2. Copies this repository into Modules/Remote/CudaImageFilters (what
#      ITK's remote-module mechanism does once it has fetched a module) and
#      configures ITK with Module_CudaImageFilters=ON, only the modules it
#      and its tests need (ITK_BUILD_DEFAULT_MODULES=OFF), BUILD_TESTING=OFF,
#      Release, C++17, shared libraries, ITK_FORBID_DOWNLOADS. CUDA is on when
#      nvcc is found, unless CUDAIMAGEFILTERS_USE_CUDA=OFF.
#   3. Builds it (ninja): ITK's modules and the module's two libraries
#      (CudaImageFilters, CudaImageFiltersFactoryRegistration) inside ITK.
#   4. Runs scripts/check-itk-consumer.sh against the ITK build: ITK's
#      MedianImageFilter example, unmodified, built the ITK way
#      (find_package(ITK COMPONENTS CudaImageFilters ...)), runs our class
#      through the object factory and gives ITK's output.
#   5. Builds this repository standalone against the same ITK build tree
#      (-DITK_DIR=<ITK build>): the tool and every C++ test (no benchmarks),
#      then runs ctest. ITK's build tree exports the in-tree module's targets
#      under the names the standalone build defines, so ITK is first
#      reconfigured with Module_CudaImageFilters=OFF and the modules it
#      depends on kept on (nothing of ITK is rebuilt; step 2 turns it on
#      again on a re-run). The standalone build's
#      CUDA setting is MODULE_TEST_CUDA (default OFF: on a machine without a
#      GPU the GPU tests skip either way, the CUDA kernels see no ITK header,
#      and step 3 already compiled them against this ITK).
#   With WITH_ITKCUDACOMMON=1, ITKCudaCommon (RTK's CUDA base) joins as a
#   second remote module of the same ITK (Modules/Remote/CudaCommon, cloned
#   from ITKCUDACOMMON_GIT at ITKCUDACOMMON_TAG, default
#   https://github.com/RTKConsortium/ITKCudaCommon.git v2.1.0.post1, built for
#   CUDA architecture 90: its default 52 is gone from CUDA 13), and step 4
#   also builds test/itkcudacommon against that ITK: a program that uses both
#   modules' image classes (itk::CudaImage and itk::CudaFilterImage), and
#   the zero-copy exchange test (include/interop/itkCudaCommonInterop.h),
#   which needs a GPU to do more than say so (device-pack its build folder).
#   SKIP_MODULE_TESTS=1 stops after step 4 (keeps ITK's build tree with the
#   module in it).
#   Each step's log is WORKDIR/<version>/<step>.log; a summary line per
#   version is printed at the end, and written to WORKDIR/summary.txt.
#
# Usage
#   scripts/build-itk-versions.sh [VERSION ...]     (VERSION: 5.4, 6.0)
#   WORKDIR: ${WORK:-$HOME/itk-versions}, outside the repository.
#   Environment: JOBS (default nproc), CUDAIMAGEFILTERS_USE_CUDA (ON/OFF),
#   MODULE_TEST_CUDA (ON/OFF), ITK_54_SUITE, ITK_60_TAG, ITK_GIT.
#   Needs: dpkg-dev (apt-get source), git, cmake >= 3.22 (ITK 6), ninja,
#   g++, libgtest-dev, insighttoolkit5-examples (the tests' images).
#   Re-running is incremental: sources are not fetched again, build
#   directories are reused.
#
# Cost (2 cores): see docs/Building.md for the measured run.
# Exit status: 0 when every version built and passed, 1 otherwise.
# ---------------------------------------------------------------------------
set -uo pipefail

REPO_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
WORK_DIR=${WORK:-$HOME/itk-versions}
JOBS=${JOBS:-$(nproc)}
USE_CUDA=${CUDAIMAGEFILTERS_USE_CUDA:-ON}
TEST_CUDA=${MODULE_TEST_CUDA:-OFF}
ITK_54_SUITE=${ITK_54_SUITE:-sid}
ITK_60_TAG=${ITK_60_TAG:-v6.0b02}
ITK_GIT=${ITK_GIT:-https://github.com/InsightSoftwareConsortium/ITK.git}
WITH_ITKCUDACOMMON=${WITH_ITKCUDACOMMON:-0}
ITKCUDACOMMON_GIT=${ITKCUDACOMMON_GIT:-https://github.com/RTKConsortium/ITKCudaCommon.git}
ITKCUDACOMMON_TAG=${ITKCUDACOMMON_TAG:-v2.1.0.post1}
MODULE_NAME=CudaImageFilters
versions=("$@")
[ ${#versions[@]} -gt 0 ] || versions=(5.4 6.0)

case "$WORK_DIR" in
  "$REPO_DIR"|"$REPO_DIR"/*)
    echo "The work directory must be outside the repository." >&2
    exit 2
    ;;
esac
mkdir -p "$WORK_DIR"
WORK_DIR=$(cd "$WORK_DIR" && pwd)

step() { printf '\n=== %s: %s\n' "$(date '+%H:%M:%S')" "$*"; }

nvcc=""
if [ "$USE_CUDA" = ON ]; then
  if [ -x /usr/local/cuda/bin/nvcc ]; then
    nvcc=/usr/local/cuda/bin/nvcc
  elif command -v nvcc >/dev/null; then
    nvcc=$(command -v nvcc)
  fi
fi

# ITK 5.4 from Debian's source package (private apt configuration)
fetch_54() {
  local dir=$1
  local apt="$WORK_DIR/apt"
  mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial"
  cat > "$apt/sources.list" <<EOF
deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian $ITK_54_SUITE main
EOF
  local opts=(-o "Dir::Etc::SourceList=$apt/sources.list" -o "Dir::Etc::SourceParts=/dev/null"
    -o "Dir::State::Lists=$apt/lists" -o "Dir::Cache=$apt/cache" -o "Debug::NoLocking=1")
  apt-get "${opts[@]}" update -q || return 1
  mkdir -p "$dir.fetch"
  (cd "$dir.fetch" && apt-get "${opts[@]}" source insighttoolkit5) || return 1
  local unpacked
  unpacked=$(find "$dir.fetch" -maxdepth 1 -type d -name 'insighttoolkit5-5.4*' | head -1)
  [ -n "$unpacked" ] || { echo "no ITK 5.4 source in $ITK_54_SUITE" >&2; return 1; }
  mv "$unpacked" "$dir"
}

# ITK 6.0 from ITK's git tag
fetch_60() {
  local dir=$1
  git clone -q --depth 1 --branch "$ITK_60_TAG" "$ITK_GIT" "$dir"
}

summary=()
overall=0
for version in "${versions[@]}"; do
  vdir="$WORK_DIR/$version"
  src="$vdir/src"
  itk_build="$vdir/itk-build"
  module_build="$vdir/module-build"
  mkdir -p "$vdir"
  result="ITK $version:"
  failed=0

  # 1. source
  if [ ! -f "$src/CMakeLists.txt" ]; then
    step "ITK $version: fetch the source"
    case "$version" in
      5.4) fetch_54 "$src" > "$vdir/fetch.log" 2>&1 ;;
      6.0) fetch_60 "$src" > "$vdir/fetch.log" 2>&1 ;;
      *) echo "unknown version $version (5.4 or 6.0)" >&2; exit 2 ;;
    esac || { summary+=("$result FAIL (fetching the source, $vdir/fetch.log)"); overall=1; continue; }
  fi
  itk_version=$(sed -n 's/^set(ITK_VERSION_\(MAJOR\|MINOR\|PATCH\) "\([0-9]*\)")/\2/p' "$src/CMake/itkVersion.cmake" | paste -sd.)
  step "ITK $version: source is ITK $itk_version ($src)"
  case "$itk_version" in
    "$version".*) ;;
    *) summary+=("$result FAIL (the source is ITK $itk_version)"); overall=1; continue ;;
  esac

  # 2. the module in-tree, configure
  dest="$src/Modules/Remote/$MODULE_NAME"
  bash "$REPO_DIR/scripts/copy-module-into-itk.sh" "$dest"
  cuda_args=(-DCUDAIMAGEFILTERS_USE_CUDA=OFF)
  [ -n "$nvcc" ] && cuda_args=(-DCUDAIMAGEFILTERS_USE_CUDA=ON "-DCMAKE_CUDA_COMPILER=$nvcc")
  if [ "$WITH_ITKCUDACOMMON" = 1 ]; then
    if [ -z "$nvcc" ]; then
      echo "WITH_ITKCUDACOMMON=1 needs nvcc" >&2; exit 2
    fi
    if [ ! -f "$WORK_DIR/ITKCudaCommon/itk-module.cmake" ]; then
      git clone -q --depth 1 --branch "$ITKCUDACOMMON_TAG" "$ITKCUDACOMMON_GIT" "$WORK_DIR/ITKCudaCommon" ||
        { summary+=("$result FAIL (cloning ITKCudaCommon)"); overall=1; continue; }
    fi
    mkdir -p "$src/Modules/Remote/CudaCommon"
    (cd "$WORK_DIR/ITKCudaCommon" && git ls-files -z | tar --null -T - -cf -) | tar -xf - -C "$src/Modules/Remote/CudaCommon"
    cuda_args+=(-DModule_CudaCommon=ON -DCMAKE_CUDA_ARCHITECTURES=90)
  fi
  step "ITK $itk_version: configure with Module_$MODULE_NAME (${cuda_args[*]})"
  if ! cmake -G Ninja -S "$src" -B "$itk_build" \
      -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_STANDARD=17 -DBUILD_SHARED_LIBS=ON \
      -DBUILD_TESTING=OFF -DBUILD_EXAMPLES=OFF -DITK_BUILD_DEFAULT_MODULES=OFF -DITKGroup_Core=OFF \
      -DITK_FORBID_DOWNLOADS=ON -DITK_WRAP_PYTHON=OFF \
      "-DModule_$MODULE_NAME=ON" -DModule_ITKIONIFTI=ON -DModule_ITKIONRRD=ON -DModule_ITKIOMeta=ON \
      -DModule_ITKIOPNG=ON -DModule_ITKIOTransformInsightLegacy=ON \
      "${cuda_args[@]}" > "$vdir/itk-configure.log" 2>&1; then
    tail -30 "$vdir/itk-configure.log"
    summary+=("$result FAIL (configuring ITK with the module, $vdir/itk-configure.log)"); overall=1; continue
  fi

  # 3. build ITK and the module inside it
  step "ITK $itk_version: build (nice ninja -k 0 -j$JOBS)"
  start=$(date +%s)
  nice -n 19 ninja -C "$itk_build" -k 0 -j"$JOBS" > "$vdir/itk-build.log" 2>&1
  status=$?
  elapsed=$(( $(date +%s) - start ))
  if [ $status != 0 ]; then
    grep -B2 -A12 "error" "$vdir/itk-build.log" | head -80
    summary+=("$result FAIL (building ITK with the module, $vdir/itk-build.log)"); overall=1; continue
  fi
  result+=" in-tree build OK (${elapsed} s);"

  # 4. an unmodified ITK example through the factory
  step "ITK $itk_version: ITK's MedianImageFilter example, unmodified, against the module"
  if bash "$REPO_DIR/scripts/check-itk-consumer.sh" "$itk_build" > "$vdir/consumer.log" 2>&1; then
    result+=" unmodified example: PASS"
  else
    result+=" unmodified example: FAIL ($vdir/consumer.log)"
    failed=1
  fi
  # 4b. ITKCudaCommon beside this module: test/itkcudacommon, built against
  #     this ITK (both modules' images in one program, and the zero-copy
  #     exchange between them; on a machine without a GPU the exchange test
  #     says so and passes, run it on the GPU machine with device-pack)
  if [ "$WITH_ITKCUDACOMMON" = 1 ]; then
    step "ITK $itk_version: test/itkcudacommon (ITKCudaCommon's CudaImage and this module's CudaFilterImage)"
    both="$vdir/itkcudacommon-build"
    if cmake -G Ninja -S "$REPO_DIR/test/itkcudacommon" -B "$both" -DITK_DIR="$itk_build" \
          -DCMAKE_BUILD_TYPE=Release > "$vdir/itkcudacommon.log" 2>&1 &&
       nice -n 19 ninja -C "$both" >> "$vdir/itkcudacommon.log" 2>&1 &&
       "$both/itkCudaCommonBesideModule" >> "$vdir/itkcudacommon.log" 2>&1 &&
       "$both/itkCudaCommonInteropTest" >> "$vdir/itkcudacommon.log" 2>&1; then
      result+=" ITKCudaCommon beside it: PASS ($(grep -m1 'in one program' "$vdir/itkcudacommon.log"); exchange test: $(tail -1 "$vdir/itkcudacommon.log"));"
    else
      tail -20 "$vdir/itkcudacommon.log"
      result+=" ITKCudaCommon beside it: FAIL ($vdir/itkcudacommon.log);"
      failed=1
    fi
  fi
  if [ "${SKIP_MODULE_TESTS:-0}" = 1 ]; then
    summary+=("$result module tests skipped (SKIP_MODULE_TESTS=1)")
    [ "$failed" = 0 ] || overall=1
    continue
  fi

  # 5. the module's tests against this ITK (without the in-tree module's targets)
  # (the modules it depends on stay on: itk-module.cmake's DEPENDS)
  keep=$(sed -n '/^  DEPENDS/,/^  TEST_DEPENDS/p' "$REPO_DIR/itk-module.cmake" | grep -v DEPENDS | tr -d ' ' |
    sed 's/^/-DModule_/; s/$/=ON/')
  # shellcheck disable=SC2086
  if ! cmake -S "$src" -B "$itk_build" "-DModule_$MODULE_NAME=OFF" $keep > "$vdir/itk-reconfigure.log" 2>&1 ||
     ! nice -n 19 ninja -C "$itk_build" -j"$JOBS" >> "$vdir/itk-reconfigure.log" 2>&1; then
    summary+=("$result FAIL (ITK without the module, $vdir/itk-reconfigure.log)"); overall=1; continue
  fi
  step "ITK $itk_version: the module standalone against it, and its tests (CUDA $TEST_CUDA)"
  start=$(date +%s)
  if ! cmake -G Ninja -S "$REPO_DIR" -B "$module_build" -DITK_DIR="$itk_build" \
        -DCUDAIMAGEFILTERS_USE_CUDA="$TEST_CUDA" -DCUDAIMAGEFILTERS_BUILD_PYTHON=OFF \
        -DCUDAIMAGEFILTERS_BUILD_BENCHMARKS=OFF \
        > "$vdir/module-configure.log" 2>&1 ||
     ! nice -n 19 ninja -C "$module_build" -j"$JOBS" > "$vdir/module-build.log" 2>&1; then
    grep -B2 -A12 "error" "$vdir/module-configure.log" "$vdir/module-build.log" | head -80
    summary+=("$result FAIL (building the module's tests, $vdir/module-build.log)"); overall=1; continue
  fi
  (cd "$module_build" && ctest -j"$JOBS" --output-on-failure) > "$vdir/ctest.log" 2>&1
  status=$?
  elapsed=$(( $(date +%s) - start ))
  tests=$(grep -E "tests passed|tests failed" "$vdir/ctest.log" | tail -1)
  result+=" tests: $tests (${elapsed} s);"
  [ $status = 0 ] || failed=1

  [ $failed = 0 ] && result+=" => PASS" || { result+=" => FAIL"; overall=1; }
  summary+=("$result")
done

step "summary"
printf '%s\n' "${summary[@]}" | tee "$WORK_DIR/summary.txt"
exit $overall
