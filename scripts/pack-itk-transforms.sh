#!/usr/bin/env bash
# pack-itk-transforms.sh: the part of PyPI's itk that register() and the
# metric's GPU tests need (ITK's transforms, their Jacobians and parameter
# updates), packed for the GPU machine in one call beside the cu13 wheel.
# The whole of itk takes three calls (scripts/pack-pypi-itk.sh); this takes
# itk and itk-core's Python layer with the modules the transforms load
# (Common, Transform and what they import), 32 MiB as tar | xz.
#
#   bash scripts/pack-itk-transforms.sh [VERSION]      -> .itkpy/itk-trim.tar.xz
#
# On the GPU machine (carry [".whl", ".itkpy"]):
#   mkdir -p /tmp/itk && tar -C /tmp/itk -xJf .itkpy/itk-trim.tar.xz
#   PYTHONPATH=/tmp/site:/tmp/itk python3 -m pytest python/tests/test_gpu.py -k "register or metric"
set -euo pipefail
cd "$(dirname "$0")/.."
version=${1:-5.4.7}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 -m pip download -q --only-binary=:all: --no-deps --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 -d "$work/wheels" \
  "itk==$version" "itk-core==$version"
mkdir -p "$work/site"
python3 - "$work" <<'PY'
import pathlib, re, sys, zipfile
work = pathlib.Path(sys.argv[1])
keep = re.compile(r"itk/_ITK(Common|Transform|PyBase|BridgeNumPy|PyUtils|ImageGrid|ImageFunction|ImageFilterBase"
                  r"|Statistics|Mesh|SpatialObjects)Python")
for wheel in sorted((work / "wheels").glob("*.whl")):
    with zipfile.ZipFile(wheel) as z:
        for info in z.infolist():
            name = info.filename
            if name.startswith("itk/_ITK") and name.endswith(".so") and not keep.match(name):
                continue
            z.extract(info, work / "site")
PY
mkdir -p .itkpy
tar -C "$work/site" -cf - . | xz -T0 -6 > .itkpy/itk-trim.tar.xz
ls -la .itkpy/itk-trim.tar.xz
