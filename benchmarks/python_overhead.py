#!/usr/bin/env python3
"""The Python package's cost per call on CuPy arrays, on one GPU.

For each job it times, in one run (jobs without a CoreCallBenchmark row,
the GRBF zoom and the kernel superposition, have the extension call alone
in place of the C++ core: its wall and GPU times):
- the C++ core call on device-resident data (build/bin/CoreCallBenchmark,
  the same jobs and sizes);
- the Python function on CuPy arrays (cudaimagefilters), device-resident too;
- cupyx.scipy.ndimage's counterpart where there is one.
All are wall-clock times of a call that returns after the GPU finished
(median of --reps calls after a warm-up). Every job alternates between two
inputs (and the C++ reference between two outputs too; the Python calls get
fresh outputs), so that no call finds its data in the L2 cache from the call
before: the large sizes would fit in an H100's 50 MB L2 otherwise. The Python layer's overhead is the
difference to the C++ call; it should be a constant (under 50 microseconds),
the same for the small and the large size of a job, not proportional to the
image.

    python3 benchmarks/python_overhead.py --cpp build/bin/CoreCallBenchmark [--reps 30] [--json out.json]
"""

import argparse
import itertools
import json
import math
import statistics
import subprocess
import sys
import tempfile
import time

import cupy as cp
import numpy as np
from cupyx.scipy import ndimage as cndi

import cudaimagefilters as cif
from peers_common import wall_ms


def warm_up_gpu(seconds=1.5):
    """Keeps the GPU busy so that its clocks are up before anything is timed."""
    a = cp.random.random((4096, 4096), dtype=cp.float32)
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        a = a @ a
        a /= cp.abs(a).max()
    cp.cuda.Stream.null.synchronize()


def device_ms(f, reps):
    """Median GPU time (CUDA events on the null stream) of f."""
    start, stop = cp.cuda.Event(), cp.cuda.Event()
    f()
    times = []
    for _ in range(reps):
        start.record()
        f()
        stop.record()
        stop.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, stop))
    return statistics.median(times)


def paired_overhead_us(ours, raw, reps):
    """Median of (Python call - extension call alone), the two timed in
    alternation so that drifts of the GPU's speed cancel: the Python layer's
    own cost (array checks, output allocation, the report)."""
    ours(), raw()
    cp.cuda.Stream.null.synchronize()
    diffs = []
    for _ in range(reps):
        t0 = time.perf_counter()
        raw()
        cp.cuda.Stream.null.synchronize()
        t1 = time.perf_counter()
        ours()
        cp.cuda.Stream.null.synchronize()
        t2 = time.perf_counter()
        diffs.append(((t2 - t1) - (t1 - t0)) * 1e6)
    return statistics.median(diffs)


RAW = {}


def captured(call, extension_function):
    """The extension call that `call` (a Python function call) makes,
    captured once and replayed with the same arguments (its output array
    included): the extension alone, without the Python layer."""
    real = getattr(cif._cif, extension_function)
    seen = {}

    def spy(*a, **k):
        seen.setdefault("call", (a, k))
        return real(*a, **k)

    setattr(cif._cif, extension_function, spy)
    try:
        call()
    finally:
        setattr(cif._cif, extension_function, real)
    a, k = seen["call"]
    return lambda: real(*a, **k)


def rotation(shape):
    """The C++ benchmark's rotation (10 degrees about z through the centre) in SciPy's convention."""
    t = math.radians(10.0)
    a = np.array([[math.cos(t), -math.sin(t), 0], [math.sin(t), math.cos(t), 0], [0, 0, 1]])  # x, y, z
    centre_xyz = (np.array(shape[::-1]) - 1) / 2
    b = centre_xyz - a @ centre_xyz
    p = np.eye(3)[::-1]
    return p @ a @ p, p @ b  # array axis order


def jobs():
    lo, hi = 1000, 3000
    _cif = cif._cif
    for shape in ((16, 64, 64), (72, 512, 512)):
        rng = np.random.default_rng(5)
        xs = [cp.asarray(rng.integers(0, 4096, shape, dtype=np.uint16)) for _ in range(2)]
        ys = [cp.empty_like(xs[0]) for _ in range(2)]
        ls = [cp.empty(shape, dtype=cp.uint8) for _ in range(2)]
        turn = itertools.count()

        def pick(arrays):
            return arrays[next(turn) & 1]

        def io():
            k = next(turn) & 1
            return xs[k], ys[k]

        # the extension's own call on preallocated outputs (no Python layer)
        RAW[("median r=1", shape)] = lambda: _cif.run_filter("median", *io(), {"radius": 1}, "gpu", 0, 0)
        RAW[("mean r=1", shape)] = lambda: _cif.run_filter("mean", *io(), {"radius": 1}, "gpu", 0, 0)
        RAW[("erosion r=1", shape)] = lambda: _cif.run_filter("erode", *io(), {"radius": 1}, "gpu", 0, 0)
        RAW[("bilateral r=2", shape)] = lambda: _cif.run_filter(
            "bilateral", *io(), {"domain_sigma": 0.8, "range_sigma": 200.0}, "gpu", 0, 0
        )
        RAW[("rotating mask", shape)] = lambda: _cif.run_filter("rotating-mask", *io(), {}, "gpu", 0, 0)
        RAW[("threshold", shape)] = lambda: _cif.run_filter(
            "threshold", pick(xs), pick(ls), {"lower_threshold": lo, "upper_threshold": hi}, "gpu", 0, 0
        )
        yield "median r=1", shape, lambda: cif.median_image_filter(pick(xs), radius=1), lambda: cndi.median_filter(
            pick(xs), size=3, mode="nearest"
        ), "median_filter"
        yield "mean r=1", shape, lambda: cif.mean_image_filter(pick(xs), radius=1), lambda: cndi.uniform_filter(
            pick(xs), size=3, mode="nearest"
        ), "uniform_filter"
        yield "erosion r=1", shape, lambda: cif.grayscale_erode_image_filter(
            pick(xs), radius=1
        ), lambda: cndi.grey_erosion(pick(xs), size=3, mode="nearest"), "grey_erosion"
        yield "bilateral r=2", shape, lambda: cif.bilateral_image_filter(
            pick(xs), domain_sigma=0.8, range_sigma=200.0
        ), None, ""
        yield "rotating mask", shape, lambda: cif.rotating_mask_image_filter(pick(xs)), None, ""
        yield "threshold", shape, lambda: cif.binary_threshold_image_filter(
            pick(xs), lo, hi
        ), lambda: ((pick(xs) >= lo) & (pick(xs) <= hi)).astype(cp.uint8) * 255, "elementwise"
    for shape in ((32, 32, 32), (256, 256, 256)):
        rng = np.random.default_rng(5)
        fs = [cp.asarray(rng.uniform(0, 1000, shape).astype(np.float32)) for _ in range(2)]
        cs = [cp.empty_like(fs[0]) for _ in range(2)]
        fturn = itertools.count()

        def fpick(arrays=fs, turn=fturn):
            return arrays[next(turn) & 1]

        def fio(turn=fturn):
            k = next(turn) & 1
            return fs[k], cs[k]

        m, off = rotation(shape)
        mc, offc = cp.asarray(m), cp.asarray(off)
        RAW[("prefilter (recursive)", shape)] = lambda fio=fio: _cif.run_filter(
            "bspline-prefilter", *fio(), {}, "gpu", 0, 0
        )
        yield "prefilter (recursive)", shape, lambda fpick=fpick: cif.bspline_decomposition_image_filter(
            fpick()
        ), lambda fpick=fpick: cndi.spline_filter(fpick(), order=3, mode="mirror", output=cp.float32), "spline_filter"
        linear = lambda fpick=fpick, m=m, off=off: cif.resample_image_filter(  # noqa: E731
            fpick(), matrix=m, offset=off, interpolator="linear"
        )
        cubic = lambda fpick=fpick, m=m, off=off: cif.resample_image_filter(  # noqa: E731
            fpick(), matrix=m, offset=off, interpolator="bspline"
        )
        RAW[("resample linear", shape)] = captured(linear, "resample_gpu")
        RAW[("resample cubic", shape)] = captured(cubic, "resample_gpu")
        yield "resample linear", shape, linear, lambda fpick=fpick, m=mc, off=offc: cndi.affine_transform(
            fpick(), m, off, order=1
        ), "affine_transform order 1"
        yield "resample cubic", shape, cubic, lambda fpick=fpick, m=mc, off=offc: cndi.affine_transform(
            fpick(), m, off, order=3, mode="mirror"
        ), "affine_transform order 3"
    # issue 24's two functions without a CoreCallBenchmark row: the extension
    # call alone stands for the core (its GPU time beside it)
    for shape, zoom in (((60, 60), 4), ((192, 512, 512), (1, 1, 2))):
        rng = np.random.default_rng(5)
        gs = [cp.asarray(rng.uniform(0, 1000, shape).astype(np.float32)) for _ in range(2)]
        gturn = itertools.count()
        grbf = lambda gs=gs, gturn=gturn, zoom=zoom: cif.gaussian_rbf_interpolation_image_filter(  # noqa: E731
            gs[next(gturn) & 1], zoom=zoom
        )
        RAW[("GRBF zoom", shape)] = captured(grbf, "gaussian_rbf")
        yield "GRBF zoom", shape, grbf, (
            lambda gs=gs, gturn=gturn, zoom=zoom: cndi.zoom(
                gs[next(gturn) & 1], tuple(reversed(zoom)) if not np.isscalar(zoom) else zoom, order=3
            )
        ), "zoom order 3"
    for shape, sigma in (((512, 512), 2.0), ((128, 128, 128), 1.0)):
        rng = np.random.default_rng(5)
        ks = [cp.asarray(rng.uniform(0, 1000, shape).astype(np.float32)) for _ in range(2)]
        sigma_map = cp.full(shape, sigma, dtype=cp.float32)
        kturn = itertools.count()
        superposition = lambda ks=ks, kturn=kturn, sigma_map=sigma_map: cif.kernel_superposition_image_filter(  # noqa: E731
            ks[next(kturn) & 1], sigma_map
        )
        RAW[("kernel superposition", shape)] = captured(superposition, "kernel_superposition")
        yield "kernel superposition", shape, superposition, None, ""


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--cpp", default="build/bin/CoreCallBenchmark", help="the C++ reference executable ('' to skip it: no C++ column)"
    )
    parser.add_argument("--reps", type=int, default=100)
    parser.add_argument("--json", help="write the results here")
    parser.add_argument(
        "--uncached-grids",
        action="store_true",
        help="run without the package's caches of what follows from grids alone (ITK's point-to-index matrices, "
        "the GRBF's zoom grids and index maps, resample's padded grid parameters), as before they existed, to time them",
    )
    args = parser.parse_args()
    if args.uncached_grids:
        from cudaimagefilters import _arrays

        _arrays.GRID_CACHE_SIZE = 0  # every grid cache goes through _arrays.grid_cached
    if not cif.is_gpu_available():
        sys.exit(f"no GPU: {cif.gpu_unavailable_reason()}")

    def run_cpp():
        warm_up_gpu()
        if not args.cpp:
            return dict(device="not run", results=[])
        with tempfile.NamedTemporaryFile(suffix=".json") as f:
            subprocess.run([args.cpp, "--reps", str(args.reps), "--json", f.name], check=True, stdout=subprocess.DEVNULL)
            return json.load(open(f.name))

    # the C++ reference before and after the Python rows: its spread is the noise floor
    cpp = run_cpp()
    reference = {(r["job"], tuple(r["shape"])): r["ms"] for r in cpp["results"]}

    print(f"GPU: {cif.device_description()}; CuPy {cp.__version__}; median of {args.reps} calls, wall clock")
    header = f"{'job':22s} {'shape (z,y,x)':>15s} {'C++ core':>10s} {'Python':>10s} {'overhead':>10s} {'CuPy':>10s}  CuPy op"
    print(header)
    rows = []
    warm_up_gpu()
    for name, shape, ours, peer, peer_name in jobs():
        py = wall_ms(cp, ours, args.reps)
        report = cif.last_execution_report()
        assert report.device == "GPU", report.message
        cpp_ms = reference.get((name, tuple(shape)), float("nan"))
        peer_ms = wall_ms(cp, peer, args.reps) if peer is not None else float("nan")
        overhead_us = (py - cpp_ms) * 1e3
        raw = RAW.get((name, tuple(shape)))
        raw_ms = wall_ms(cp, raw, args.reps) if raw is not None else float("nan")
        raw_device_ms = device_ms(raw, args.reps) if raw is not None else float("nan")
        layer_us = paired_overhead_us(ours, raw, args.reps) if raw is not None else float("nan")
        rows.append(
            dict(job=name, shape=list(shape), cpp_ms=cpp_ms, python_ms=py, overhead_us=overhead_us, cupy_ms=peer_ms,
                 cupy_op=peer_name, extension_call_ms=raw_ms, extension_call_device_ms=raw_device_ms,
                 python_layer_us=layer_us)
        )
        shape_text = "x".join(str(n) for n in shape)
        peer_text = f"{peer_ms:10.4f}" if peer is not None else f"{'':>10s}"
        raw_text = (
            f"  (extension call alone {raw_ms:.4f} ms, GPU {raw_device_ms:.4f} ms; Python layer {layer_us:.1f} us paired)"
            if raw is not None
            else ""
        )
        print(f"{name:22s} {shape_text:>15s} {cpp_ms:10.4f} {py:10.4f} {overhead_us:8.1f}us {peer_text}  {peer_name}{raw_text}")
    after = run_cpp()
    again = {(r["job"], tuple(r["shape"])): r["ms"] for r in after["results"]}
    for r in rows:
        second = again.get((r["job"], tuple(r["shape"])), float("nan"))
        r["cpp_ms_after"] = second
        r["overhead_us"] = (r["python_ms"] - min(r["cpp_ms"], second)) * 1e3
    print("C++ core again after the Python rows (ms): " + ", ".join(f"{r['cpp_ms_after']:.4f}" for r in rows))
    by_job = {}
    for r in rows:
        by_job.setdefault(r["job"], []).append(r["overhead_us"])
    print("overhead per call (small, large size) in microseconds, against the faster C++ run; the C++ spread;")
    print("and the Python layer alone (paired with the extension call, small, large):")
    spread = {}
    layer = {}
    for r in rows:
        spread.setdefault(r["job"], []).append(abs(r["cpp_ms"] - r["cpp_ms_after"]) * 1e3)
        layer.setdefault(r["job"], []).append(r["python_layer_us"])
    for job, values in by_job.items():
        print(f"  {job:22s} " + ", ".join(f"{v:6.1f}" for v in values) + "   C++ spread "
              + ", ".join(f"{v:6.1f}" for v in spread[job]) + "   Python layer " + ", ".join(f"{v:6.1f}" for v in layer[job]))
    if args.json:
        json.dump(dict(device=cif.device_description(), cpp_device=cpp["device"], rows=rows), open(args.json, "w"),
                  indent=1)


if __name__ == "__main__":
    main()
