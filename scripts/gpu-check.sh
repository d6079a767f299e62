#!/usr/bin/env bash
# The GPU machine's check of a packed build (../shared/tools/device-pack) and
# a cp312 wheel of the Python package in .whl/ (pip wheel with Python 3.12):
#   1. every C++ test with CUDAIMAGEFILTERS_REQUIRE_GPU=1 (GPU tests must run);
#   2. pytest with CUDAIMAGEFILTERS_REQUIRE_GPU=1 (the ITK-comparison files
#      skip unless PyPI itk is on PYTHONPATH: the GPU machine has none, see
#      docs/Python.md for carrying it; test_gpu.py compares the GPU with the
#      CPU cores those files check against ITK, and with SciPy);
#   3. compute-sanitizer memcheck on GPU tests of the Python package (no leak
#      check there: CuPy's and torch's pools keep blocks until exit) and, with
#      the leak check, of the C++ interpolator;
#   4. benchmarks/python_overhead.py against CoreCallBenchmark and CuPy.
#   5. on a machine with two GPUs: compute-sanitizer memcheck and racecheck
#      on the two-device C++ tests, and the tool on device 1 and on a device
#      that does not exist.
# Usage there: bash scripts/gpu-check.sh [steps, default "1 2 3 4"]; logs in $OUT.
# CUDAIMAGEFILTERS_REQUIRE_GPU=2 in the environment (on a two-GPU machine)
# makes the two-device tests fail instead of skipping; the default is 1.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-/tmp/gpu-check}
mkdir -p "$out"
steps=${1:-1 2 3 4}
nvidia-smi -L
# the CLI tests call CMake at the path this machine's build used
[ -x /usr/bin/cmake ] || ln -sf "$(command -v cmake)" /usr/bin/cmake
.device/run true || exit 1
build=$(cat .device/origin)
python3 -m pip install -q --no-index --no-deps --no-compile --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
export CUDAIMAGEFILTERS_REQUIRE_GPU=${CUDAIMAGEFILTERS_REQUIRE_GPU:-1} CUDAIMAGEFILTERS_CLI="$build/bin/cudaimagefilters" CUDAIMAGEFILTERS_TEST_DATA="$build/Data"
repo=$PWD
for step in $steps; do
  case $step in
    1) timeout 300 .device/run ctest -j8 --output-on-failure > "$out/ctest.log" 2>&1
       echo "ctest exit $?"; grep -E "tests passed|tests failed|Label Time|^cpu|^gpu|Failed|\(Failed\)|Skipped" "$out/ctest.log" | head -20 ;;
    2) timeout 300 .device/run python3 -m pytest "$repo/python/tests" -q -rs -p no:cacheprovider > "$out/pytest.log" 2>&1
       echo "pytest exit $?"; tail -25 "$out/pytest.log" ;;
    3) # no leak check in Python: CuPy's and torch's memory pools keep their blocks until exit
       timeout 240 .device/run compute-sanitizer --tool memcheck --error-exitcode 9 \
         python3 -m pytest "$repo/python/tests/test_gpu.py" -q -p no:cacheprovider -k "cupy_arrays and median or packed or interpolator or torch_cuda_tensors" > "$out/memcheck-python.log" 2>&1
       echo "memcheck python exit $?"; grep -E "ERROR SUMMARY|LEAK SUMMARY|passed|failed" "$out/memcheck-python.log" | tail -5
       timeout 200 .device/run compute-sanitizer --tool memcheck --leak-check full --error-exitcode 9 \
         "$build/bin/itkCudaBSplineInterpolateImageFunctionTest" --gtest_filter='*Gpu*' > "$out/memcheck-interpolator.log" 2>&1
       echo "memcheck interpolator exit $?"; grep -E "ERROR SUMMARY|PASSED|FAILED" "$out/memcheck-interpolator.log" | tail -3 ;;
    4) timeout 300 .device/run python3 "$repo/benchmarks/python_overhead.py" --cpp "$build/bin/CoreCallBenchmark" \
         --json "$out/python_overhead.json" > "$out/python_overhead.txt" 2>&1
       echo "benchmark exit $?"; cat "$out/python_overhead.txt" ;;
    5) for tool in memcheck racecheck; do
         extra=(); [ $tool = memcheck ] && extra=(--leak-check full)
         timeout 240 .device/run compute-sanitizer --tool $tool "${extra[@]}" --error-exitcode 9 \
           "$build/bin/itkCudaMultiDeviceTest" --gtest_filter='MultiGpu.*:CudaDevice*' > "$out/$tool-multi-device.log" 2>&1
         echo "$tool multi-device exit $?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|LEAK SUMMARY|PASSED|FAILED" "$out/$tool-multi-device.log" | tail -4
       done
       image="$build/Data/KmeansTest_T1UCharRaw.nii.gz"
       CUDAIMAGEFILTERS_VERBOSE=1 .device/run "$build/bin/cudaimagefilters" median "$image" "$out/median-device1.nrrd" \
         --radius 2 --device gpu --cuda-device 1 > "$out/cli-device1.log" 2>&1
       echo "tool on device 1: exit $?"; grep -i "device" "$out/cli-device1.log" | head -3
       .device/run "$build/bin/cudaimagefilters" median "$image" "$out/median-device0.nrrd" --radius 2 --device gpu --cuda-device 0 --quiet
       cmp "$out/median-device0.nrrd" "$out/median-device1.nrrd" && echo "device 0 and device 1 files identical"
       .device/run "$build/bin/cudaimagefilters" median "$image" "$out/never.nrrd" --radius 2 --cuda-device 7 > "$out/cli-device7.log" 2>&1
       echo "tool on device 7: exit $?"; cat "$out/cli-device7.log"
       rm -f "$out"/median-device*.nrrd ;;
  esac
done
