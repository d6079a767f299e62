#!/usr/bin/env bash
# Sets up a Debian 12 machine for CudaImageFilters and builds it into build/.
# Installs Debian's ITK 5.2.1, its example images, GoogleTest, CMake, a
# compiler and Python's venv and headers (for the Python package). With the CUDA toolkit installed (nvcc under /usr/local/cuda or on
# PATH) the GPU code is built too; without it everything builds for the CPU.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(cmake g++ make libeigen3-dev libinsighttoolkit5-dev insighttoolkit5-examples libgtest-dev python3-venv python3-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "Installing: ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi

if [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH="/usr/local/cuda/bin:$PATH"
fi

# the benchmarks (executables, not tests) unless CUDAIMAGEFILTERS_BUILD_BENCHMARKS=OFF (CI: .ci/run);
# CUDAIMAGEFILTERS_QUICK_BUILD=ON (CI) compiles the tests, the tool and ITK's examples at -O1
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -USKBUILD -DCUDAIMAGEFILTERS_BUILD_PYTHON=OFF \
  -DCUDAIMAGEFILTERS_BUILD_BENCHMARKS="${CUDAIMAGEFILTERS_BUILD_BENCHMARKS:-ON}" \
  -DCUDAIMAGEFILTERS_QUICK_BUILD="${CUDAIMAGEFILTERS_QUICK_BUILD:-OFF}" >/dev/null
cmake --build build -j"$(nproc)"
