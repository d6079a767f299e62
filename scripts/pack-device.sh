#!/usr/bin/env bash
# pack-device.sh [BUILD_DIR] [REGEX]: ../shared/tools/device-pack, then the
# fixes a Release build needs before it runs on the GPU machine.
#
# device-pack leaves out files over 16 MiB. A Release build for every CUDA
# architecture has two such files, bin/'s executables need them and the
# GPU machine has no copy: lib/libCudaImageFilters.so (41 MB) and
# lib/libCudaImageFiltersCore.so (28 MB). Without them every executable
# there stops with "error while loading shared libraries" (exit 127). This
# script puts stripped copies of build/lib/*.so into the payload (57 MB
# stripped, 22 MB after xz: their device code does not strip), and with
# REGEX keeps only the executables of bin/ whose names match it (and the
# command-line tool), so that a payload, a wheel and the tree fit the
# device tool's 64 MiB (a payload of two executables, the tool and the
# libraries was 31 MB). Then it writes .device/commit.
#
#   bash scripts/pack-device.sh                                # the whole build
#   bash scripts/pack-device.sh build '^(itkCudaMeanImageFilterTest|SegmentationBenchmark)$'
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
keep=${2:-}
../shared/tools/device-pack "$build"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
xz -dc .device/payload.tar.xz | tar -C "$work" -xf -
mkdir -p "$work/build/lib"
for library in "$build"/lib/*.so; do
  strip --strip-unneeded -o "$work/build/lib/$(basename "$library")" "$library"
done
if [[ -n $keep ]]; then
  for program in "$work"/build/bin/*; do
    name=$(basename "$program")
    [[ $name =~ $keep || $name == cudaimagefilters ]] || rm -rf "$program"
  done
fi
if [[ -f $build/bin/cudaimagefilters && ! -f $work/build/bin/cudaimagefilters ]]; then
  strip --strip-unneeded -o "$work/build/bin/cudaimagefilters" "$build/bin/cudaimagefilters"
fi
(cd "$work" && tar -cf - *) | xz -T0 -6 > .device/payload.tar.xz
python3 scripts/run-benchmarks.py --stamp
du -sh .device
