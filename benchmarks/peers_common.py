"""What the Python peer benchmarks share (median_cupy.py, bin_shrink_cupy.py,
resample_cupy.py, segmentation_cupy.py, gaussian_rbf_peers.py): cuCIM's
optional import and the comparison of two results (each script times
its cuCIM rows as it times its CuPy rows).

cuCIM (``pip install cucim-cu13``; offline on the GPU machine:
scripts/install-peers-offline.sh) is optional: when it cannot be imported,
``import_cucim`` prints one line saying so and returns None, and a script
skips its cuCIM rows only.
"""
import importlib


def import_cucim(*submodules):
    """cucim.skimage's submodules by name (e.g. "filters", "transform") as a
    dict, plus "version"; None, after one printed line, when cuCIM is not
    importable."""
    try:
        import cucim

        found = {"version": cucim.__version__}
        for name in submodules:
            found[name] = importlib.import_module("cucim.skimage." + name)
        return found
    except Exception as e:  # ImportError, or a CUDA library it cannot load
        print(f"cuCIM is not importable ({type(e).__name__}: {e}); the cuCIM rows are skipped", flush=True)
        return None


def max_difference(cupy, a, b, mask=None):
    """Largest |a - b| (in float64), over `mask` where given; NaN for no voxel."""
    d = cupy.abs(a.astype(cupy.float64) - b.astype(cupy.float64))
    if mask is not None:
        d = d[mask]
    return float(d.max()) if d.size else float("nan")


def compared(cupy, a, b, mask=None, what="CuPy's"):
    """'equal to X' or 'max |difference| from X N' for a note column."""
    d = max_difference(cupy, a, b, mask)
    return f"equal to {what}" if d == 0 else f"max |difference| from {what} {d:.3g}"


def wall_ms(cupy, f, reps):
    """Median wall-clock ms of f() over `reps` calls after one warm-up, each
    call ending when the device is done (the default stream synchronized):
    the time a caller waits, host work included."""
    import statistics
    import time

    f()
    cupy.cuda.Stream.null.synchronize()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        f()
        cupy.cuda.Stream.null.synchronize()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)
