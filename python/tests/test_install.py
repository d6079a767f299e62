"""The installed package finds cuBLAS and cuSOLVER by itself.

A source install (pip install .) must import where the CUDA toolkit is not
registered with the loader (NVIDIA's runfile install adds no ld.so.conf
entry): the installed core library records the toolkit's library directory
it was built against in its run path.
"""

import pathlib
import shutil
import subprocess

import pytest

import cudaimagefilters as cif


def run_path(library: pathlib.Path) -> list:
    readelf = shutil.which("readelf")
    if readelf is None:
        pytest.skip("readelf is not installed")
    dynamic = subprocess.run([readelf, "-d", str(library)], check=True, capture_output=True, text=True).stdout
    for line in dynamic.splitlines():
        if "(RUNPATH)" in line or "(RPATH)" in line:
            return line.split("[", 1)[1].rstrip("]").split(":")
    return []


def test_core_library_records_the_toolkit():
    if not cif.is_compiled_with_cuda():
        pytest.skip("a build without CUDA links no CUDA library")
    package = pathlib.Path(cif.__file__).parent
    core = next(package.glob("libCudaImageFiltersCore.so*"))
    toolkit = [p for p in run_path(core) if not p.startswith("$ORIGIN")]
    assert toolkit, "no directory of the CUDA toolkit in the run path"
    here = [p for p in toolkit if pathlib.Path(p).is_dir()]
    if not here:
        pytest.skip(f"the package was built on another machine: its toolkit directory {toolkit} is not here")
    assert any(list(pathlib.Path(p).glob("libcublas.so*")) for p in here), toolkit
