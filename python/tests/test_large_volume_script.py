"""scripts/large-volume-check.py (the 2^31-voxel check run on the GPU machine)
on a small volume and on the CPU, so that CI keeps it working, and its GRBF
reference against outputs that must fail it."""
from __future__ import annotations

import importlib.util
import subprocess
import sys

import numpy as np
import pytest
from conftest import REPO, cli_path

SCRIPT = REPO / "scripts" / "large-volume-check.py"


def load_script():
    spec = importlib.util.spec_from_file_location("large_volume_check", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def tool():
    path = cli_path()
    if path is None:
        pytest.skip("the C++ command-line tool is not built (set CUDAIMAGEFILTERS_CLI)")
    return path


def test_every_case_passes_on_a_small_volume(tmp_path, tool):
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--tool", tool, "--size", "24x20x30", "--device", "cpu", "--work", str(tmp_path)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "all passed" in done.stdout
    # every subcommand that filters appears (grbf included)
    for case in ("median", "threshold", "bilateral", "rotating mask", "kernel superposition", "segment", "resample",
                 "grbf", "bspline-prefilter"):
        assert case in done.stdout, case


@pytest.mark.parametrize("dtype, met", [(np.float32, "MET_FLOAT"), (np.uint8, "MET_UCHAR")])
def test_grbf_reference_rejects_a_wrong_sigma(tmp_path, tool, dtype, met):
    """The reference is the exact interpolant at s = 1 pixel: the tool's own
    output passes within the documented bound, one at s = 1.05 does not."""
    lvc = load_script()
    volume = lvc.make_volume((30, 20, 24), dtype)
    source, out = tmp_path / "in.mha", tmp_path / "out.mha"
    lvc.write_mha(str(source), volume, met)
    zoom = (1.5, 1.0, 0.8)
    bound = 2e-6 * (255 if dtype == np.uint8 else 1)
    deviations = []
    for sigma in ("1", "1.05"):
        subprocess.run([tool, "grbf", str(source), str(out), "--zoom", "1.5,1,0.8", "--sigma", sigma, "--device", "cpu",
                        "--quiet"], check=True, capture_output=True)
        deviations.append(lvc.grbf_check(volume, str(out), zoom))
    assert deviations[0] <= bound
    assert deviations[1] > 100 * bound
