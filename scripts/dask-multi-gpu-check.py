#!/usr/bin/env python3
"""On a machine with several GPUs: python/examples/dask_large_volume.py's
pattern with one dask.distributed worker process per GPU, on a memory-mapped
volume that does not fit one GPU as capped, and the scaling from one GPU to
several.

    python3 scripts/dask-multi-gpu-check.py [--size 2048x2048x1024] [--cap 4G]
        [--gpus 1,2] [--threads 1,3] [--chunk 32] [--work /tmp/cif-multi-gpu]

Writes a float32 .mha of random values, then, for each number of GPUs and of
threads per GPU, filters it (median r = 1, chunks of --chunk z planes with
their one-plane halos, ``device="gpu"``) into an output .mha, each worker's
allocations capped at --cap (``set_device_memory_limit``): the one-piece
call, which needs the input and the output on the device, cannot run under
that cap. Prints the time, the voxel rate, the speed-up over one GPU, which
worker (GPU, PCI bus) ran how many chunks, and whether the output equals
the first run's; the first run is checked on planes at chunk borders and at
both ends against ``scipy.ndimage.median_filter`` (float64-free: a median
of float32 values is one of them, so equality is exact).
"""
import argparse
import importlib.util
import os
import time

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location(
    "dask_large_volume", os.path.join(here, "..", "python", "examples", "dask_large_volume.py")
)
ex = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ex)


def parse_bytes(text: str) -> int:
    units = {"K": 2**10, "M": 2**20, "G": 2**30}
    return int(float(text[:-1]) * units[text[-1].upper()]) if text[-1].upper() in units else int(text)


def whoami(device: str):
    """Run on each worker: its CUDA_VISIBLE_DEVICES, GPU and PCI bus, after a warm-up call."""
    import cudaimagefilters as cif

    cif.median_image_filter(np.zeros((8, 8, 8), np.float32), radius=1, device=device)
    bus = "?"
    try:
        import cupy

        p = cupy.cuda.runtime.getDeviceProperties(0)
        bus = f"{p['pciDomainID']:04x}:{p['pciBusID']:02x}:{p['pciDeviceID']:02x}"
    except Exception as e:  # noqa: BLE001 - cupy is only for the bus id
        bus = f"(no cupy: {e})"
    return os.environ.get("CUDA_VISIBLE_DEVICES"), cif.device_description(), bus


def counted(function):
    """`function`, counting its calls on each dask worker (``chunks_filtered``)."""

    def filter_and_count(block, **parameters):
        from distributed import get_worker

        try:
            worker = get_worker()
            worker.chunks_filtered = getattr(worker, "chunks_filtered", 0) + 1
        except ValueError:  # not on a worker: dask asking for the result's type
            pass
        return function(block, **parameters)

    filter_and_count.halo = function.halo
    return filter_and_count


def chunks_filtered(dask_worker) -> int:
    return getattr(dask_worker, "chunks_filtered", 0)


def equal_in_chunks(a, b, planes: int = 64) -> bool:
    return all(np.array_equal(a[z : z + planes], b[z : z + planes]) for z in range(0, a.shape[0], planes))


def main() -> None:
    import dask.array as da
    from scipy import ndimage

    import cudaimagefilters as cif

    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--size", default="2048x2048x1024")
    p.add_argument("--cap", default="4G", help="each worker's device allocation cap")
    p.add_argument("--gpus", default="1,2")
    p.add_argument("--threads", default="1,3", help="threads per GPU worker (each holds a chunk on the GPU)")
    p.add_argument("--chunk", type=int, default=32)
    p.add_argument("--work", default="/tmp/cif-multi-gpu")
    p.add_argument("--device", default="gpu", help="'cpu' only to try the script without a GPU")
    a = p.parse_args()
    nx, ny, nz = (int(v) for v in a.size.split("x"))
    cap = parse_bytes(a.cap)
    os.makedirs(a.work, exist_ok=True)
    shape = (nz, ny, nx)
    nbytes = nz * ny * nx * 4
    print(f"volume {nx}x{ny}x{nz} float32, {nbytes / 1e9:.1f} GB; one piece needs {2 * nbytes / 2**30:.1f} GiB "
          f"on one GPU (input + output), each worker is capped at {cap / 2**30:.1f} GiB")
    start = time.perf_counter()
    src = ex.create_metaimage(os.path.join(a.work, "in.mha"), shape, np.float32, {"ElementSpacing": "1 1 1"})
    rng = np.random.default_rng(12)
    for z in range(nz):
        src[z] = rng.random((ny, nx), dtype=np.float32)
    src.flush()
    del src
    print(f"wrote the input in {time.perf_counter() - start:.1f} s")
    lazy, fields = ex.open_metaimage(os.path.join(a.work, "in.mha"))

    first = None
    baseline = {}
    for threads in (int(t) for t in a.threads.split(",")):
        for gpus in (int(g) for g in a.gpus.split(",")):
            name = "out-first.mha" if first is None else "out.mha"
            target = ex.create_metaimage(os.path.join(a.work, name), shape, np.float32, fields)
            with ex.gpu_cluster(gpus, threads) as client:
                client.run(cif.set_device_memory_limit, cap)
                workers = client.run(whoami, a.device)
                y = ex.filter_lazily(lazy, counted(cif.median_image_filter), a.chunk, radius=1, device=a.device)
                start = time.perf_counter()
                da.store(y, target, lock=False)
                seconds = time.perf_counter() - start
                filtered = {workers[w][0]: n for w, n in client.run(chunks_filtered).items()}
            result, _ = ex.open_metaimage(os.path.join(a.work, name))
            if first is None:
                first = result
                same = "first run"
            else:
                same = "equal to the first run" if equal_in_chunks(result, first) else "DIFFERS from the first run"
            baseline.setdefault(threads, seconds)
            print(
                f"{gpus} GPU(s) x {threads} thread(s): {seconds:.2f} s, {nz * ny * nx / seconds / 1e9:.2f} Gvoxel/s, "
                f"speed-up {baseline[threads] / seconds:.2f}x over 1 GPU; {y.numblocks[0]} chunks; "
                f"chunks per GPU {dict(sorted(filtered.items()))}; {same}",
                flush=True,
            )
            for w, (visible, device, bus) in sorted(workers.items(), key=lambda kv: kv[1][0]):
                print(f"    CUDA_VISIBLE_DEVICES={visible}: {device}, PCI {bus}")

    bad = []
    for z in sorted({0, a.chunk - 1, a.chunk, 5 * a.chunk - 1, 5 * a.chunk, nz - 1} & set(range(nz))):
        z0 = max(z - 1, 0)
        reference = ndimage.median_filter(lazy[z0 : z + 2], size=3, mode="nearest")[z - z0]
        if not np.array_equal(reference, first[z]):
            bad.append(z)
    print("planes at chunk borders and both ends vs scipy.ndimage.median_filter:", "equal" if not bad else f"DIFFER at {bad}")


if __name__ == "__main__":
    main()
