#!/usr/bin/env python3
"""On the GPU machine: python/examples/dask_large_volume.py with CuPy chunks
(and NumPy chunks) on a memory-mapped volume, against the one-piece call.

    python3 scripts/dask-gpu-check.py [--size 1024x1024x512] [--work /tmp/cif-dask]

Prints the time of each and whether the outputs equal the one-piece result.
"""
import argparse
import importlib.util
import os
import time

import numpy as np

import cudaimagefilters as cif

here = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("ex", os.path.join(here, "..", "python", "examples", "dask_large_volume.py"))
ex = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ex)

p = argparse.ArgumentParser()
p.add_argument("--size", default="1024x1024x512")
p.add_argument("--work", default="/tmp/cif-dask")
p.add_argument("--chunk", type=int, default=64)
a = p.parse_args()
nx, ny, nz = (int(v) for v in a.size.split("x"))
os.makedirs(a.work, exist_ok=True)
rng = np.random.default_rng(5)
src = ex.create_metaimage(os.path.join(a.work, "in.mha"), (nz, ny, nx), np.uint16, {})
for z in range(nz):
    src[z] = rng.integers(0, 60000, size=(ny, nx), dtype=np.uint16)
src.flush()
lazy, fields = ex.open_metaimage(os.path.join(a.work, "in.mha"))
start = time.perf_counter()
whole = cif.median_image_filter(np.asarray(lazy), radius=1)
print(f"one piece (NumPy in, GPU): {time.perf_counter() - start:.2f} s; {cif.last_execution_report()}")
import dask.array as da

for gpu in (False, True):
    out = ex.create_metaimage(os.path.join(a.work, "out.mha"), lazy.shape, lazy.dtype, fields)
    start = time.perf_counter()
    da.store(ex.filter_lazily(lazy, cif.median_image_filter, a.chunk, gpu, radius=1), out, lock=False)
    out.flush()
    seconds = time.perf_counter() - start
    same = np.array_equal(np.asarray(out), whole)
    print(f"dask, {'CuPy' if gpu else 'NumPy'} chunks of {a.chunk} planes: {seconds:.2f} s; equal to one piece: {same}")
    del out
