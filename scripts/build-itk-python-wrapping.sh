#!/usr/bin/env bash
# ---------------------------------------------------------------------------
# build-itk-python-wrapping.sh: checks the module's SWIG (Python) wrapping
# against ITK 5.2.1 built from Debian's source package.
#
# What it does
#   1. Enables deb-src (a separate file, /etc/apt/sources.list.d/
#      debian-src-cudaimagefilters.sources, written once; the system's own
#      sources files are left alone) and installs what wrapping needs from
#      Debian: castxml, swig, python3-dev, cmake, ninja, dpkg-dev, g++.
#      Nothing else is downloaded: ITK's superbuild would fetch CastXML and
#      SWIG, so the build uses Debian's (ITK_USE_SYSTEM_CASTXML and
#      ITK_USE_SYSTEM_SWIG, as Debian's own debian/rules does) and sets
#      ITK_FORBID_DOWNLOADS.
#   2. `apt-get source insighttoolkit5` (5.2.1 with Debian's patches) into the
#      work directory, and applies one compatibility patch to it: ITK's
#      Python module_ext.i.in defines SWIGPY_SLICEOBJECT, which SWIG 4.1 (the
#      Debian 12 SWIG) needs and ITK 5.2.1 lacks (upstream ITK commit for
#      issue #3782, in ITK 5.4).
#   3. Copies this repository into ITK's source tree as
#      Modules/Remote/CudaImageFilters (a copy, not a symlink: ITK's module
#      scan does not follow symlinks) and configures ITK with ITK_WRAP_PYTHON,
#      only this module and the ITK modules it depends on
#      (ITK_BUILD_DEFAULT_MODULES=OFF, ITKGroup_Core=OFF, BUILD_TESTING=OFF),
#      plus the NRRD and MetaImage IO modules (the formats of WritePackedMask;
#      ITK 5.2's wrapping of ITKIOImageBase also fails to compile without any
#      ImageIO module: itkImageIOFactoryRegisterManager.h is then not
#      generated), Release, C++17
#      (the module needs it; ITK 5.2 defaults to C++11), 2D and 3D, and the
#      pixel types the module wraps (unsigned char, short, unsigned short,
#      float, double; vector, RGB and complex pixel types off). CUDA is used
#      when nvcc is found (/usr/local/cuda/bin/nvcc or PATH), unless
#      CUDAIMAGEFILTERS_USE_CUDA=OFF is set in the environment.
#   4. Builds the module's Python extension target (CudaImageFiltersPython)
#      and what it depends on, with `nice -n 19 ninja -k 0 -j$(nproc)`; -k 0
#      keeps going past a failure so that the check below sees everything that
#      did build. FULL_BUILD=1 then builds the rest of ITK's wrapping too (an
#      hour more on 2 cores), which only the import in step 5 needs.
#   5. Checks, for every class in wrapping/*.wrap, that CastXML and SWIG
#      produced it (its SWIG interface and its class in the generated
#      itk<Submodule>Python.py) and that the module's Python extension
#      (_CudaImageFiltersPython*.so) was built, and prints a PASS/FAIL line per
#      class. With FULL_BUILD=1 it then tries `import itk` from the build tree, for information
#      only: ITK 5.2.1's Python layer does not import with NumPy >= 1.24
#      (np.bool etc. were removed), so a failure there is not a failure of the
#      check.
#
# Usage
#   scripts/build-itk-python-wrapping.sh [WORKDIR]
#   WORKDIR defaults to ${WORK:-$HOME/itk-wrapping} (outside the repository).
#   Environment: JOBS (default nproc), CUDAIMAGEFILTERS_USE_CUDA (ON/OFF),
#   SKIP_APT=1 (skip the apt steps on a re-run), FULL_BUILD=1 (all of ITK's
#   wrapping and the import), IMPORT_PYTHON (an interpreter for the import). Re-running is incremental:
#   the source is not downloaded again, the build directory is reused.
#
# Cost: 52 minutes from scratch on 2 cores (measured 2026-11-25; FULL_BUILD=1
# adds about an hour), about 6 GB of disk in WORKDIR
# (280 MB source archive, 540 MB unpacked, the rest the build tree). It needs
# root (or sudo) for apt. It is NOT run in CI.
#
# Exit status: 0 when every wrapped class passes, 1 otherwise.
# ---------------------------------------------------------------------------
set -euo pipefail

REPO_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
WORK_DIR=${1:-${WORK:-$HOME/itk-wrapping}}
JOBS=${JOBS:-$(nproc)}
USE_CUDA=${CUDAIMAGEFILTERS_USE_CUDA:-ON}
ITK_VERSION=5.2.1
SRC_DIR="$WORK_DIR/insighttoolkit5-$ITK_VERSION"
BUILD_DIR="$WORK_DIR/build"
MODULE_NAME=CudaImageFilters

case "$WORK_DIR" in
  "$REPO_DIR"|"$REPO_DIR"/*)
    echo "The work directory must be outside the repository (it holds ITK's source and build)." >&2
    exit 2
    ;;
esac
mkdir -p "$WORK_DIR"
WORK_DIR=$(cd "$WORK_DIR" && pwd)

SUDO=""
if [ "$(id -u)" != 0 ]; then
  SUDO=sudo
fi

step() { printf '\n=== %s: %s\n' "$(date '+%H:%M:%S')" "$*"; }
START_TIME=$(date +%s)

# ---------------------------------------------------------------------------
# 1. deb-src and build dependencies from Debian
# ---------------------------------------------------------------------------
if [ "${SKIP_APT:-0}" != 1 ]; then
  step "apt: deb-src and build dependencies"
  if ! grep -rqsE '^(Types:.*deb-src|deb-src )' /etc/apt/sources.list /etc/apt/sources.list.d/; then
    codename=$(. /etc/os-release && echo "$VERSION_CODENAME")
    $SUDO tee /etc/apt/sources.list.d/debian-src-cudaimagefilters.sources >/dev/null <<EOF
# deb-src for scripts/build-itk-python-wrapping.sh (CudaImageFilters)
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: $codename $codename-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
  fi
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends \
    castxml swig python3-dev cmake ninja-build dpkg-dev g++ xz-utils
fi

# ---------------------------------------------------------------------------
# 2. ITK 5.2.1 from Debian's source package
# ---------------------------------------------------------------------------
if [ ! -f "$SRC_DIR/CMakeLists.txt" ]; then
  step "apt-get source insighttoolkit5 (about 280 MB)"
  (cd "$WORK_DIR" && apt-get source insighttoolkit5)
fi
if ! grep -q '^set(ITK_VERSION_MINOR "2")' "$SRC_DIR/CMake/itkVersion.cmake" ||
   ! grep -q '^set(ITK_VERSION_PATCH "1")' "$SRC_DIR/CMake/itkVersion.cmake"; then
  echo "$SRC_DIR is not ITK $ITK_VERSION" >&2
  exit 2
fi

# SWIG >= 4.1 declares its slice helpers with SWIGPY_SLICEOBJECT, which
# ITK 5.2.1 does not define (ITK issue #3782; fixed upstream in ITK 5.4).
ext_in="$SRC_DIR/Wrapping/Generators/Python/module_ext.i.in"
if ! grep -q SWIGPY_SLICEOBJECT "$ext_in"; then
  step "patch: SWIGPY_SLICEOBJECT for SWIG >= 4.1"
  sed -i 's|^# define SWIGPY_SLICE_ARG(obj) ((PyObject\*) (obj))$|&\n# define SWIGPY_SLICEOBJECT PyObject|;
          s|^# define SWIGPY_SLICE_ARG(obj) ((PySliceObject\*) (obj))$|&\n# define SWIGPY_SLICEOBJECT PySliceObject|' "$ext_in"
  grep -q SWIGPY_SLICEOBJECT "$ext_in" || { echo "could not patch $ext_in" >&2; exit 2; }
fi

# ---------------------------------------------------------------------------
# 3. The module in-tree, and configure
# ---------------------------------------------------------------------------
step "copy the module into Modules/Remote/$MODULE_NAME"
# tracked and untracked-but-not-ignored files; only what changed gets a new
# modification time, so a re-run rebuilds only what changed
bash "$REPO_DIR/scripts/copy-module-into-itk.sh" "$SRC_DIR/Modules/Remote/$MODULE_NAME"

cuda_args=()
nvcc=""
if [ "$USE_CUDA" = ON ]; then
  if [ -x /usr/local/cuda/bin/nvcc ]; then
    nvcc=/usr/local/cuda/bin/nvcc
  elif command -v nvcc >/dev/null; then
    nvcc=$(command -v nvcc)
  fi
fi
if [ -n "$nvcc" ]; then
  cuda_args=(-DCUDAIMAGEFILTERS_USE_CUDA=ON "-DCMAKE_CUDA_COMPILER=$nvcc")
  echo "CUDA: $nvcc ($("$nvcc" --version | tail -1))"
else
  cuda_args=(-DCUDAIMAGEFILTERS_USE_CUDA=OFF)
  echo "CUDA: off"
fi

python=/usr/bin/python3 # Debian's, with python3-dev (not a pyenv or venv one)

step "configure ITK $ITK_VERSION with ITK_WRAP_PYTHON and Module_$MODULE_NAME"
mkdir -p "$BUILD_DIR"
# ITK 5.2's first configure of a build directory gives the compiler
# different flags than every later one (its optimization flags cache), so a
# fresh build directory is configured twice: otherwise the next re-run of
# this script (or ninja's own re-configure after a .wrap file changes) would
# rebuild everything.
configure_runs=1
if [ ! -f "$BUILD_DIR/CMakeCache.txt" ]; then
  configure_runs=2
fi
for _ in $(seq "$configure_runs"); do
  cmake -G Ninja -S "$SRC_DIR" -B "$BUILD_DIR" \
    -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_CXX_STANDARD=17 \
    -DBUILD_SHARED_LIBS=ON \
    -DBUILD_TESTING=OFF \
    -DBUILD_EXAMPLES=OFF \
    -DITK_BUILD_DEFAULT_MODULES=OFF \
    -DITKGroup_Core=OFF \
    "-DModule_$MODULE_NAME=ON" \
    -DModule_ITKIONRRD=ON \
    -DModule_ITKIOMeta=ON \
    -DITK_FORBID_DOWNLOADS=ON \
    -DITK_WRAP_PYTHON=ON \
    -DITK_WRAP_DOC=OFF \
    -DITK_USE_SYSTEM_CASTXML=ON \
    -DCASTXML_EXECUTABLE=/usr/bin/castxml \
    -DITK_USE_SYSTEM_SWIG=ON \
    -DSWIG_EXECUTABLE=/usr/bin/swig \
    "-DPython3_EXECUTABLE=$python" \
    "-DITK_WRAP_IMAGE_DIMS=2;3" \
    -DITK_WRAP_unsigned_char=ON \
    -DITK_WRAP_signed_short=ON \
    -DITK_WRAP_unsigned_short=ON \
    -DITK_WRAP_float=ON \
    -DITK_WRAP_double=ON \
    -DITK_WRAP_rgb_unsigned_char=OFF \
    -DITK_WRAP_rgba_unsigned_char=OFF \
    -DITK_WRAP_complex_float=OFF \
    "${cuda_args[@]}"
done

# ---------------------------------------------------------------------------
# 4. Build
# ---------------------------------------------------------------------------
# First the module's Python extension and what it needs (the wrapping of the
# ITK modules it depends on): that is all the check below reads. The rest of
# ITK's wrapping (about 780 more steps, an hour on 2 cores) is only needed to
# `import itk` from the build tree, so it is built only with FULL_BUILD=1.
step "build ${MODULE_NAME}Python (nice -n 19 ninja -k 0 -j$JOBS)"
build_status=0
nice -n 19 ninja -C "$BUILD_DIR" -k 0 -j"$JOBS" "${MODULE_NAME}Python" 2>&1 |
  tee "$WORK_DIR/ninja-module.log" || build_status=$?
echo "ninja exit status: $build_status"
if [ "${FULL_BUILD:-0}" = 1 ]; then
  step "build the rest of ITK's wrapping (FULL_BUILD=1)"
  full_status=0
  nice -n 19 ninja -C "$BUILD_DIR" -k 0 -j"$JOBS" || full_status=$?
  echo "ninja (all) exit status: $full_status"
fi

# ---------------------------------------------------------------------------
# 5. Check every wrapped class
# ---------------------------------------------------------------------------
step "check the generated wrapping"
# For each wrapping/*.wrap (a WrapITK submodule) and each class it wraps:
#  - CastXML + igenerator listed its instantiations in Wrapping/Typedefs/<submodule>.idx
#    and wrote the SWIG interface <submodule>.i;
#  - SWIG generated itk/<submodule>Python.py with a Python class for every
#    instantiation (for an enum: its constants) and <submodule>Python.cpp;
#  - the C++ compiler built <submodule>Python.cpp (its object file);
# and the module's extension _CudaImageFiltersPython*.so was linked.
check_status=0
"$python" - "$REPO_DIR/wrapping" "$BUILD_DIR" "$MODULE_NAME" <<'EOF' || check_status=$?
import glob, os, re, sys

wrap_dir, build, module = sys.argv[1:4]
typedefs = os.path.join(build, "Wrapping", "Typedefs")
pkg = os.path.join(build, "Wrapping", "Generators", "Python", "itk")
mod_build = os.path.join(build, "Wrapping", "Modules", module)
lines, failed = [], 0


def objects(name):
    return glob.glob(os.path.join(mod_build, "CMakeFiles", "**", name + ".o"), recursive=True)


ext = glob.glob(os.path.join(pkg, "_%sPython*.so" % module)) + glob.glob(
    os.path.join(build, "lib", "_%sPython*.so" % module))
if ext:
    lines.append("PASS  Python extension %s" % os.path.relpath(ext[0], build))
else:
    lines.append("FAIL  Python extension _%sPython*.so was not built" % module)
    failed += 1

class_re = re.compile(r'^\s*itk_wrap(?:_simple)?_class\(\s*"([^"]+)"', re.M)
for wrap in sorted(glob.glob(os.path.join(wrap_dir, "*.wrap"))):
    sub = os.path.basename(wrap)[:-5]
    text = open(wrap).read()
    classes = class_re.findall(re.sub(r"#.*", "", text))
    idx = os.path.join(typedefs, sub + ".idx")
    iface = os.path.join(typedefs, sub + ".i")
    py = os.path.join(pkg, sub + "Python.py")
    cpp = os.path.join(mod_build, sub + "Python.cpp")
    problem = None
    if not os.path.exists(idx) or not os.path.exists(iface):
        problem = "no SWIG interface (CastXML or igenerator failed)"
    elif not os.path.exists(py) or not os.path.exists(cpp):
        problem = "SWIG did not generate %sPython.py/.cpp" % sub
    elif not objects(sub + "Python.cpp"):
        problem = "%sPython.cpp did not compile" % sub
    if problem:
        for c in classes:
            lines.append("FAIL  %s (%s.wrap): %s" % (c, sub, problem))
            failed += 1
        continue
    entries = []
    for line in open(idx):
        m = re.match(r"{(.*)} {(.*)} {(.*)}", line)
        if m:
            entries.append((m.group(1).replace(" ", "").lstrip(":"), m.group(2)))
    iface_text = open(iface).read()
    py_text = open(py).read()
    for c in classes:
        key = c.replace(" ", "")
        # a class the .wrap names by an alias (itk::CudaExecutionMode is
        # cif::ExecutionMode) is listed under the type it names, with the
        # SWIG name WrapITK gave it: itk<Name>
        swig = "itk" + key.split("::")[-1] if key.startswith("itk::") else None
        aliases = [a for full, a in entries if full == key or full.startswith(key + "<") or a == swig]
        if not aliases:
            lines.append("FAIL  %s (%s.wrap): no instantiation in %s.idx" % (c, sub, sub))
            failed += 1
            continue
        missing = []
        for a in aliases:
            if re.search(r"enum class %s\b" % re.escape(a), iface_text):
                ok = re.search(r"^%s_\w+ = " % re.escape(a), py_text, re.M)
            else:
                ok = re.search(r"^class %s\(" % re.escape(a), py_text, re.M)
            if not ok:
                missing.append(a)
        if missing:
            lines.append("FAIL  %s (%s.wrap): no Python class for %s" % (c, sub, " ".join(missing)))
            failed += 1
            continue
        base = "itk" + c.split("::")[-1]
        names = [a[len(base):] if a.startswith(base) else a for a in aliases]
        what = " ".join(n for n in names if n) or "(not a template)"
        lines.append("PASS  %s: %d instantiation%s: %s" % (c, len(aliases), "" if len(aliases) == 1 else "s", what))

print("\n".join(lines))
print("%d check(s) failed" % failed)
sys.exit(1 if failed else 0)
EOF

# SWIG warnings, igenerator warnings about types it does not know (each is a
# method argument or return type that Python sees as an opaque pointer).
step "igenerator warnings for the module (ITK types it does not know)"
# (printed during this run's build of the module, kept in ninja-module.log;
# a re-run that did not regenerate the interfaces has none to show)
grep -h "WARNING\|Warning" "$WORK_DIR/ninja-module.log" 2>/dev/null | sort | uniq -c | sort -rn | head -40 || true

if [ "${FULL_BUILD:-0}" != 1 ]; then
  echo "(import itk skipped: it needs the whole of ITK's wrapping; FULL_BUILD=1 builds it)"
else
step "import itk (information only; ITK 5.2.1 does not import with NumPy >= 1.24)"
# IMPORT_PYTHON: an interpreter of the same Python version with NumPy < 1.24
# (e.g. a virtual environment); by default the build's own python3.
import_python=${IMPORT_PYTHON:-$python}
echo "Python: $import_python, NumPy: $("$import_python" -c 'import numpy; print(numpy.__version__)' 2>/dev/null || echo "not installed")"
(cd "$WORK_DIR" && PYTHONPATH="$BUILD_DIR/Wrapping/Generators/Python:$BUILD_DIR/lib${PYTHONPATH:+:$PYTHONPATH}" \
  LD_LIBRARY_PATH="$BUILD_DIR/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
  timeout 900 "$import_python" "$REPO_DIR/scripts/python-wrapping-smoke-test.py" 2>&1 | tail -40) || true
fi

elapsed=$(($(date +%s) - START_TIME))
printf '\nWall time: %d min %d s. ninja status %d.\n' $((elapsed / 60)) $((elapsed % 60)) "$build_status"
if [ "$check_status" != 0 ] || [ "$build_status" != 0 ]; then
  echo "RESULT: FAIL"
  exit 1
fi
echo "RESULT: PASS"
