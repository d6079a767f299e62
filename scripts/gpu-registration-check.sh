#!/usr/bin/env bash
# The GPU machine's check of the registration work (issue 23) on a packed
# build (../shared/tools/device-pack), in one device call:
#   1. the metric tests and ITK's registration examples (ctest -R), with
#      CUDAIMAGEFILTERS_REQUIRE_GPU=1;
#   2. compute-sanitizer memcheck and racecheck on the metric's GPU suites;
#   3. MetricBenchmark (arguments: $BENCH_ARGS).
# Usage there: bash scripts/gpu-registration-check.sh [steps, default "1 2 3"];
# logs in $OUT.
set -uo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
out=${OUT:-/tmp/gpu-registration-check}
mkdir -p "$out"
steps=${1:-1 2 3}
[ -x /usr/bin/cmake ] || ln -sf "$(command -v cmake)" /usr/bin/cmake
.device/run true > /dev/null || exit 1
build=$(cat .device/origin)
export CUDAIMAGEFILTERS_REQUIRE_GPU=1
for step in $steps; do
  case $step in
    1) timeout 240 .device/run bash -c "cd '$build' && ctest -j8 -R 'Metric|itk_examples' --output-on-failure" \
         > "$out/ctest.log" 2>&1
       echo "ctest exit $?"; grep -E "tests passed|tests failed|\(Failed\)" "$out/ctest.log" | head -20 ;;
    2) SANITIZE_TIMEOUT=${SANITIZE_TIMEOUT:-200} OUT="$out/sanitize" bash "$repo/scripts/sanitize-gpu-tests.sh" all Metricv4 ;;
    3) timeout 400 .device/run "$build/bin/MetricBenchmark" ${BENCH_ARGS:-} > "$out/metric-benchmark.txt" 2>&1
       echo "benchmark exit $?"; cat "$out/metric-benchmark.txt" ;;
  esac
done
