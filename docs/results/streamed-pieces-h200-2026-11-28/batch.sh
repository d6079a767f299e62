#!/usr/bin/env bash
# The GPU machine's check of the streamed one-piece path, with a packed build
# (../shared/tools/device-pack) and the cu13 wheel in .whl/. Usage there, from
# the repository root: bash docs/results/streamed-pieces-h200-2026-11-28/batch.sh A|B
# A: the tests (REQUIRE_GPU), compute-sanitizer on them, the 512^3 benchmarks;
# B: the 1024^3 benchmarks and Python on NumPy.
set -uo pipefail
out=${OUT:-/tmp/streamed}
mkdir -p "$out"
b=$(cat .device/origin)
export CUDAIMAGEFILTERS_REQUIRE_GPU=1
case ${1:-A} in
  A)
    nvidia-smi -L
    for t in itkCudaStreamedTest itkCudaImageTest itkCudaSlabsTest itkCudaMemoryReturnTest itkCudaMaskImageFilterTest itkCudaBinaryThresholdImageFilterTest itkCudaBinShrinkImageFilterTest; do
      timeout 120 .device/run "$b/bin/$t" > "$out/$t.log" 2>&1
      echo "$t exit $? $(grep -E '^\[  (PASSED|FAILED)' "$out/$t.log" | tr '\n' ' ')"
    done
    for tool in memcheck racecheck; do
      extra=(); [ $tool = memcheck ] && extra=(--leak-check full)
      timeout 150 .device/run compute-sanitizer --tool $tool "${extra[@]}" --error-exitcode 9 \
        "$b/bin/itkCudaStreamedTest" --gtest_filter='*Gpu*' > "$out/itkCudaStreamedTest.$tool.log" 2>&1
      echo "$tool streamed exit $? $(grep -E 'SUMMARY|PASSED|FAILED' "$out/itkCudaStreamedTest.$tool.log" | tr '\n' ' ')"
    done
    for p in off 64 16 128; do
      timeout 100 .device/run "$b/bin/WholeImageBenchmark" --sizes 512 --only mask,bin --reps 7 --piece-mib $p > "$out/whole-512-piece-$p.log" 2>&1
      echo "piece $p exit $?"; grep -E "^\| (mask|bin)" "$out/whole-512-piece-$p.log"
    done
    ;;
  B)
    for p in off 64; do
      timeout 200 .device/run "$b/bin/WholeImageBenchmark" --sizes 1024 --only mask,bin --reps 5 --piece-mib $p > "$out/whole-1024-piece-$p.log" 2>&1
      echo "piece $p exit $?"; grep -E "^\| (mask|bin)" "$out/whole-1024-piece-$p.log"
    done
    python3 -m pip install -q --no-index --no-deps --no-compile --upgrade --target /tmp/site .whl/*.whl
    PYTHONPATH=/tmp/site timeout 150 python3 -m pytest python/tests/test_mask.py python/tests/test_gpu.py -q -p no:cacheprovider > "$out/pytest.log" 2>&1
    echo "pytest exit $?"; tail -3 "$out/pytest.log"
    ;;
esac
