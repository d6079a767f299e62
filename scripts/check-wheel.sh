#!/usr/bin/env bash
# ---------------------------------------------------------------------------
# check-wheel.sh: installs a binary wheel (scripts/build-wheel.sh) into a
# fresh virtual environment, hides the CUDA toolkit from the loader, and
# checks that it imports and runs, on the GPU for a CUDA wheel.
#
#   bash scripts/check-wheel.sh WHEEL
#
# Made for the GPU machine, which has no network: the wheel's dependencies
# come from the distributions already installed for SOURCE_PYTHON (default
# python3; on the GPU machine the one holding PyTorch, CuPy and NVIDIA's
# nvidia-cublas, nvidia-cusolver, ... wheels). Each is packed back into a
# wheel from its installed files (its RECORD), so pip installs NVIDIA's own
# files through the new wheel's own Requires-Dist. `itk` is not installed
# there and is left out (named in the output): the check uses NumPy arrays.
#
# Steps
#   1. repack the installed distributions the wheel needs (and pytest's);
#   2. a fresh virtual environment (no system site packages) from
#      SOURCE_PYTHON's base interpreter; the wheel with --no-deps, then its
#      Requires-Dist but itk, resolved by pip from the repacked wheels only;
#   3. in a private mount namespace (unshare -m, as root), an empty folder
#      over /usr/local/cuda, an empty file over any other nvcc on PATH, and
#      LD_LIBRARY_PATH unset: no nvcc, and the loader finds no toolkit
#      library (checked);
#   4. a Python check there: the build, where cuBLAS and cuSOLVER were loaded
#      from (NVIDIA's wheel in the new environment), and, for a CUDA wheel on
#      a machine with a GPU, the median (bit-equal to the CPU) and the GRBF
#      interpolation, exact and block mode (cuBLAS and cuSOLVER; within
#      2e-6 of the range of the CPU's), with device="gpu";
#   5. pytest python/tests/test_install.py in that environment;
#   6. with ITK_SITE naming a folder of PyPI itk's installed files (pip
#      install --target, made where pip has a network), that folder on the
#      environment's path and test_accelerate.py and test_filters.py there
#      (accelerate_itk and the functions against ITK, on the GPU; the
#      comparison with the C++ tool, which needs the build tree, left out).
# CUDAIMAGEFILTERS_REQUIRE_GPU=1 makes a missing GPU an error.
# ---------------------------------------------------------------------------
set -euo pipefail
wheel=$(readlink -f "${1:?usage: $0 WHEEL}")
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
source_python=${SOURCE_PYTHON:-python3}
work=${WORK:-/tmp/cif-check-wheel}
rm -rf "$work" && mkdir -p "$work/wheels"

echo "== 1. repack the installed dependencies from $source_python"
"$source_python" - "$wheel" "$work/wheels" <<'EOF'
import base64, csv, hashlib, importlib.metadata as md, io, re, sys, zipfile
try:
    from packaging.requirements import Requirement
except ImportError:  # pip's own copy
    from pip._vendor.packaging.requirements import Requirement

wheel, out = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(wheel) as z:
    meta = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
    text = z.read(meta).decode()
requires = [Requirement(line.split(":", 1)[1].strip()) for line in text.splitlines() if line.startswith("Requires-Dist:")]
wanted = [r for r in requires if r.marker is None or r.marker.evaluate({"extra": ""})]
names = {r.name for r in wanted} | {"pytest", "pluggy", "iniconfig", "packaging"}
done = set()

def pack(name, extras=()):
    key = name.lower().replace("_", "-")
    if key in done:
        return
    try:
        dist = md.distribution(name)
    except md.PackageNotFoundError:
        print(f"   not installed here, left out: {name}")
        return
    done.add(key)
    info = next(p for p in dist.files if p.parts[0].endswith(".dist-info"))
    info_dir = info.parts[0]
    wheel_meta = dist.read_text("WHEEL") or ""
    tags = [l.split(":", 1)[1].strip() for l in wheel_meta.splitlines() if l.startswith("Tag:")]
    # py2-none-any and py3-none-any make the compressed tag py2.py3-none-any
    parts = [sorted({t.split("-")[i] for t in tags}) for i in range(3)] if tags else [["py3"], ["none"], ["any"]]
    tag = "-".join(".".join(p) for p in parts)
    dist_name = re.sub(r"[-_.]+", "_", dist.metadata["Name"])
    target = f"{out}/{dist_name}-{dist.version}-{tag}.whl"
    record = io.StringIO()
    writer = csv.writer(record, lineterminator="\n")
    with zipfile.ZipFile(target, "w", zipfile.ZIP_STORED) as z:  # stored: only copied once, locally
        for f in dist.files:
            if "__pycache__" in f.parts or f.name in ("RECORD", "INSTALLER", "REQUESTED", "direct_url.json"):
                continue
            path = f.locate()
            if not path.is_file() or str(f).startswith(".."):
                continue
            data = path.read_bytes()
            z.writestr(str(f), data)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            writer.writerow([str(f), f"sha256={digest}", len(data)])
        writer.writerow([f"{info_dir}/RECORD", "", ""])
        z.writestr(f"{info_dir}/RECORD", record.getvalue())
    print(f"   {dist.metadata['Name']} {dist.version}")
    for line in dist.requires or []:
        r = Requirement(line)
        env = [{"extra": e} for e in extras] or [{"extra": ""}]
        if r.marker is None or any(r.marker.evaluate(e) for e in env):
            pack(r.name, tuple(r.extras))

for r in wanted:
    pack(r.name, tuple(r.extras))
for n in ("pytest", "pluggy", "iniconfig", "packaging"):
    pack(n)
EOF

echo "== 2. a fresh virtual environment"
base=$("$source_python" -c 'import sys; print(getattr(sys, "_base_executable", sys.executable))')
"$base" -m venv "$work/venv"
py="$work/venv/bin/python"
if "$py" -c 'import numpy' 2>/dev/null; then echo "not a fresh environment: numpy is importable" >&2; exit 1; fi
"$py" -m pip install -q --no-index --no-deps "$wheel"
requirements=$("$py" - <<'EOF'
import importlib.metadata as md
dist = next(d for d in md.distributions() if (d.metadata["Name"] or "").startswith("cudaimagefilters"))
keep = [r for r in (dist.requires or []) if "extra ==" not in r and not r.lower().startswith("itk")]
print("\n".join(keep))
EOF
)
echo "   the wheel's Requires-Dist but itk: $(echo $requirements)"
mapfile -t reqs <<< "$requirements"
"$py" -m pip install -q --no-index --find-links "$work/wheels" "${reqs[@]}" pytest
"$py" -m pip list 2>/dev/null | grep -i -E '^(cudaimagefilters|nvidia|cuda|numpy)' | sed 's/^/   /'

echo "== 3. and 4. the toolkit hidden from the loader"
mkdir -p "$work/empty" && : > "$work/empty.file" && chmod 644 "$work/empty.file"
cat > "$work/check.py" <<'EOF'
import os, sys
import numpy as np
import cudaimagefilters as cif
from cudaimagefilters import _build_info

print("   package:", cif.__file__)
print("   compiled with CUDA:", cif.is_compiled_with_cuda(), "| CUDA major:", _build_info.CUDA_MAJOR,
      "| toolkit in run path:", _build_info.TOOLKIT_RPATH)
assert sys.prefix in cif.__file__, "not the fresh environment's package"
maps = open("/proc/self/maps").read().split("\n")
loaded = sorted({l.split()[-1] for l in maps if any(k in l for k in ("libcublas", "libcusolver", "libcudart"))})
for path in loaded:
    print("   loaded:", path)
if cif.is_compiled_with_cuda():
    assert loaded and all(p.startswith(sys.prefix) for p in loaded), "cuBLAS/cuSOLVER not from the environment's NVIDIA wheels"
print("   GPU:", cif.is_gpu_available(), "|", cif.device_description() if cif.is_gpu_available() else cif.gpu_unavailable_reason())
if not (cif.is_compiled_with_cuda() and cif.is_gpu_available()):
    if os.environ.get("CUDAIMAGEFILTERS_REQUIRE_GPU", "0") not in ("", "0"):
        sys.exit("CUDAIMAGEFILTERS_REQUIRE_GPU is set, but the wheel cannot run on a GPU here")
    print("   no GPU run (CPU wheel, or no device)")
    out = cif.median_image_filter(np.arange(27, dtype=np.uint8).reshape(3, 3, 3), radius=1)
    print("  ", cif.last_execution_report().message)
    sys.exit(0)
rng = np.random.default_rng(5)
a = rng.integers(0, 4096, size=(40, 64, 72)).astype(np.uint16)
g = cif.median_image_filter(a, radius=2, device="gpu")
print("   median:", cif.last_execution_report().message)
assert cif.last_execution_report().device == "GPU"
np.testing.assert_array_equal(g, cif.median_image_filter(a, radius=2, device="cpu"))
y, x = np.mgrid[0:48, 0:56]
s = (np.sin(x / 7.0) * np.cos(y / 5.0) * 100).astype(np.float32)
span = float(np.ptp(s))
for kw in ({}, {"method": "block", "block_size": (24, 24), "block_overlap": (4, 4)}):
    gg = cif.gaussian_rbf_interpolation_image_filter(s, zoom=2, device="gpu", **kw)
    print("   GRBF", kw.get("method", "exact") + ":", cif.last_execution_report().message)
    assert cif.last_execution_report().device == "GPU"
    cc = cif.gaussian_rbf_interpolation_image_filter(s, zoom=2, device="cpu", **kw)
    err = float(np.abs(gg - cc).max())
    print(f"   GRBF {kw.get('method', 'exact')}: largest difference from the CPU {err:.3g} ({err / span:.3g} of the range)")
    assert err <= 2e-6 * span
print("   PASS")
EOF
run_hidden() {
  if [ "$(id -u)" = 0 ] && unshare -m true 2>/dev/null; then
    # also any other nvcc on PATH (a copy in /usr/local/bin): an empty, non-executable file over it
    unshare -m bash -c 'mount --bind "$0" /usr/local/cuda || exit 1
      for n in $(which -a nvcc 2>/dev/null); do mount --bind "$0.file" "$n" || exit 1; done
      exec env -u LD_LIBRARY_PATH "$@"' "$work/empty" "$@"
  else
    echo "   (not root or no unshare: /usr/local/cuda stays visible; only LD_LIBRARY_PATH is unset)"
    env -u LD_LIBRARY_PATH "$@"
  fi
}
run_hidden bash -c 'if [ -n "$(which -a nvcc 2>/dev/null)" ] || [ -e /usr/local/cuda/bin/nvcc ]; then echo "   nvcc is still visible" >&2; exit 1; fi
  if ldconfig -p | grep -q "libcublas.so"; then for p in $(ldconfig -p | sed -n "s/.*libcublas.so[^ ]* .*=> //p"); do [ -e "$p" ] && { echo "   the loader still finds $p" >&2; exit 1; }; done; fi
  echo "   no nvcc; the loader finds no libcublas of a toolkit"'
(cd "$work" && run_hidden "$py" "$work/check.py")

echo "== 5. pytest python/tests/test_install.py in the fresh environment"
(cd "$work" && run_hidden "$py" -m pytest -q -p no:cacheprovider "$repo/python/tests/test_install.py")
if [ -n "${ITK_SITE:-}" ]; then
  # PyPI itk's files, unpacked beforehand with pip install --target (the GPU
  # machine has no network): put on the environment's path by a .pth file
  site=$("$py" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  echo "$(readlink -f "$ITK_SITE")" > "$site/pypi-itk.pth"
  echo "== 6. with PyPI itk ($("$py" -c 'import itk; print(itk.Version.GetITKVersion())') from $ITK_SITE): test_accelerate.py and test_filters.py in the fresh environment"
  (cd "$work" && CUDAIMAGEFILTERS_TEST_DATA="${CUDAIMAGEFILTERS_TEST_DATA:-}" run_hidden "$py" -m pytest -q -p no:cacheprovider \
    "$repo/python/tests/test_accelerate.py" "$repo/python/tests/test_filters.py" -k "not command_line")
fi
echo "check-wheel.sh: PASS"
