#!/usr/bin/env python3
"""Filter a volume larger than memory, chunk by chunk, with dask, on one or
several GPUs.

The pattern: read the volume lazily (a memory map of an uncompressed
MetaImage; a Zarr store works the same way through ``da.from_zarr``), let
``dask.array.map_overlap`` hand each chunk with the filter's halo
(``function.halo(...)``) to the module's function, and store the result
chunk by chunk into a memory-mapped output. Only a few chunks are in memory
at a time. With ``--gpu`` each chunk is moved to the GPU as a CuPy array, so
the filter runs there and the chunks stay on the device until stored.

With ``--gpus N`` a dask.distributed cluster of N worker processes runs the
chunks, one worker per GPU (``CUDA_VISIBLE_DEVICES`` pins each), as
dask-cuda's ``LocalCUDACluster`` does; each worker uploads its NumPy chunks
to its own GPU. The memory maps travel to the workers as a path and an
offset, never as data.

    python dask_large_volume.py IN.mha OUT.mha --radius 1 [--chunk 64] [--gpu | --gpus N]

The result equals the one-piece call, voxel for voxel (python/tests checks
that on a small file, with the threaded scheduler and with two worker
processes). The files must be uncompressed MetaImage (.mha with
``ElementDataFile = LOCAL``), 3D, of a pixel type the filters take.
"""
from __future__ import annotations

import argparse
import time
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

_TYPES = {
    "MET_UCHAR": np.uint8,
    "MET_SHORT": np.int16,
    "MET_USHORT": np.uint16,
    "MET_FLOAT": np.float32,
}


class MappedVolume:
    """The voxels of an uncompressed MetaImage as an array-like that dask can
    chunk: ``shape``, ``dtype``, ``ndim``, slicing (read and, if writable,
    write) and ``np.asarray``.

    The file is memory-mapped on first use in each process. Pickling keeps
    the path, offset, shape and type only, so dask.distributed sends workers
    a few bytes, not the volume (a plain ``np.memmap`` would be pickled as a
    copy of all its data)."""

    def __init__(self, path: str, offset: int, shape: Tuple[int, ...], dtype, writable: bool = False):
        self.path, self.offset, self.shape = path, int(offset), tuple(int(n) for n in shape)
        self.dtype, self.writable = np.dtype(dtype), writable
        self._map: Optional[np.memmap] = None

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def _mapped(self) -> np.memmap:
        if self._map is None:
            mode = "r+" if self.writable else "r"
            self._map = np.memmap(self.path, dtype=self.dtype, mode=mode, offset=self.offset, shape=self.shape)
        return self._map

    def __getitem__(self, key) -> np.ndarray:
        return np.asarray(self._mapped()[key])

    def __setitem__(self, key, value) -> None:
        if not self.writable:
            raise ValueError(f"{self.path} is open read-only")
        self._mapped()[key] = value

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        return np.asarray(self._mapped(), dtype=dtype)

    def flush(self) -> None:
        if self._map is not None and self.writable:
            self._map.flush()

    def __getstate__(self) -> Dict[str, Any]:
        state = dict(self.__dict__)
        state["_map"] = None
        return state


def open_metaimage(path: str) -> Tuple[MappedVolume, dict]:
    """The voxels (z, y, x) of an uncompressed .mha, mapped read-only, and its header fields."""
    fields, offset = {}, 0
    with open(path, "rb") as f:
        while True:
            line = f.readline()
            if not line:
                raise ValueError(f"{path}: no ElementDataFile line: not a MetaImage")
            offset += len(line)
            key, _, value = line.decode("ascii", "replace").partition("=")
            fields[key.strip()] = value.strip()
            if key.strip() == "ElementDataFile":
                break
    if fields.get("ElementDataFile") != "LOCAL" or fields.get("CompressedData", "False") != "False":
        raise ValueError(f"{path}: only uncompressed .mha files with LOCAL data can be memory-mapped")
    if fields.get("ElementType") not in _TYPES or fields.get("BinaryDataByteOrderMSB", "False") != "False":
        raise ValueError(f"{path}: pixel type {fields.get('ElementType')} is not one the filters take")
    size = [int(v) for v in fields["DimSize"].split()]
    shape = tuple(reversed(size))
    dtype = np.dtype(_TYPES[fields["ElementType"]])
    expected = offset + int(np.prod(shape)) * dtype.itemsize
    with open(path, "rb") as f:
        f.seek(0, 2)
        if f.tell() < expected:
            raise ValueError(f"{path} is truncated: {f.tell()} bytes, the header promises {expected}")
    return MappedVolume(path, offset, shape, dtype), fields


def create_metaimage(path: str, shape: Tuple[int, ...], dtype, like: dict) -> MappedVolume:
    """A new uncompressed .mha with `like`'s geometry, mapped writable."""
    dtype = np.dtype(dtype)
    met = {v: k for k, v in _TYPES.items()}[dtype.type]
    keep = ("Offset", "ElementSpacing", "TransformMatrix", "CenterOfRotation", "AnatomicalOrientation")
    header = "ObjectType = Image\nNDims = %d\n" % len(shape)
    header += "BinaryData = True\nBinaryDataByteOrderMSB = False\nCompressedData = False\n"
    header += "".join(f"{k} = {like[k]}\n" for k in keep if k in like)
    header += "DimSize = %s\nElementType = %s\nElementDataFile = LOCAL\n" % (
        " ".join(str(n) for n in reversed(shape)),
        met,
    )
    data = header.encode("ascii")
    with open(path, "wb") as f:
        f.write(data)
        f.truncate(len(data) + int(np.prod(shape)) * dtype.itemsize)
    return MappedVolume(path, len(data), shape, dtype, writable=True)


def filter_lazily(source, function, chunk: int = 64, gpu: bool = False, **parameters):
    """The dask array of `function` applied chunk-wise (chunks of `chunk`
    z planes, each with the halo `function.halo(...)`) to `source` (any
    array dask can read lazily: a memory map, a Zarr array)."""
    import dask.array as da

    x = da.from_array(source, chunks=(chunk,) + tuple(source.shape[1:]))
    if gpu:
        import cupy

        x = x.map_blocks(cupy.asarray, dtype=x.dtype)
    depth = function.halo(ndim=x.ndim, **parameters)
    y = x.map_overlap(function, depth=depth, boundary="none", dtype=x.dtype, **parameters)
    if gpu:
        y = y.map_blocks(cupy.asnumpy, dtype=y.dtype)
    return y


def visible_gpus() -> List[str]:
    """The GPUs a worker can be pinned to: the entries of
    ``CUDA_VISIBLE_DEVICES`` when it is set, else 0 .. N-1 for the N devices
    NVML reports (none when NVML, ``pynvml``, is not there)."""
    import os

    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None:
        return [d.strip() for d in visible.split(",") if d.strip()]
    try:
        import pynvml

        pynvml.nvmlInit()
        try:
            return [str(i) for i in range(pynvml.nvmlDeviceGetCount())]
        finally:
            pynvml.nvmlShutdown()
    except Exception:  # noqa: BLE001 - no NVML, no driver: no GPU to pin
        return []


def gpu_cluster(gpus: int, threads_per_gpu: int = 1, quiet: bool = True):
    """A dask.distributed client over a local cluster of `gpus` worker
    processes, each pinned to one GPU through ``CUDA_VISIBLE_DEVICES``
    (visible_gpus(); more workers than GPUs is an error), with
    `threads_per_gpu` threads.

    Each worker's filter calls then run on its own GPU (device 0 in that
    process). On a machine where no GPU is visible the workers are not
    pinned and the filters run on the CPU (``device="auto"``), which is how
    CI tests the pattern. The workers have no dask memory limit: what a
    memory-mapped volume occupies is the page cache, which the kernel
    reclaims. `quiet` keeps dask.distributed's INFO lines (workers starting
    and stopping) out of the output."""
    import logging

    from distributed import Client, Nanny, Scheduler, SpecCluster

    devices = visible_gpus()
    if gpus < 1 or (devices and gpus > len(devices)):
        raise ValueError(f"{gpus} GPU workers asked for; {len(devices)} GPUs are visible ({devices})")
    if quiet:
        for name in [n for n in logging.root.manager.loggerDict if n.startswith("distributed")] + ["distributed"]:
            logging.getLogger(name).setLevel(logging.WARNING)
    workers = {
        f"gpu{devices[i]}" if devices else f"worker{i}": {
            "cls": Nanny,
            "options": {
                "nthreads": threads_per_gpu,
                "memory_limit": 0,
                "silence_logs": logging.WARNING if quiet else logging.INFO,
                "env": {"CUDA_VISIBLE_DEVICES": devices[i]} if devices else {},
            },
        }
        for i in range(gpus)
    }
    scheduler = {"cls": Scheduler, "options": {"dashboard": False, "dashboard_address": ":0"}}
    return Client(SpecCluster(workers=workers, scheduler=scheduler, silence_logs=logging.WARNING if quiet else logging.INFO))


def main() -> None:
    import dask.array as da

    import cudaimagefilters as cif

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("input")
    parser.add_argument("output")
    parser.add_argument("--radius", type=int, default=1, help="median radius (default 1)")
    parser.add_argument("--chunk", type=int, default=64, help="z planes per chunk (default 64)")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--gpu", action="store_true", help="CuPy chunks: filter on the GPU")
    where.add_argument("--gpus", type=int, default=0, help="one dask worker process per GPU, N GPUs")
    a = parser.parse_args()
    if a.gpus and len(visible_gpus()) < a.gpus:
        parser.error(f"--gpus {a.gpus}: {len(visible_gpus())} GPUs are visible (CUDA_VISIBLE_DEVICES, or NVML)")
    source, fields = open_metaimage(a.input)
    target = create_metaimage(a.output, source.shape, source.dtype, fields)
    client = gpu_cluster(a.gpus) if a.gpus else None
    parameters = {"radius": a.radius, "device": "gpu"} if a.gpus else {"radius": a.radius}
    start = time.perf_counter()
    y = filter_lazily(source, cif.median_image_filter, a.chunk, a.gpu, **parameters)
    da.store(y, target, lock=False)
    target.flush()
    seconds = time.perf_counter() - start
    how = f"{a.gpus} GPU workers" if a.gpus else ("CuPy, GPU" if a.gpu else "NumPy")
    print(
        f"median r={a.radius}: {'x'.join(str(n) for n in reversed(source.shape))} {source.dtype} in "
        f"{y.numblocks[0]} chunks of {a.chunk} planes ({how}), {seconds:.1f} s"
    )
    if client is not None:
        client.close()


if __name__ == "__main__":
    main()
