#!/usr/bin/env bash
# Runs every C++ GPU test (the *Gpu* suites of each test executable) under
# compute-sanitizer on the GPU machine, with a packed build
# (../shared/tools/device-pack):
#   memcheck with the leak check (device memory errors and leaks), and
#   racecheck (shared-memory hazards);
# CUDAIMAGEFILTERS_REQUIRE_GPU=1, so a test that cannot reach the GPU fails.
# Usage there, from the repository root:
#   bash scripts/sanitize-gpu-tests.sh [memcheck|racecheck|all] [TEST_NAME_REGEX]
# Each run is limited to $SANITIZE_TIMEOUT seconds (default 900; exit 124 when
# cut). Logs go to $OUT (or /tmp/sanitize); the summary lines are printed, and the
# exit status is 1 when any run reported an error or a leak.
set -uo pipefail
cd "$(dirname "$0")/.."
tools=${1:-all}
pattern=${2:-.}
out=${OUT:-/tmp/sanitize}
mkdir -p "$out"
.device/run true > /dev/null || exit 1
build=$(cat .device/origin)
export CUDAIMAGEFILTERS_REQUIRE_GPU=1
status=0
for test in "$build"/bin/itkCuda*Test; do
  name=$(basename "$test")
  [[ $name =~ $pattern ]] || continue
  # skip executables without GPU suites
  .device/run "$test" --gtest_list_tests --gtest_filter='*Gpu*' 2> /dev/null | grep -q Gpu || continue
  for tool in memcheck racecheck; do
    [[ $tools == all || $tools == "$tool" ]] || continue
    options=(--tool "$tool" --error-exitcode 9)
    [[ $tool == memcheck ]] && options+=(--leak-check full)
    log="$out/$name.$tool.log"
    timeout "${SANITIZE_TIMEOUT:-900}" .device/run compute-sanitizer "${options[@]}" "$test" --gtest_filter='*Gpu*' > "$log" 2>&1
    rc=$?
    summary=$(grep -E "ERROR SUMMARY|LEAK SUMMARY|RACECHECK SUMMARY|PASSED|FAILED" "$log" | tr '\n' ' ')
    printf '%-48s %-9s exit %3d  %s\n' "$name" "$tool" "$rc" "$summary"
    if [[ $rc -ne 0 ]] || grep -qE "LEAK SUMMARY: [1-9]" "$log"; then
      status=1
    fi
  done
done
exit $status
