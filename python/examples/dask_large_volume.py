#!/usr/bin/env python3
"""Filter a volume larger than memory, chunk by chunk, with dask.

The pattern: read the volume lazily (a NumPy memory map of an uncompressed
MetaImage; a Zarr store works the same way through ``da.from_zarr``), let
``dask.array.map_overlap`` hand each chunk with the filter's halo
(``function.halo(...)``) to the module's function, and store the result
chunk by chunk into a memory-mapped output. Only a few chunks are in memory
at a time. With ``--gpu`` each chunk is moved to the GPU as a CuPy array, so
the filter runs there and the chunks stay on the device until stored.

    python dask_large_volume.py IN.mha OUT.mha --radius 1 [--chunk 64] [--gpu]

The result equals the one-piece call, voxel for voxel (python/tests checks
that on a small file). The files must be uncompressed MetaImage (.mha with
``ElementDataFile = LOCAL``), 3D, of a pixel type the filters take.
"""
from __future__ import annotations

import argparse
import time
from typing import Tuple

import numpy as np

_TYPES = {
    "MET_UCHAR": np.uint8,
    "MET_SHORT": np.int16,
    "MET_USHORT": np.uint16,
    "MET_FLOAT": np.float32,
}


def open_metaimage(path: str) -> Tuple[np.memmap, dict]:
    """A read-only memory map (z, y, x) of an uncompressed .mha, and its header fields."""
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
    return np.memmap(path, dtype=dtype, mode="r", offset=offset, shape=shape), fields


def create_metaimage(path: str, shape: Tuple[int, ...], dtype, like: dict) -> np.memmap:
    """A writable memory map of a new uncompressed .mha with `like`'s geometry."""
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
    return np.memmap(path, dtype=dtype, mode="r+", offset=len(data), shape=shape)


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


def main() -> None:
    import dask.array as da

    import cudaimagefilters as cif

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("input")
    parser.add_argument("output")
    parser.add_argument("--radius", type=int, default=1, help="median radius (default 1)")
    parser.add_argument("--chunk", type=int, default=64, help="z planes per chunk (default 64)")
    parser.add_argument("--gpu", action="store_true", help="CuPy chunks: filter on the GPU")
    a = parser.parse_args()
    source, fields = open_metaimage(a.input)
    target = create_metaimage(a.output, source.shape, source.dtype, fields)
    start = time.perf_counter()
    y = filter_lazily(source, cif.median_image_filter, a.chunk, a.gpu, radius=a.radius)
    da.store(y, target, lock=False)
    target.flush()
    seconds = time.perf_counter() - start
    print(
        f"median r={a.radius}: {'x'.join(str(n) for n in reversed(source.shape))} {source.dtype} in "
        f"{y.numblocks[0]} chunks of {a.chunk} planes ({'CuPy, GPU' if a.gpu else 'NumPy'}), {seconds:.1f} s"
    )


if __name__ == "__main__":
    main()
