"""The installed package finds cuBLAS and cuSOLVER by itself.

- A source install (pip install .) must import where the CUDA toolkit is not
  registered with the loader (NVIDIA's runfile install adds no ld.so.conf
  entry): the installed core library records the toolkit's library directory
  it was built against in its run path.
- A wheel for others (scripts/build-wheel.sh cuda) records no path of the
  build machine: its run path names $ORIGIN and NVIDIA's PyPI wheels beside
  the package (site-packages/nvidia/cu<N>/lib), and
  cudaimagefilters/_libraries.py looks for those on sys.path otherwise.
"""

import pathlib
import shutil
import subprocess
import sys

import pytest

import cudaimagefilters as cif
from cudaimagefilters import _build_info, _libraries


def run_path(library: pathlib.Path) -> list:
    readelf = shutil.which("readelf")
    if readelf is None:
        pytest.skip("readelf is not installed")
    dynamic = subprocess.run([readelf, "-d", str(library)], check=True, capture_output=True, text=True).stdout
    for line in dynamic.splitlines():
        if "(RUNPATH)" in line or "(RPATH)" in line:
            return line.split("[", 1)[1].rstrip("]").split(":")
    return []


def core_library() -> pathlib.Path:
    package = pathlib.Path(cif.__file__).parent
    return next(package.glob("libCudaImageFiltersCore.so*"))


def test_core_library_records_the_toolkit():
    if not cif.is_compiled_with_cuda():
        pytest.skip("a build without CUDA links no CUDA library")
    if not _build_info.TOOLKIT_RPATH:
        pytest.skip("a wheel for others: test_wheel_run_path_names_only_the_wheels")
    toolkit = [p for p in run_path(core_library()) if not p.startswith("$ORIGIN")]
    assert toolkit, "no directory of the CUDA toolkit in the run path"
    here = [p for p in toolkit if pathlib.Path(p).is_dir()]
    if not here:
        pytest.skip(f"the package was built on another machine: its toolkit directory {toolkit} is not here")
    assert any(list(pathlib.Path(p).glob("libcublas.so*")) for p in here), toolkit


def test_wheel_run_path_names_only_the_wheels():
    if not cif.is_compiled_with_cuda():
        pytest.skip("a build without CUDA links no CUDA library")
    entries = run_path(core_library())
    assert "$ORIGIN" in entries
    assert f"$ORIGIN/../nvidia/cu{_build_info.CUDA_MAJOR}/lib" in entries, entries
    if not _build_info.TOOLKIT_RPATH:
        assert [p for p in entries if not p.startswith("$ORIGIN")] == [], entries


def test_build_info_matches_the_extension():
    assert bool(_build_info.CUDA_MAJOR) == cif.is_compiled_with_cuda()


def test_nvidia_wheel_folders_are_found_on_sys_path(tmp_path, monkeypatch):
    # the layout of NVIDIA's wheels (nvidia-cublas 13.x: nvidia/cu13/lib)
    (tmp_path / "site" / "nvidia" / "cu13" / "lib").mkdir(parents=True)
    (tmp_path / "site" / "nvidia" / "cu12" / "lib").mkdir(parents=True)
    (tmp_path / "other").mkdir()
    monkeypatch.setattr(sys, "path", [str(tmp_path / "other"), str(tmp_path / "site")])
    assert _libraries.nvidia_library_dirs("13") == [str(tmp_path / "site" / "nvidia" / "cu13" / "lib")]
    assert _libraries.nvidia_library_dirs("12") == [str(tmp_path / "site" / "nvidia" / "cu12" / "lib")]
    assert _libraries.nvidia_library_dirs("11") == []


def test_missing_cublas_says_what_to_install(monkeypatch):
    def missing(name):
        raise ImportError("libcublas.so.13: cannot open shared object file: No such file or directory")

    monkeypatch.setattr(_libraries.importlib, "import_module", missing)
    monkeypatch.setattr(sys, "path", [])
    with pytest.raises(ImportError) as raised:
        _libraries.load_extension()
    message = str(raised.value)
    assert "cuda-toolkit[cublas,cusolver]" in message
    assert "LD_LIBRARY_PATH" in message
    assert "libcublas.so.13" in message


def test_other_import_errors_pass_through(monkeypatch):
    def broken(name):
        raise ImportError("undefined symbol: _ZN3cif5Something")

    monkeypatch.setattr(_libraries.importlib, "import_module", broken)
    with pytest.raises(ImportError, match="undefined symbol"):
        _libraries.load_extension()
