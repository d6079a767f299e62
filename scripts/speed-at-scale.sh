#!/usr/bin/env bash
# Speed at scale, on the GPU machine: median r=1, bilateral r=2 and the
# recursive prefilter on a float32 volume four times larger than the device
# memory the cap allows (default 1024x1024x4096 = 17.2 GB under 4 GiB), end
# to end from file to file. For each run: the wall time, the tool's filter
# time (uploads, kernels and downloads, in slabs) and the rest (reading and
# writing the files), and the peak memory; then the median once more with
# --stream (file to file in pieces). CAP "none" runs the whole image in one
# piece (no --device-memory-limit), and adds the cubic resample of issue 22
# (--rotate 0,0,10). ONLY="median resample" runs the named runs only.
# Usage:
#   bash scripts/speed-at-scale.sh TOOL [SIZE] [CAP] [WORKDIR]
set -euo pipefail
tool=$1
size=${2:-1024x1024x4096}
cap=${3:-4G}
work=${4:-/tmp/cif-scale}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$work"
python3 - "$here" "$size" "$work/in.mha" <<'PY'
import importlib.util, sys, time
import numpy as np
spec = importlib.util.spec_from_file_location("lv", sys.argv[1] + "/large-volume-check.py")
lv = importlib.util.module_from_spec(spec); spec.loader.exec_module(lv)
nx, ny, nz = (int(v) for v in sys.argv[2].split("x"))
t = time.perf_counter()
lv.write_mha(sys.argv[3], lv.make_volume((nz, ny, nx), np.float32), "MET_FLOAT")
print(f"wrote {sys.argv[3]}: {nx}x{ny}x{nz} float32, {nx*ny*nz*4/1e9:.1f} GB in {time.perf_counter()-t:.1f} s")
PY
limit=(--device-memory-limit "$cap")
[ "$cap" = none ] && limit=()
run() {
  local name=$1; shift
  local start end
  if [ -n "${ONLY:-}" ] && ! [[ " $ONLY " == *" $1 "* ]]; then return; fi
  start=$(date +%s.%N)
  if [ -x /usr/bin/time ]; then
    /usr/bin/time -f "%M" -o "$work/peak" "$tool" "$@" --device "${DEVICE:-gpu}" --quiet "${limit[@]}" > "$work/line"
  else
    echo 0 > "$work/peak" # no GNU time: the streamed run still prints its own peak
    "$tool" "$@" --device "${DEVICE:-gpu}" --quiet "${limit[@]}" > "$work/line"
  fi
  end=$(date +%s.%N)
  python3 - "$name" "$start" "$end" "$work/line" "$work/peak" <<'PY'
import re, sys
name, start, end, line, peak = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), open(sys.argv[4]).read().strip(), int(open(sys.argv[5]).read().split()[-1])
wall = end - start
m = re.search(r"filter time ([0-9.]+) ms", line)
if m is None:  # streamed: reading, filtering and writing are interleaved
    print(f"{name}: wall {wall:.1f} s (reading, filtering and writing in pieces); peak memory {peak/1048576:.1f} GiB")
    print("   ", line[:400])
    sys.exit(0)
f = float(m.group(1)) / 1e3
print(f"{name}: wall {wall:.1f} s; filter (uploads, kernels, downloads) {f:.1f} s = {100*f/wall:.0f}%; "
      f"file reading and writing and the rest {wall-f:.1f} s = {100*(wall-f)/wall:.0f}%; peak memory {peak/1048576:.1f} GiB")
print("   ", line[:400])
PY
  rm -f "$work/out.mha"
}
run "median r=1" median "$work/in.mha" "$work/out.mha" --radius 1
run "bilateral r=2" bilateral "$work/in.mha" "$work/out.mha" --domain-sigma 1 --range-sigma 5 --radius 2
run "cubic prefilter (recursive)" bspline-prefilter "$work/in.mha" "$work/out.mha"
if [ "$cap" = none ]; then
  run "cubic resample, rotation 10 degrees about z" resample "$work/in.mha" "$work/out.mha" --rotate 0,0,10
fi
run "median r=1, --stream 2G pieces" median "$work/in.mha" "$work/out.mha" --radius 1 --stream-memory 2G
rm -f "$work/in.mha"
