#!/usr/bin/env bash
# Checks the README's Python set-up as a new user meets it (not in CI: it
# compiles the core twice more, about 5 minutes each on 2 cores with nvcc):
#   1. `pip install .` from a fresh clone into a fresh virtual environment
#      (build isolation: scikit-build-core and nanobind from PyPI, itk and
#      numpy pulled as dependencies), then `import` and one call;
#   2. an sdist built from that clone (`python -m build --sdist`), installed
#      into a second fresh environment, then the same.
# Usage: bash scripts/check-python-install.sh [WORK_DIR]   (default /tmp/cif-install-check)
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
work=${1:-/tmp/cif-install-check}
python=${PYTHON:-python3}
rm -rf "$work" && mkdir -p "$work"
git clone -q "$repo" "$work/clone"
smoke='import numpy as np, cudaimagefilters as cif
out = cif.median_image_filter(np.arange(27, dtype=np.uint8).reshape(3, 3, 3), radius=1)
print("cudaimagefilters", cif.__version__, "| CUDA compiled:", cif.is_compiled_with_cuda(), "|", cif.last_execution_report().message)
assert out.shape == (3, 3, 3)'

echo "== 1. pip install . (fresh clone, fresh venv)"
"$python" -m venv "$work/venv1"
start=$(date +%s)
(cd "$work/clone" && "$work/venv1/bin/pip" install -q .)
echo "   built and installed in $(( $(date +%s) - start )) s"
(cd "$work" && "$work/venv1/bin/python" -c "$smoke")
"$work/venv1/bin/pip" list 2>/dev/null | grep -E "^(itk|itk-core|numpy|cudaimagefilters) "

echo "== 2. from an sdist"
"$python" -m venv "$work/venv2"
"$work/venv2/bin/pip" install -q build
(cd "$work/clone" && "$work/venv2/bin/python" -m build --sdist --outdir "$work/dist" >/dev/null)
ls -la "$work/dist"
tar tzf "$work"/dist/*.tar.gz | grep -E "pyproject.toml|python/src/cifPythonModule.cxx|src/core/median/Median.cu|include/cif/Median.h" | sed 's/^/   has /'
start=$(date +%s)
"$work/venv2/bin/pip" install -q "$work"/dist/*.tar.gz
echo "   built and installed in $(( $(date +%s) - start )) s"
(cd "$work" && "$work/venv2/bin/python" -c "$smoke")
echo "PASS"
