#!/usr/bin/env python3
"""Whole images the way users hand them over, on one GPU: NumPy arrays to
the Python package, files to the command-line tool.

For each job (a 512^3 volume by default) it times, in one run:
- the copy floor: the input's bytes uploaded and the output's downloaded
  between pinned host memory and the device, measured here at these sizes
  (a NumPy array is pageable memory: the package stages it through pinned
  buffers, so this is the floor of its path); and CuPy's own copies of the
  same bytes from and to pageable NumPy memory, for reference;
- ours on NumPy: the Python function on a NumPy array, returning a NumPy
  array (wall time: upload, filter, download, the package's own work);
- ours on CuPy: the same function on a device-resident CuPy array (the
  device-resident time, for reference);
- CuPy on NumPy: cupyx.scipy.ndimage's counterpart with cp.asarray before and
  .get() after, where it has one;
- the command line, file to file: `cudaimagefilters COMMAND in.mha out.mha
  --device gpu`, wall time of the process, with the filter time it prints
  (uploads, kernels, downloads) and the rest (start-up, reading, writing);
  the file's read and write floor is this machine's page-cache copy, not
  measured here.

It prints one row per job and path: ms (median of --reps, the CLI of
--cli-reps), GB/s of input plus output bytes, and the copy floor divided
by the time (1.0 means the path runs at the measured copy speed). Nothing
is asserted: it is a benchmark, not a test.

    python3 benchmarks/whole_paths.py --cli build/bin/cudaimagefilters [--size 512] [--reps 5] [--work /tmp/cif-paths]

On the GPU machine (no ITK there): the wheel on PYTHONPATH and the tool
through .device/run (see scripts/gpu-check.sh).
"""

import argparse
import os
import re
import shlex
import statistics
import subprocess
import sys
import time

import cupy as cp
import cupyx
import numpy as np
from cupyx.scipy import ndimage as cndi

import cudaimagefilters as cif
from peers_common import wall_ms, write_mha


def volume(n, dtype, seed=1):
    """A smooth volume with noise, in the range of its type (uint16: 0..4000)."""
    rng = np.random.default_rng(seed)
    z, y, x = np.ogrid[:n, :n, :n]
    base = 1000.0 + 800.0 * np.sin(x / 23.0) * np.cos(y / 31.0) + 600.0 * np.sin(z / 17.0)
    data = base + rng.normal(0.0, 50.0, (n, n, n))
    if dtype == np.uint16:
        return np.clip(data, 0, 4000).astype(np.uint16)
    return data.astype(np.float32)


def pinned_floor_ms(in_bytes, out_bytes, reps):
    """The copy floor: an upload of the input's bytes and a download of the
    output's, between pinned host memory and the device (cudaMemcpy through
    CuPy, the default stream), measured at these sizes."""
    up_host = cupyx.empty_pinned((in_bytes,), np.uint8)
    up_dev = cp.empty(in_bytes, np.uint8)
    down_host = cupyx.empty_pinned((out_bytes,), np.uint8)
    down_dev = cp.empty(out_bytes, np.uint8)
    floor = wall_ms(cp, lambda: up_dev.set(up_host), reps) + wall_ms(cp, lambda: down_dev.get(out=down_host), reps)
    del up_host, up_dev, down_host, down_dev
    return floor


def pageable_copies_ms(host, out_shape, out_dtype, reps):
    """CuPy's own copies of the same bytes from and to pageable NumPy memory
    (cp.asarray, .get()): what a NumPy caller of a CuPy function pays."""
    host_out = np.empty(out_shape, out_dtype)
    dev_out = cp.empty(out_shape, out_dtype)
    return wall_ms(cp, lambda: cp.asarray(host), reps) + wall_ms(cp, lambda: dev_out.get(out=host_out), reps)


def cli_ms(cli, args, reps):
    """Median wall time of the tool's process, and the median filter time it printed."""
    walls, filters = [], []
    for _ in range(reps + 1):
        t0 = time.perf_counter()
        done = subprocess.run(cli + args, capture_output=True, text=True)
        wall = (time.perf_counter() - t0) * 1e3
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(cli + args)} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
        found = re.search(r"filter time ([0-9.]+) ms", done.stdout)
        walls.append(wall)
        filters.append(float(found.group(1)) if found else float("nan"))
    return statistics.median(walls[1:]), statistics.median(filters[1:]), done.stdout.strip().splitlines()[-1]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cli", required=True, help="the tool, e.g. build/bin/cudaimagefilters or '.device/run build/bin/cudaimagefilters'")
    parser.add_argument("--size", type=int, default=512, help="edge of the cubic volume (default 512)")
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--cli-reps", type=int, default=3)
    parser.add_argument("--work", default="/tmp/cif-paths", help="where the files go")
    opts = parser.parse_args()
    cli = shlex.split(opts.cli)
    os.makedirs(opts.work, exist_ok=True)
    n = opts.size

    props = cp.cuda.runtime.getDeviceProperties(0)
    print(f"# device: {props['name'].decode()}")
    print(f"# date: {time.strftime('%Y-%m-%d')}")
    print(f"# commit: {os.environ.get('CIF_COMMIT', 'unknown')}")
    print(f"# volume: {n}^3; times are medians of {opts.reps} calls ({opts.cli_reps} processes for the CLI)")
    print("# floor = upload of the input + download of the output, pinned host memory (cudaMemcpy), measured here")
    print("| job | path | ms | GB/s (in+out) | floor / time | note |")
    print("|---|---|---|---|---|---|")

    f32 = volume(n, np.float32)
    u16 = volume(n, np.uint16)
    jobs = [
        # name, input, our function, CuPy's on a CuPy array (or None), CLI args after IN OUT, output dtype, output shape
        (
            "median r=1 float32",
            f32,
            lambda a: cif.median_image_filter(a, radius=1),
            lambda d: cndi.median_filter(d, size=3, mode="nearest"),
            ["median", "--radius", "1"],
            np.float32,
            f32.shape,
        ),
        (
            "threshold uint16 to uint8",
            u16,
            lambda a: cif.binary_threshold_image_filter(
                a, lower_threshold=1000, upper_threshold=3000, inside_value=255, outside_value=0
            ),
            lambda d: ((d >= 1000) & (d <= 3000)).astype(cp.uint8) * cp.uint8(255),
            ["threshold", "--lower", "1000", "--upper", "3000"],
            np.uint8,
            u16.shape,
        ),
        (
            "B-spline prefilter float32",
            f32,
            lambda a: cif.bspline_decomposition_image_filter(a, spline_order=3),
            lambda d: cndi.spline_filter(d, order=3, output=cp.float32, mode="mirror"),
            ["bspline-prefilter"],
            np.float32,
            f32.shape,
        ),
        (
            "bin shrink 2 float32",
            f32,
            lambda a: cif.bin_shrink_image_filter(a, shrink_factors=2),
            lambda d: d.reshape(n // 2, 2, n // 2, 2, n // 2, 2).mean(axis=(1, 3, 5), dtype=cp.float32),
            ["bin-shrink", "--shrink-factors", "2"],
            np.float32,
            (n // 2,) * 3,
        ),
        (
            # CuPy's peer is a truncated FIR Gaussian (4 sigma), not ITK's recursive approximation
            "smoothing recursive Gaussian sigma 2 float32",
            f32,
            lambda a: cif.smoothing_recursive_gaussian_image_filter(a, sigma=2.0),
            lambda d: cndi.gaussian_filter(d, sigma=2.0, mode="nearest"),
            ["smoothing-recursive-gaussian", "--sigma", "2"],
            np.float32,
            f32.shape,
        ),
        (
            # ITK's Bessel kernel of variance 4; CuPy's peer the sampled Gaussian of sigma 2
            "discrete Gaussian variance 4 float32",
            f32,
            lambda a: cif.discrete_gaussian_image_filter(a, variance=4.0),
            lambda d: cndi.gaussian_filter(d, sigma=2.0, mode="nearest"),
            ["discrete-gaussian", "--variance", "4"],
            np.float32,
            f32.shape,
        ),
    ]
    for name, host, ours, peer, args, out_dtype, out_shape in jobs:
        in_bytes = host.nbytes
        out_bytes = int(np.prod(out_shape)) * np.dtype(out_dtype).itemsize
        moved = in_bytes + out_bytes
        floor = pinned_floor_ms(in_bytes, out_bytes, opts.reps)

        def row(path, ms, note=""):
            print(f"| {name} | {path} | {ms:.1f} | {moved / ms / 1e6:.2f} | {floor / ms:.2f} | {note} |", flush=True)

        print(f"| {name} | copy floor (pinned up + down) | {floor:.1f} | {moved / floor / 1e6:.2f} | 1.00 | |", flush=True)
        row("CuPy's copies alone, pageable", pageable_copies_ms(host, out_shape, out_dtype, opts.reps), "cp.asarray + .get(), no filter")
        row(
            "a fresh NumPy output, first touch",
            wall_ms(cp, lambda: np.empty(out_shape, out_dtype).fill(0), opts.reps),
            "np.empty + fill with one thread, for scale: a new output is touched for the first time",
        )
        result = ours(host)
        if not isinstance(result, np.ndarray) or result.dtype != np.dtype(out_dtype) or result.shape != out_shape:
            raise RuntimeError(f"{name}: the function returned {type(result).__name__} {getattr(result, 'dtype', '')} {getattr(result, 'shape', '')}")
        row("ours, NumPy in and out", wall_ms(cp, lambda: ours(host), opts.reps))
        dev = cp.asarray(host)
        row("ours, CuPy (device-resident)", wall_ms(cp, lambda: ours(dev), opts.reps), "no copies")
        if peer is not None:
            row("CuPy, NumPy in and out", wall_ms(cp, lambda: peer(cp.asarray(host)).get(), opts.reps), "cp.asarray, .get()")
            ref = peer(dev)
            diff = float(cp.abs(cp.asarray(result).astype(cp.float64) - ref.astype(cp.float64)).max())
            print(f"|  |  |  |  |  | max |ours - CuPy's| {diff:.3g} |", flush=True)
            del ref
        del dev
        cp.get_default_memory_pool().free_all_blocks()
        src = os.path.join(opts.work, "in.mha")
        dst = os.path.join(opts.work, "out.mha")
        write_mha(src, host)
        wall, filt, line = cli_ms(cli, [args[0], src, dst] + args[1:] + ["--device", "gpu"], opts.cli_reps)
        row("CLI, file to file", wall, f"filter time {filt:.1f} ms; the rest (start, read, write) {wall - filt:.1f} ms")
        os.remove(src)
        os.remove(dst)


if __name__ == "__main__":
    sys.exit(main())
