#!/usr/bin/env bash
# Final checks of 26de0c5: sanitizers on the touched GPU tests (mask, bin shrink: the shared line-grid launch),
# and the mask's whole path from Python on NumPy and from the tool, file to file (512^3 float32, uint8 mask)
cd "$(dirname "$0")/.."
nvidia-smi -L
B=$(cat .device/origin)
for t in itkCudaMaskImageFilterTest itkCudaBinShrinkImageFilterTest; do
  .device/run compute-sanitizer --tool memcheck --leak-check full --error-exitcode 9 "$B/bin/$t" --gtest_filter='*Gpu*' > "$OUT/memcheck-$t.log" 2>&1; echo "memcheck $t exit $?"; grep -E "ERROR SUMMARY|LEAK SUMMARY|PASSED|FAILED" "$OUT/memcheck-$t.log" | tail -3
  .device/run compute-sanitizer --tool racecheck --error-exitcode 9 "$B/bin/$t" --gtest_filter='*Gpu*' > "$OUT/racecheck-$t.log" 2>&1; echo "racecheck $t exit $?"; grep -E "RACECHECK SUMMARY|PASSED|FAILED" "$OUT/racecheck-$t.log" | tail -2
done
python3 -m pip install -q --no-index --no-deps --no-compile --upgrade --target /tmp/site .whl/*.whl
PYTHONPATH=/tmp/site python3 - <<'PY' 2>&1 | tee "$OUT/mask-paths.log"
import time, numpy as np, cupy as cp, cudaimagefilters as cif, subprocess, os
n = 512
rng = np.random.default_rng(0)
img = rng.random((n, n, n), dtype=np.float32) * 1000
mask = (img > 500).astype(np.uint8)
print("device:", cp.cuda.runtime.getDeviceProperties(0)["name"].decode())
def t(f, reps=5):
    f(); ts = []
    for _ in range(reps):
        cp.cuda.runtime.deviceSynchronize(); a = time.perf_counter(); f(); cp.cuda.runtime.deviceSynchronize(); ts.append(time.perf_counter() - a)
    return 1e3 * sorted(ts)[len(ts) // 2]
ref = np.where(mask != 0, img, np.float32(-1))
out = cif.mask_image_filter(img, mask, outside_value=-1)
assert cif.last_execution_report().device == "GPU" and np.array_equal(out, ref)
ms_np = t(lambda: cif.mask_image_filter(img, mask, outside_value=-1))
gi, gm = cp.asarray(img), cp.asarray(mask)
ms_cp = t(lambda: cif.mask_image_filter(gi, gm, outside_value=-1))
ms_cupy = t(lambda: cp.where(gm != 0, gi, cp.float32(-1)))
ms_cupy_np = t(lambda: cp.where(cp.asarray(mask) != 0, cp.asarray(img), cp.float32(-1)).get())
ms_numpy = t(lambda: np.where(mask != 0, img, np.float32(-1)), reps=3)
# pinned copy bandwidth, as the floor's
h = cp.cuda.alloc_pinned_memory(img.nbytes); hv = np.frombuffer(h, np.float32, img.size)
d = cp.empty(img.size, cp.float32)
up = t(lambda: d.set(hv)); down = t(lambda: d.get(out=hv))
gb = img.nbytes / 1e9
floor = (img.nbytes + mask.nbytes) / (img.nbytes / up) + down  # ms: bytes at the measured pinned speeds
print(f"pinned up {gb/up*1e3:.1f} GB/s, down {gb/down*1e3:.1f} GB/s; floor (image + mask up, result down) {floor:.1f} ms")
print(f"| mask_image_filter, NumPy in and out | {ms_np:.1f} ms | {ms_np/floor:.2f}x floor |")
print(f"| mask_image_filter, CuPy arrays | {ms_cp:.2f} ms | |")
print(f"| CuPy cp.where, CuPy arrays | {ms_cupy:.2f} ms | |")
print(f"| CuPy cp.where with cp.asarray and .get() on NumPy | {ms_cupy_np:.1f} ms | |")
print(f"| NumPy np.where, 1 thread | {ms_numpy:.1f} ms | |")
# the tool, file to file (MetaImage written here)
def mha(path, a, etype):
    with open(path, "wb") as f:
        f.write((f"ObjectType = Image\nNDims = 3\nDimSize = {n} {n} {n}\nElementType = {etype}\nElementDataFile = LOCAL\n").encode())
        f.write(a.tobytes())
mha("/tmp/in.mha", img, "MET_FLOAT"); mha("/tmp/mask.mha", mask, "MET_UCHAR")
tool = os.path.join(open(".device/origin").read().strip(), "bin", "cudaimagefilters")
a = time.perf_counter()
r = subprocess.run([".device/run", tool, "mask", "/tmp/in.mha", "/tmp/mask.mha", "/tmp/out.mha", "--outside-value", "-1"], capture_output=True, text=True)
wall = 1e3 * (time.perf_counter() - a)
print(r.stdout.strip()[-400:], r.stderr.strip()[-300:])
print(f"| cudaimagefilters mask, file to file | {wall:.0f} ms wall (the process, the reader and writer included) | |")
PY
