#!/usr/bin/env python3
"""CuPy reference timings for SegmentationBenchmark (run on the GPU machine).

The same cases (512x512x72 uint16, 12-bit values; 512^3 float32) and
operations, with CuPy's nearest equivalents:
- threshold: (lo <= x) & (x <= hi) to a uint8 array;
- threshold + pack: cupy.packbits(..., bitorder="little") on the flattened
  thresholded array (CuPy 14 has no axis option; with rows of 512 voxels
  this is the same as packing each row);
- threshold + pack + download: the same, then .get() to the host;
- unpack: cupy.unpackbits(..., bitorder="little");
- apply: cupy.where(mask, x, 0);
- box mean: cupyx.scipy.ndimage.uniform_filter(size=2r+1, mode="nearest")
  (float32 arithmetic: not ITK's double sum);
- erosion: cupyx.scipy.ndimage.grey_erosion(size=2r+1, mode="nearest")
  (the same minimum as ITK's box erosion with its default boundary).
When cuCIM is importable, also:
- erosion: cucim.skimage.morphology.erosion with
  footprint_rectangle((2r+1,) * 3, decomposition="separable") and
  mode="ignore" (pixels outside are the type's maximum: ITK's boundary);
  compared with CuPy's grey_erosion (must be equal);
- box mean: cucim.skimage.filters.rank.mean with a full box footprint and
  cast_to_uint8=False (a double sum per pixel, cast to the input type, so
  truncated for integers; reflected boundary, not ITK's clamped one);
  compared with CuPy's float uniform_filter away from the border.
cuCIM has no binary threshold, packing or masking function: no rows there.
Median of --reps calls, CUDA events (wall clock for the download rows).

    python3 benchmarks/segmentation_cupy.py [--reps 20] [--only-ct] [--skip-cucim]
"""
import argparse
import time

import cupy
import cupyx.scipy.ndimage as ndi
import numpy

from peers_common import compared, import_cucim, max_difference


def median_ms(f, reps):
    f()
    times = []
    for _ in range(reps):
        start, stop = cupy.cuda.Event(), cupy.cuda.Event()
        start.record()
        f()
        stop.record()
        stop.synchronize()
        times.append(cupy.cuda.get_elapsed_time(start, stop))
    return float(numpy.median(times))


def median_wall_ms(f, reps):
    f()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        f()
        cupy.cuda.Device().synchronize()
        times.append(1e3 * (time.perf_counter() - t0))
    return float(numpy.median(times))


def run_case(name, x, lo, hi, reps, rows, cucim=None):
    def threshold():
        return ((lo <= x) & (x <= hi)).astype(cupy.uint8)

    labels = threshold()
    packed = cupy.packbits(labels.ravel(), bitorder="little")
    rows.append((name, "CuPy threshold -> uint8", median_ms(threshold, reps)))
    rows.append((name, "CuPy threshold + packbits", median_ms(
        lambda: cupy.packbits(threshold().ravel(), bitorder="little"), reps)))
    rows.append((name, "CuPy threshold + packbits + download", median_wall_ms(
        lambda: cupy.packbits(threshold().ravel(), bitorder="little").get(), reps)))
    rows.append((name, "CuPy threshold + uint8 download", median_wall_ms(lambda: threshold().get(), reps)))
    rows.append((name, "CuPy unpackbits", median_ms(
        lambda: cupy.unpackbits(packed, bitorder="little"), reps)))
    rows.append((name, "CuPy apply (where)", median_ms(lambda: cupy.where(labels != 0, x, 0), reps)))
    for r in (1, 2, 3):
        rows.append((name, f"CuPy uniform_filter r={r}", median_ms(
            lambda: ndi.uniform_filter(x, size=2 * r + 1, mode="nearest"), reps)))
    for r in (1, 2, 3):
        rows.append((name, f"CuPy grey_erosion r={r}", median_ms(
            lambda: ndi.grey_erosion(x, size=2 * r + 1, mode="nearest"), reps)))
    if cucim is None:
        return
    morphology, rank = cucim["morphology"], cucim["filters.rank"]
    for r in (1, 2, 3):
        footprint = morphology.footprint_rectangle((2 * r + 1,) * 3, decomposition="separable")
        ms = median_ms(lambda: morphology.erosion(x, footprint, mode="ignore"), reps)
        note = compared(cupy, morphology.erosion(x, footprint, mode="ignore"),
                        ndi.grey_erosion(x, size=2 * r + 1, mode="nearest"))
        rows.append((name, f"cuCIM morphology.erosion r={r}", ms, note))
    for r in (1, 2, 3):
        box = cupy.ones((2 * r + 1,) * 3, dtype=bool)
        ms = median_ms(lambda: rank.mean(x, box, cast_to_uint8=False), reps)
        interior = (slice(r, -r),) * 3
        d = max_difference(cupy, rank.mean(x, box, cast_to_uint8=False)[interior],
                           ndi.uniform_filter(x.astype(cupy.float64), size=2 * r + 1, mode="nearest")[interior])
        rows.append((name, f"cuCIM filters.rank.mean r={r}", ms,
                     f"{x.dtype} out; max |difference| from a float64 box mean away from the border {d:.3g}"))


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument("--only-ct", action="store_true")
    parser.add_argument("--skip-cucim", action="store_true", help="CuPy rows only")
    args = parser.parse_args()
    cucim = None if args.skip_cucim else import_cucim("morphology", "filters.rank")
    rng = cupy.random.default_rng(11)
    rows = []
    ct = (rng.random((72, 512, 512), dtype=cupy.float32) * 4095).astype(cupy.uint16)
    run_case("512x512x72 uint16", ct, 1200, 1800, args.reps, rows, cucim)
    del ct
    if not args.only_ct:
        volume = rng.random((512, 512, 512), dtype=cupy.float32)
        run_case("512^3 float32", volume, cupy.float32(0.3), cupy.float32(0.45), args.reps, rows, cucim)
    print(f"CuPy {cupy.__version__}" + (f", cuCIM {cucim['version']}" if cucim else "")
          + f" on {cupy.cuda.runtime.getDeviceProperties(0)['name'].decode()}")
    print(f"{'case':20s} {'method':40s} {'ms':>10s}  note")
    for case, method, ms, *note in rows:
        print(f"{case:20s} {method:40s} {ms:10.3f}  {''.join(note)}")


if __name__ == "__main__":
    main()
