#!/usr/bin/env bash
# Installs the peer libraries that the Python benchmarks compare with (cuCIM,
# cucim-cu13 on PyPI, and the parts of scikit-image it imports) on the GPU
# machine, which has no network: from the wheels carried in .whl/peers/
# (gitignored), with pip --no-index, into a target directory that is then put
# first on PYTHONPATH. CuPy, NumPy and SciPy are the machine's own.
#
# Fetch the wheels here, on a machine with PyPI (CPython 3.12, x86_64):
#   bash scripts/install-peers-offline.sh --download
# which runs
#   python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 \
#     --platform manylinux_2_28_x86_64 --platform manylinux2014_x86_64 \
#     --platform manylinux_2_17_x86_64 -d .whl/peers cucim-cu13 "scikit-image<0.27" lazy_loader packaging click
# (--no-deps: cucim-cu13 asks for cupy-cuda13x[ctk] and nvidia-nvimgcodec,
# hundreds of MB that the GPU machine has, or that cucim.skimage does not
# import; scikit-image's imageio, tifffile, networkx and pillow are only
# imported by its IO, graph and data modules, which the benchmarks do not use).
#
# On the GPU machine (after carrying .whl):
#   bash scripts/install-peers-offline.sh [TARGET]     (default /tmp/peers-site)
#   export PYTHONPATH=/tmp/peers-site${PYTHONPATH:+:$PYTHONPATH}
# It ends with an import check: one line saying whether cucim.skimage's
# filters, morphology and transform import (without a GPU, CuPy may refuse to
# run, but the imports work). scripts/run-benchmarks.py calls it when
# .whl/peers exists.
set -euo pipefail
cd "$(dirname "$0")/.."
wheels=.whl/peers
if [ "${1:-}" = "--download" ]; then
  mkdir -p "$wheels"
  python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 \
    --platform manylinux_2_28_x86_64 --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 \
    -d "$wheels" cucim-cu13 "scikit-image<0.27" lazy_loader packaging click
  du -sh "$wheels"
  exit 0
fi
target=${1:-/tmp/peers-site}
if ! ls "$wheels"/*.whl > /dev/null 2>&1; then
  echo "install-peers-offline: no wheels in $wheels (bash scripts/install-peers-offline.sh --download on a machine with PyPI)" >&2
  exit 1
fi
mkdir -p "$target"
python3 -m pip install -q --no-index --no-deps --no-compile --upgrade --target "$target" "$wheels"/*.whl
PYTHONPATH="$target${PYTHONPATH:+:$PYTHONPATH}" python3 - <<'PY'
import importlib
try:
    import cucim
    for name in ("filters", "filters.rank", "morphology", "transform"):
        importlib.import_module("cucim.skimage." + name)
    print(f"install-peers-offline: cuCIM {cucim.__version__} imports (filters, filters.rank, morphology, transform)")
except Exception as e:
    print(f"install-peers-offline: cuCIM does not import: {type(e).__name__}: {e}")
    raise SystemExit(1)
PY
