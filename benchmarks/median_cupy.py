#!/usr/bin/env python3
"""CuPy and cuCIM reference timings for the median benchmark (run on the GPU
machine).

Times cupyx.scipy.ndimage.median_filter and, when cuCIM is importable,
cucim.skimage.filters.median on the same cases as MedianBenchmark: a
512x512x72 uint16 volume (random 12-bit values) with radii 1, 2, 3, 5, 7 and
a 512^3 float32 volume (random in [0, 1000)) with radii 1, 2, 3; window size
2 r + 1 on every axis, mode='nearest' (ITK's zero-flux Neumann boundary,
clamped indices); for cuCIM a full box footprint of that size (cuCIM's
histogram median is 2D only, so 3D volumes take its sorting kernel). Median
of --reps calls, timed with CUDA events; slow calls (over a second) are
repeated fewer times. cuCIM's result is compared with CuPy's (both are exact
medians: they must be equal). With --check, CuPy's result of each case is
compared with a CPU reference on a few output voxels.

    python3 benchmarks/median_cupy.py [--reps 20] [--radii-u16 1,2,3,5,7]
        [--radii-f32 1,2,3] [--skip-float] [--check] [--skip-cucim]
"""
import argparse

import cupy
import cupyx.scipy.ndimage as ndi
import numpy

from peers_common import compared, import_cucim


def median_ms(f, reps):
    def once():
        start, stop = cupy.cuda.Event(), cupy.cuda.Event()
        start.record()
        f()
        stop.record()
        stop.synchronize()
        return cupy.cuda.get_elapsed_time(start, stop)

    f()  # warm-up: the first call compiles the kernel
    cupy.cuda.Device().synchronize()
    first = once()
    if first > 1000.0:
        return first
    if first > 200.0:
        reps = min(reps, 3)
    return float(numpy.median([once() for _ in range(reps)]))


def spot_check(x, out, r, samples=20):
    """Medians of a few clamped windows on the CPU against CuPy's output."""
    host = cupy.asnumpy(x)
    result = cupy.asnumpy(out)
    rng = numpy.random.default_rng(3)
    for _ in range(samples):
        z, y, w = (int(rng.integers(0, n)) for n in host.shape)
        idx = [numpy.clip(numpy.arange(c - r, c + r + 1), 0, n - 1) for c, n in zip((z, y, w), host.shape)]
        window = host[numpy.ix_(*idx)]
        if numpy.median(window) != result[z, y, w]:
            return False
    return True


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument("--radii-u16", default="1,2,3,5,7")
    parser.add_argument("--radii-f32", default="1,2,3")
    parser.add_argument("--skip-float", action="store_true")
    parser.add_argument("--skip-cucim", action="store_true", help="CuPy rows only")
    parser.add_argument("--check", action="store_true", help="spot-check CuPy's results on the CPU")
    args = parser.parse_args()
    cucim = None if args.skip_cucim else import_cucim("filters")

    rng = cupy.random.default_rng(7)
    cases = [("512x512x72 uint16", (72, 512, 512), cupy.uint16, 4096.0, args.radii_u16)]
    if not args.skip_float:
        cases.append(("512^3 float32", (512, 512, 512), cupy.float32, 1000.0, args.radii_f32))
    rows = []

    def add(case, method, ms, voxels, itemsize, note):
        rows.append((case, method, ms, voxels / (ms * 1e-3) / 1e9, 2.0 * voxels * itemsize / (ms * 1e-3) / 1e9, note))
        print(f"  {case}: {method}: {ms:.3f} ms", flush=True)

    for name, shape, dtype, hi, radii in cases:
        x = (rng.random(shape, dtype=cupy.float32) * hi).astype(dtype)
        out = cupy.empty_like(x)
        voxels = x.size
        for r in (int(v) for v in radii.split(",")):
            case = f"{name}, radius {r}"
            ms = median_ms(lambda: ndi.median_filter(x, size=2 * r + 1, mode="nearest", output=out), args.reps)
            note = ""
            if args.check:
                note = "spot check ok" if spot_check(x, out, r) else "SPOT CHECK FAILED"
            add(case, "CuPy median_filter", ms, voxels, x.itemsize, note)
            if cucim is not None:
                footprint = cupy.ones((2 * r + 1,) * 3, dtype=bool)
                theirs = cupy.empty_like(x)
                ms = median_ms(lambda: cucim["filters"].median(x, footprint, out=theirs, mode="nearest"), args.reps)
                add(case, "cuCIM filters.median", ms, voxels, x.itemsize, compared(cupy, theirs, out))
                del theirs
        del x, out
    print(f"\nCuPy {cupy.__version__}" + (f", cuCIM {cucim['version']}" if cucim else "")
          + f" on {cupy.cuda.runtime.getDeviceProperties(0)['name'].decode()}: "
          "cupyx.scipy.ndimage.median_filter(mode='nearest'), cucim.skimage.filters.median(box footprint, mode='nearest')")
    print(f"{'case':30s} {'method':22s} {'ms':>11s} {'Gvox/s':>8s} {'GB/s':>8s}  note")
    for case, method, ms, gvox, gbs, note in rows:
        print(f"{case:30s} {method:22s} {ms:11.3f} {gvox:8.3f} {gbs:8.1f}  {note}")


if __name__ == "__main__":
    main()
