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


def test_one_worker_process_per_gpu_equals_the_whole(tmp_path):
    """The --gpus route: dask.distributed worker processes, one per GPU (two,
    or as many as there are up to two; in CI, without a GPU, two unpinned
    workers on the CPU), share the chunks, the memory maps travel as paths,
    and the stored result equals the one-piece call."""
    pytest.importorskip("dask.array")
    pytest.importorskip("distributed")
    import dask.array as da
    from distributed import get_task_stream

    ex = _example()
    rng = np.random.default_rng(4)
    volume = rng.integers(0, 4000, size=(40, 30, 20)).astype(np.uint16)
    source = ex.create_metaimage(str(tmp_path / "in.mha"), volume.shape, volume.dtype, {})
    source[...] = volume
    source.flush()
    lazy, header = ex.open_metaimage(str(tmp_path / "in.mha"))
    target = ex.create_metaimage(str(tmp_path / "out.mha"), lazy.shape, lazy.dtype, header)
    devices = ex.visible_gpus()
    workers = min(2, len(devices)) or 2
    with ex.gpu_cluster(workers) as client:
        pinned = sorted(client.run(lambda: os.environ.get("CUDA_VISIBLE_DEVICES")).values(), key=str)
        assert pinned == (sorted(devices[:workers]) if devices else [None] * workers)
        with get_task_stream(client) as tasks:
            da.store(ex.filter_lazily(lazy, cif.median_image_filter, chunk=5, radius=2), target, lock=False)
    assert len({t["worker"] for t in tasks.data}) == workers, "every worker should have run chunks"
    result, _ = ex.open_metaimage(str(tmp_path / "out.mha"))
    np.testing.assert_array_equal(result, cif.median_image_filter(volume, radius=2))


def test_mapped_volumes_pickle_as_a_path_not_the_data(tmp_path):
    # cloudpickle, as dask.distributed sends tasks (the example is loaded from
    # a path, so plain pickle could not find its class by name)
    pickle = pytest.importorskip("cloudpickle")
    ex = _example()
    m = ex.create_metaimage(str(tmp_path / "big.mha"), (64, 64, 64), np.float32, {})
    m[3] = 7.0
    assert len(pickle.dumps(m)) < 16384  # the class and a path; the voxels are 1 MiB
    copy = pickle.loads(pickle.dumps(m))
    assert copy[3, 0, 0] == 7.0 and copy.shape == (64, 64, 64)
    reader, _ = ex.open_metaimage(str(tmp_path / "big.mha"))
    with pytest.raises(ValueError, match="read-only"):
        reader[0] = 1.0


def test_more_gpu_workers_than_gpus_is_refused(monkeypatch):
    pytest.importorskip("distributed")
    ex = _example()
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0")
    assert ex.visible_gpus() == ["0"]
    with pytest.raises(ValueError, match="2 GPU workers asked for; 1 GPUs are visible"):
        ex.gpu_cluster(2)
