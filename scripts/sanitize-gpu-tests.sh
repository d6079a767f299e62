#!/usr/bin/env bash
# Runs every C++ GPU test (the *Gpu* suites of each test executable) under
# compute-sanitizer on the GPU machine, with a packed build
# (../shared/tools/device-pack):
#   memcheck with the leak check (device memory errors and leaks), and
#   racecheck (shared-memory hazards);
# CUDAIMAGEFILTERS_REQUIRE_GPU=1, so a test that cannot reach the GPU fails.
# Usage there, from the repository root:
#   bash scripts/sanitize-gpu-tests.sh [memcheck|racecheck|all] [TEST_NAME_REGEX]
# Each test case runs in its own sanitized process, $SANITIZE_JOBS of them at
# a time (default 8; the sanitizers are bound by the host's cores, so the
# slow suites, the median's and the GRBF's, finish in minutes instead of
# hours), all executables' cases in one pool (the slow suites' first),
# each limited to $SANITIZE_TIMEOUT seconds (default 600; exit 124
# when cut, which counts as a failure: a suite is clean only when every case
# ran to its end). Under racecheck the memory-return test makes 5 calls per
# filter instead of 300 (CUDAIMAGEFILTERS_MEMORY_RETURN_CALLS): racecheck
# needs each kernel once. Logs go to $OUT (or /tmp/sanitize), one per case;
# one summary line per executable and tool is printed, and the exit status is
# 1 when any case failed, was cut, or reported an error, a leak or a hazard.
# SANITIZE_RESUME=DIR (the $OUT of an earlier run of the same build): a case
# whose log there ended with exit 0 and no error, leak or hazard is not run
# again; its log is copied into $OUT, and the summary says how many came so.
# For a run longer than one call of the device tool.
set -uo pipefail
cd "$(dirname "$0")/.."
tools=${1:-all}
pattern=${2:-.}
out=${OUT:-/tmp/sanitize}
jobs=${SANITIZE_JOBS:-8}
mkdir -p "$out"
.device/run true > /dev/null || exit 1
build=$(cat .device/origin)
export CUDAIMAGEFILTERS_REQUIRE_GPU=1

# one sanitized case: TOOL EXECUTABLE CASE -> "$out/NAME.TOOL.CASE.log" and its exit status in .rc
run_case() {
  local tool=$1 test=$2 case=$3
  local log="$out/$(basename "$test").$tool.$case.log"
  local old="${SANITIZE_RESUME:-/nonexistent}/$(basename "$log")"
  if [[ -f $old.rc && $(cat "$old.rc") == 0 ]] && clean_log "$old"; then
    { cat "$old"; echo "# sanitize-gpu-tests: resumed from $old"; } > "$log"
    echo 0 > "$log.rc"
    return
  fi
  local options=(--tool "$tool" --error-exitcode 9)
  [[ $tool == memcheck ]] && options+=(--leak-check full)
  (
    [[ $tool == racecheck ]] && export CUDAIMAGEFILTERS_MEMORY_RETURN_CALLS=5
    timeout "${SANITIZE_TIMEOUT:-600}" .device/run bash -c \
      "cd '$build/test' && exec compute-sanitizer ${options[*]} '$test' --gtest_filter='$case'"
  ) > "$log" 2>&1
  echo $? > "$log.rc"
}
# a log with a zero error summary (or a zero racecheck summary), no leak and no hazard
clean_log() {
  grep -qE "(ERROR|RACECHECK) SUMMARY: 0 (errors|hazards)" "$1" &&
    ! grep -qE "(ERROR|RACECHECK) SUMMARY: [1-9]|LEAK SUMMARY: [1-9]" "$1"
}
export -f run_case clean_log
export out build

# every (tool, executable, case) in one pool, so that a slow suite's cases
# run beside the others' instead of after them: racecheck before memcheck,
# and the suites known to be slow under it (GRBF, median, memory return)
# first, so the longest cases start early
# The memory-return test reads the device's free memory, which other
# processes change: its cases run after the pool, one at a time (in the pool
# on one H100, 2026-12-07, two of its cases failed that way).
queue=$(mktemp)
alone=$(mktemp)
names=()
for test in "$build"/bin/itkCuda*Test; do
  name=$(basename "$test")
  [[ $name =~ $pattern ]] || continue
  # the executable's GPU cases, Suite.Case (skip executables without any)
  cases=$(.device/run "$test" --gtest_list_tests --gtest_filter='*Gpu*' 2> /dev/null |
    awk '/^[^ ]/ { suite = $1 } /^  / { print suite $1 }')
  [[ -n $cases ]] || continue
  names+=("$name")
  for tool in racecheck memcheck; do
    [[ $tools == all || $tools == "$tool" ]] || continue
    rm -f "$out/$name.$tool".*.log "$out/$name.$tool".*.rc
    rank=2
    [[ $name =~ GaussianRBF|Median|MemoryReturn ]] && rank=1
    [[ $tool == memcheck ]] && rank=$((rank + 2))
    target=$queue
    [[ $name =~ MemoryReturn ]] && target=$alone
    for c in $cases; do printf '%s %s %s %s\n' "$rank" "$tool" "$test" "$c"; done >> "$target"
  done
done
start=$(date +%s)
sort -s -k1,1n "$queue" | cut -d' ' -f2- | xargs -P "$jobs" -L 1 bash -c 'run_case "$0" "$1" "$2"'
sort -s -k1,1n "$alone" | cut -d' ' -f2- | xargs -P 1 -L 1 bash -c 'run_case "$0" "$1" "$2"'
rm -f "$queue" "$alone"

status=0
for name in "${names[@]}"; do
  for tool in memcheck racecheck; do
    [[ $tools == all || $tools == "$tool" ]] || continue
    total=0 failed=0 cut=0 errors=0 leaks=0 hazards=0 resumed=0
    for rc in "$out/$name.$tool".*.log.rc; do
      [[ -e $rc ]] || continue
      log=${rc%.rc}
      code=$(cat "$rc")
      total=$((total + 1))
      grep -q "^# sanitize-gpu-tests: resumed from" "$log" && resumed=$((resumed + 1))
      [[ $code -eq 124 ]] && cut=$((cut + 1))
      [[ $code -ne 0 ]] && failed=$((failed + 1))
      e=$(grep -oE "ERROR SUMMARY: [0-9]+" "$log" | grep -oE "[0-9]+$" | tail -1)
      errors=$((errors + ${e:-0}))
      grep -qE "LEAK SUMMARY: [1-9]" "$log" && leaks=$((leaks + 1))
      h=$(grep -oE "RACECHECK SUMMARY: [0-9]+" "$log" | grep -oE "[0-9]+$" | tail -1)
      hazards=$((hazards + ${h:-0}))
    done
    printf '%-48s %-9s %3d cases (%d resumed), %3d failed (%d cut), errors %d, cases leaking %d, hazards %d\n' \
      "$name" "$tool" "$total" "$resumed" "$failed" "$cut" "$errors" "$leaks" "$hazards"
    if [[ $failed -ne 0 || $errors -ne 0 || $leaks -ne 0 || $hazards -ne 0 ]]; then
      status=1
    fi
  done
done
echo "sanitize-gpu-tests: ${#names[@]} executables, $(($(date +%s) - start)) s (one pool of $jobs, then the memory-return cases one at a time)"
exit $status
