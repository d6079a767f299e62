"""What the Python peer benchmarks share (median_cupy.py, bin_shrink_cupy.py,
resample_cupy.py, segmentation_cupy.py, gaussian_rbf_peers.py): cuCIM's
optional import and the comparison of two results (each script times
its cuCIM rows as it times its CuPy rows); and the MetaImage files the
scripts of the CLI's paths write (whole_paths.py, demons_paths.py,
gradient_paths.py, register_path.py).

cuCIM (``pip install cucim-cu13``; offline on the GPU machine:
scripts/install-peers-offline.sh) is optional: when it cannot be imported,
``import_cucim`` prints one line saying so and returns None, and a script
skips its cuCIM rows only.
"""
import importlib

import numpy as np

_MET = {
    np.dtype(np.uint8): "MET_UCHAR",
    np.dtype(np.int16): "MET_SHORT",
    np.dtype(np.uint16): "MET_USHORT",
    np.dtype(np.float32): "MET_FLOAT",
    np.dtype(np.float64): "MET_DOUBLE",
}


def write_mha(path, array):
    """A MetaImage file with its data in the same file: a 3D array (z, y, x)
    of one of the five pixel types, spacing 1, uncompressed."""
    nz, ny, nx = array.shape
    header = (
        "ObjectType = Image\nNDims = 3\nBinaryData = True\nBinaryDataByteOrderMSB = False\n"
        f"CompressedData = False\nDimSize = {nx} {ny} {nz}\nElementSpacing = 1 1 1\n"
        f"ElementType = {_MET[array.dtype]}\nElementDataFile = LOCAL\n"
    ).encode()
    with open(path, "wb") as f:
        f.write(header)
        f.write(np.ascontiguousarray(array).tobytes())


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
