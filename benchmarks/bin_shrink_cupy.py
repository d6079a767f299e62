#!/usr/bin/env python3
"""Bin shrink on device-resident data (run on the GPU machine): the module's
``bin_shrink_image_filter`` on a CuPy array against CuPy's own bin average
(``x.reshape(...).mean(axis=(1, 3, 5))``, float64 sums as ITK's), for float32
volumes of n^3 and factors 2 and 4. Median of --reps calls timed with CUDA
events (the module's time includes its Python call). Prints ms, GB/s (input
read once plus output written once) and the fraction of the device-to-device
copy bandwidth measured in the same run, and checks the two results equal.

When cuCIM is importable, also cucim.skimage.transform.downscale_local_mean
(block_reduce with cupy.mean in the input's float32, not ITK's
float64 bin sums): its time, and its largest difference from ours.

    python3 benchmarks/bin_shrink_cupy.py [--sizes 512,1024] [--reps 20] [--skip-cucim]
"""
import argparse

import cupy
import numpy

import cudaimagefilters as cif
from peers_common import import_cucim, max_difference


def median_ms(f, reps):
    f()
    cupy.cuda.Device().synchronize()
    times = []
    for _ in range(reps):
        start, stop = cupy.cuda.Event(), cupy.cuda.Event()
        start.record()
        f()
        stop.record()
        stop.synchronize()
        times.append(cupy.cuda.get_elapsed_time(start, stop))
    return float(numpy.median(times))


def copy_bandwidth():
    a = cupy.empty(1 << 28, dtype=cupy.float32)  # 1 GiB
    b = cupy.empty_like(a)
    ms = median_ms(lambda: b.__setitem__(Ellipsis, a), 10)
    return 2 * a.nbytes / (ms * 1e-3) / 1e9


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="512,1024")
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument("--skip-cucim", action="store_true", help="no cuCIM rows")
    args = parser.parse_args()
    cucim = None if args.skip_cucim else import_cucim("transform")
    copy = copy_bandwidth()
    print(f"Bin shrink, float32, device-resident. Device: {cif.device_description()}; "
          f"D2D copy bandwidth {copy:.0f} GB/s (read + write counted); CuPy {cupy.__version__}"
          + (f"; cuCIM {cucim['version']}" if cucim else ""))
    print(f"{'case':<22}{'method':<42}{'ms':>10}{'GB/s':>10}{'%copy':>8}")
    for n in (int(v) for v in args.sizes.split(",")):
        x = cupy.random.default_rng(1).random((n, n, n), dtype=cupy.float32) * 1000
        for f in (2, 4):
            m = n // f
            ours = cif.bin_shrink_image_filter(x, f)
            ref = x.reshape(m, f, m, f, m, f).mean(axis=(1, 3, 5), dtype=cupy.float64).astype(cupy.float32)
            equal = bool(cupy.array_equal(ours, ref))
            bytes_moved = x.nbytes + ours.nbytes
            calls = [
                ("ours (Python on CuPy)", lambda: cif.bin_shrink_image_filter(x, f)),
                ("CuPy reshape + mean (float64 sums)",
                 lambda: x.reshape(m, f, m, f, m, f).mean(axis=(1, 3, 5), dtype=cupy.float64).astype(cupy.float32)),
            ]
            if cucim is not None:
                calls.append(("cuCIM downscale_local_mean (cupy.mean)",
                              lambda: cucim["transform"].downscale_local_mean(x, (f, f, f))))
            for name, call in calls:
                ms = median_ms(call, args.reps)
                gbps = bytes_moved / (ms * 1e-3) / 1e9
                print(f"{f'{n}^3 / {f}':<22}{name:<42}{ms:>10.3f}{gbps:>10.1f}{100 * gbps / copy:>7.1f}%")
            print(f"{'':<22}equal to CuPy's: {'yes' if equal else 'NO (largest difference %g)' % float(cupy.abs(ours - ref).max())}")
            if cucim is not None:
                theirs = cucim["transform"].downscale_local_mean(x, (f, f, f))
                print(f"{'':<22}cuCIM's: {theirs.dtype}, largest difference from ours {max_difference(cupy, theirs, ours):.3g}")
                del theirs


if __name__ == "__main__":
    main()
