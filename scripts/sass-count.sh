#!/usr/bin/env bash
# Counts a kernel's instructions without a GPU (METHOD.md: count, predict,
# then measure). Compiles one CUDA source of the core for sm_90 with the
# configured build's own flags (build/src/.../flags.make), disassembles the
# cubin with nvdisasm, and prints for each kernel whose mangled name matches
# REGEX: its registers and spills (ptxas), its number of SASS instructions,
# and its N most frequent opcodes (default 12). Static counts: an unrolled
# loop body appears once per unrolled step, a rolled one once.
#
# Usage, from the repository root, after cmake has configured BUILD:
#   bash scripts/sass-count.sh [--build DIR] src/core/bilateral/Bilateral.cu 'BilateralTileKernelIttLi2ELi2E' [N]
#
# nvdisasm: $NVDISASM, else nvdisasm on PATH, else the one in the PyPI wheel
# nvidia-cuda-nvdisasm installed in .venv
# (.venv/bin/python -m pip install nvidia-cuda-nvdisasm); Debian's nvcc
# package has no disassembler. SASS_OUT=FILE keeps the whole listing.
set -euo pipefail
cd "$(dirname "$0")/.."
build=build
if [[ ${1:-} == --build ]]; then
  build=$2
  shift 2
fi
if [[ $# -lt 2 ]]; then
  sed -n '2,/^set /{/^#/p}' "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi
source=$(realpath "$1")
pattern=$2
top=${3:-12}
flags=$build/src/CMakeFiles/CudaImageFiltersCore.dir/flags.make
[[ -f $flags ]] || {
  echo "no $flags: configure the build first (cmake -S . -B $build)" >&2
  exit 1
}
disasm=${NVDISASM:-$(command -v nvdisasm || true)}
if [[ -z $disasm ]]; then
  disasm=$(ls .venv/lib/python3*/site-packages/nvidia/cu*/bin/nvdisasm 2> /dev/null | head -1 || true)
fi
[[ -n $disasm && -x $disasm ]] || {
  echo "no nvdisasm: set NVDISASM, or .venv/bin/python -m pip install nvidia-cuda-nvdisasm" >&2
  exit 1
}
value() { sed -n "s/^$1 = //p" "$flags"; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# the build's flags, for the machine code only (sm_90, no PTX, no fatbin compression)
read -r -a cudaFlags <<< "$(value CUDA_FLAGS | sed -E 's/--generate-code=arch=compute_90,code=\[compute_90\]//; s/-Xfatbin=-compress-all//')"
read -r -a defines <<< "$(value CUDA_DEFINES)"
(cd "$build/src" && nvcc "${defines[@]}" --options-file CMakeFiles/CudaImageFiltersCore.dir/includes_CUDA.rsp \
  "${cudaFlags[@]}" -Xptxas -v -cubin -o "$work/k.cubin" "$source") > "$work/ptxas.txt" 2>&1 || {
  cat "$work/ptxas.txt" >&2
  exit 1
}
"$disasm" -c "$work/k.cubin" > "$work/k.sass"
[[ -z ${SASS_OUT:-} ]] || cp "$work/k.sass" "$SASS_OUT"
found=0
for kernel in $(grep -oE '^\.text\.[A-Za-z0-9_]+' "$work/k.sass" | sed 's/^\.text\.//' | grep -E -- "$pattern" || true); do
  found=1
  echo "== $kernel"
  grep -A3 "Compiling entry function '$kernel'" "$work/ptxas.txt" |
    grep -oE '[0-9]+ bytes spill stores|Used [0-9]+ registers' | paste -sd, - | sed 's/,/, /; s/^/   /'
  awk -v k=".text.$kernel:" '/^\.text\./ { f = ($0 == k) } f' "$work/k.sass" |
    grep -oE '^\s+/\*[0-9a-f]+\*/\s+(@!?U?P[0-9T]+ )?[A-Z0-9_.]+' | awk '{ print $NF }' | sed -E 's/\..*//' |
    sort | uniq -c | sort -rn | awk -v top="$top" '{ total += $1; if (NR <= top) line = line sprintf(" %s %d", $2, $1) }
      END { printf "   %d instructions:%s\n", total, line }'
done
[[ $found -eq 1 ]] || {
  echo "no kernel matches $pattern" >&2
  exit 1
}
