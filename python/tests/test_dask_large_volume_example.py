"""python/examples/dask_large_volume.py: a memory-mapped MetaImage filtered
chunk by chunk with dask equals the one-piece call (NumPy chunks; CI)."""
import importlib.util
import os

import numpy as np
import pytest

import cudaimagefilters as cif

_EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "examples", "dask_large_volume.py")


def _example():
    spec = importlib.util.spec_from_file_location("dask_large_volume", _EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_memory_mapped_volume_in_chunks_equals_the_whole(tmp_path):
    pytest.importorskip("dask.array")
    import dask.array as da

    ex = _example()
    rng = np.random.default_rng(3)
    volume = rng.integers(0, 4000, size=(45, 33, 28)).astype(np.uint16)
    fields = {"ElementSpacing": "0.5 0.5 2", "Offset": "1 2 3"}
    source = ex.create_metaimage(str(tmp_path / "in.mha"), volume.shape, volume.dtype, fields)
    source[...] = volume
    source.flush()
    lazy, header = ex.open_metaimage(str(tmp_path / "in.mha"))
    assert header["ElementSpacing"] == "0.5 0.5 2"
    target = ex.create_metaimage(str(tmp_path / "out.mha"), lazy.shape, lazy.dtype, header)
    y = ex.filter_lazily(lazy, cif.median_image_filter, chunk=7, radius=2)
    assert y.numblocks[0] == 7
    da.store(y, target, lock=False)
    target.flush()
    result, _ = ex.open_metaimage(str(tmp_path / "out.mha"))
    np.testing.assert_array_equal(result, cif.median_image_filter(volume, radius=2))


def test_truncated_or_compressed_files_are_refused(tmp_path):
    ex = _example()
    path = str(tmp_path / "in.mha")
    m = ex.create_metaimage(path, (4, 5, 6), np.float32, {})
    del m
    with open(path, "r+b") as f:
        f.truncate(os.path.getsize(path) - 10)
    with pytest.raises(ValueError, match="truncated"):
        ex.open_metaimage(path)
    with open(path, "wb") as f:
        f.write(b"ObjectType = Image\nNDims = 3\nCompressedData = True\nDimSize = 6 5 4\n"
                b"ElementType = MET_FLOAT\nElementDataFile = LOCAL\n")
    with pytest.raises(ValueError, match="uncompressed"):
        ex.open_metaimage(path)
