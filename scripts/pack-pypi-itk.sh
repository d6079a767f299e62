#!/usr/bin/env bash
# pack-pypi-itk.sh: PyPI's itk, installed files packed for the GPU machine,
# which has no network and takes at most 64 MiB per call (docs/Python.md,
# "What is tested where").
#
#   bash scripts/pack-pypi-itk.sh [VERSION] [PART_MIB...]
#
# Downloads the itk wheels of VERSION (default 5.4.7) for CPython 3.12,
# installs them with pip --target into a scratch folder, packs that folder
# as tar | xz -9e, and cuts the archive into parts of the given sizes in MiB
# (default: 24 45 55 for itk 5.4.7's 123 MiB; part 0 leaves room for .device
# beside it, the cu13 wheel needs a call of its own), one per folder .itk0,
# .itk1, ... at the repository root (ignored by git). Each part goes in its own call, the calls one right after the other
# (an idle machine goes back after 30 s), each copying its part into /tmp:
#
#   call k: carry [".itkK"], command: mkdir -p /tmp/parts && cp .itkK/part /tmp/parts/partK
#   last:   cat /tmp/parts/part* | xz -dc | tar -C /tmp/itk -xf - && export PYTHONPATH=/tmp/itk
set -euo pipefail
cd "$(dirname "$0")/.."
version=${1:-5.4.7}
shift || true
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(24 45 55)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 -m pip download -q --only-binary=:all: --no-deps --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 -d "$work/wheels" \
  "itk==$version" "itk-core==$version" "itk-numerics==$version" "itk-filtering==$version" \
  "itk-io==$version" "itk-registration==$version" "itk-segmentation==$version"
python3 -m pip install -q --no-deps --no-compile --target "$work/site" "$work"/wheels/*.whl
tar -C "$work/site" -cf - . | xz -T0 -9e > "$work/itk.tar.xz"
total=$(stat -c %s "$work/itk.tar.xz")
offset=0
for k in "${!sizes[@]}"; do
  [ "$offset" -lt "$total" ] || break
  rm -rf ".itk$k" && mkdir -p ".itk$k"
  grep -qx "/.itk$k/" .git/info/exclude 2>/dev/null || echo "/.itk$k/" >> .git/info/exclude
  bytes=$((sizes[k] << 20))
  dd if="$work/itk.tar.xz" of=".itk$k/part" bs=4M iflag=skip_bytes,count_bytes skip="$offset" count="$bytes" status=none
  offset=$((offset + bytes))
  echo ".itk$k/part: $(stat -c %s ".itk$k/part") bytes"
done
if [ "$offset" -lt "$total" ]; then
  echo "the archive ($total bytes) is larger than the parts asked for; give more or larger parts" >&2
  exit 1
fi
echo "itk $version: $total bytes of xz in ${#sizes[@]} parts at most"
