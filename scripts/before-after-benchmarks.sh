#!/usr/bin/env bash
# Issue 21's "behaviour unchanged" check of speed: the device-resident
# benchmarks of two packed builds (../shared/tools/device-pack) in one run
# on one GPU, alternating (before, after, before, after) so that drift shows
# as the spread between the two rounds of one build.
#
#   bash scripts/before-after-benchmarks.sh BEFORE_DEVICE_DIR AFTER_DEVICE_DIR [rounds]
#
# Each device dir is a packed .device folder (its `run` script); logs go to
# $OUT (or /tmp/before-after) as NAME.{before,after}.ROUND.log, and
# scripts/compare-benchmark-logs.py compares them. The CPU and ITK rows are
# skipped: the check is about the GPU kernels and their host-side calls.
# ONLY=REGEX runs the benchmarks whose name matches; EXTRA="ARGS" adds
# arguments to each (with ONLY: --only-ct for the segmentation rows);
# ORDER=alternate runs the after build first in even rounds, so that a cost
# of running second shows apart from a difference of the builds. The logs
# are also packed into $OUT/logs.tgz (the device tool returns few files).
set -uo pipefail
before=$1
after=$2
rounds=${3:-2}
out=${OUT:-/tmp/before-after}
mkdir -p "$out"
nvidia-smi -L | tee "$out/device.txt"
benchmarks=(
  "median|MedianBenchmark --reps 10 --skip-cpu --skip-itk"
  "edge-preserving|EdgePreservingBenchmark --reps 10 --skip-cpu --skip-itk"
  "segmentation|SegmentationBenchmark --reps 20 --skip-cpu --skip-itk"
  "prefilter|BSplinePrefilterBenchmark --reps 100 --skip-itk --cpu-reps 1"
  "resample|ResampleBenchmark --reps 10 --skip-itk"
)
for round in $(seq 1 "$rounds"); do
  for entry in "${benchmarks[@]}"; do
    name=${entry%%|*}
    command=${entry#*|}
    [[ $name =~ ${ONLY:-.} ]] || continue
    order="before after"
    if [ "${ORDER:-}" = alternate ] && [ $((round % 2)) -eq 0 ]; then
      order="after before"
    fi
    for which in $order; do
      dir=$before
      [ "$which" = after ] && dir=$after
      build=$(cat "$dir/origin")
      # shellcheck disable=SC2086
      timeout 120 "$dir/run" "$build/bin/"$command ${EXTRA:-} > "$out/$name.$which.$round.log" 2>&1
      echo "$name $which round $round: exit $?"
    done
  done
done
tar -C "$out" -czf /tmp/before-after-logs.tgz --exclude logs.tgz . && mv /tmp/before-after-logs.tgz "$out/logs.tgz"
