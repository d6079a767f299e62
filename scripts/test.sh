#!/usr/bin/env bash
# Command 2 of the README: set up, build, and run every test: the C++ tests
# (CTest), then the Python package built from the same tree (the core is not
# compiled again) and its tests (pytest, against PyPI's itk). GPU tests skip
# without a GPU; set CUDAIMAGEFILTERS_REQUIRE_GPU=1 to make them fail instead.
set -euo pipefail
cd "$(dirname "$0")/.."
# each stage's wall time, so that a slower CI run says where its time went
stage_start=$SECONDS
stage() {
  echo "test.sh: $1 took $((SECONDS - stage_start)) s (total $SECONDS s)"
  stage_start=$SECONDS
}
bash scripts/setup.sh
stage "setup and build"
(cd build && ctest --output-on-failure -j"$(nproc)" "$@")
stage "ctest"

# Python: a virtual environment in .venv (never the system Python)
venv=.venv
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
"$venv/bin/python" -m pip install -q --upgrade pip
"$venv/bin/python" -m pip install -q "itk>=5.4,<5.5" numpy scipy "dask[array,distributed]" pytest "scikit-build-core>=0.10" "nanobind>=2.4"
stage "virtual environment and PyPI packages"
CMAKE_GENERATOR="Unix Makefiles" "$venv/bin/python" -m pip install -q --no-build-isolation -Cbuild-dir=build .
stage "the package from the build tree"
CUDAIMAGEFILTERS_CLI="$PWD/build/bin/cudaimagefilters" CUDAIMAGEFILTERS_TEST_DATA="$PWD/build/Data" \
  "$venv/bin/python" -m pytest python/tests -q -p no:cacheprovider
stage "pytest"

# The CPU wheel, as a user without a compiler would get it: built and
# repaired by auditwheel (scripts/build-wheel.sh cpu), installed into a fresh
# virtual environment with its dependencies (itk, numpy) from PyPI, and tested
# there, outside the source tree. The CUDA wheel is scripts/build-wheel.sh
# cuda (docs/Python.md, "Binary wheels").
wheel=$(bash scripts/build-wheel.sh cpu build/wheel | tail -n 1)
stage "the CPU wheel"
fresh="$PWD/build/wheel/venv"
rm -rf "$fresh"
python3 -m venv "$fresh"
"$fresh/bin/python" -m pip install -q "$wheel" pytest scipy
(cd build/wheel && "$fresh/bin/python" -c 'import sys, cudaimagefilters as c
assert c.__file__.startswith(sys.prefix), c.__file__
assert not c.is_compiled_with_cuda()
print("CPU wheel:", c.__file__)')
tests="$PWD/python/tests" data="$PWD/build/Data"
(cd build/wheel && CUDAIMAGEFILTERS_TEST_DATA="$data" "$fresh/bin/python" -m pytest -q -p no:cacheprovider \
  "$tests/test_install.py" "$tests/test_arrays.py" "$tests/test_filters.py" "$tests/test_accelerate.py")
stage "the CPU wheel's environment and tests"
