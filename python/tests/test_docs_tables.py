"""scripts/docs-tables.py (issue 21: every figure in the docs comes from a kept
log): the repository's marked tables must equal what their logs in
docs/results give (CI), and the generator itself, on small logs and pages
written here, must notice a changed figure, a missing log and an unknown
table, label extrapolated times and figures from another device, and read
the benchmarks' fixed-width tables."""
from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
import textwrap

import pytest
from conftest import REPO

SCRIPT = REPO / "scripts" / "docs-tables.py"


def run(*args, root=None):
    command = [sys.executable, str(SCRIPT), *args] + (["--root", str(root)] if root else [])
    return subprocess.run(command, capture_output=True, text=True)


def load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_repository_tables_equal_their_logs():
    result = run("--check")
    assert result.returncode == 0, result.stdout + result.stderr


# A whole-image log as WholeImageBenchmark prints it (its own markdown table),
# with figures made up for the test.
WHOLE_IMAGE_LOG = textwrap.dedent("""\
    Whole images through the ITK classes, float32. Device: NVIDIA H200 (sm_90, 132 SMs, 139.801 GiB); D2D copy bandwidth 4182 GB/s

    | filter | size | resident ms | whole ms | transfers at pinned speed ms | floor ms | whole / floor | whole GB/s (in + out) | equal |
    |---|---|---|---|---|---|---|---|---|
    | median r=1 | 512^3 | 4.4 | 30.6 | 19.4 | 23.8 | 1.28 | 35.1 | yes |
    | mean r=1 | 1024^3 | 19.3 | 210.5 | 155.2 | 174.5 | 1.21 | 40.8 | no |
    """)


def make_tree(tmp_path, page_text, logs):
    (tmp_path / "docs" / "results").mkdir(parents=True)
    (tmp_path / "README.md").write_text(page_text)
    for name, text in logs.items():
        (tmp_path / "docs" / "results" / name).write_text(text)
    return tmp_path


MARKED = "Before.\n\n<!-- table: whole-image-h200 -->\n<!-- end table -->\n\nAfter.\n"


def test_write_fills_a_marked_table_from_its_log_and_check_then_passes(tmp_path):
    root = make_tree(tmp_path, MARKED, {"whole-image-h200.log": WHOLE_IMAGE_LOG})
    assert run("--check", root=root).returncode == 1  # the empty table differs from the log
    assert run("--write", root=root).returncode == 0
    page = (root / "README.md").read_text()
    # the spec's columns: filter, size, resident, whole, floor (a bound), whole / floor, equal
    assert "| median r=1 | 512^3 | 4.4 | 30.6 | 23.8 | 1.28 | yes |" in page
    assert "| mean r=1 | 1024^3 | 19.3 | 210.5 | 174.5 | 1.21 | no |" in page
    assert "floor ms (bound:" in page
    assert "from docs/results/whole-image-h200.log" in page  # the marker names the log
    assert page.startswith("Before.\n") and page.endswith("\nAfter.\n")  # the rest of the page is kept
    result = run("--check", root=root)
    assert result.returncode == 0, result.stdout + result.stderr


def test_check_fails_on_a_changed_figure(tmp_path):
    root = make_tree(tmp_path, MARKED, {"whole-image-h200.log": WHOLE_IMAGE_LOG})
    run("--write", root=root)
    readme = root / "README.md"
    readme.write_text(readme.read_text().replace("| 30.6 |", "| 29.9 |"))
    result = run("--check", root=root)
    assert result.returncode == 1
    assert "-| median r=1 | 512^3 | 4.4 | 29.9 |" in result.stdout  # the diff shows the page's figure ...
    assert "+| median r=1 | 512^3 | 4.4 | 30.6 |" in result.stdout  # ... and the log's


def test_check_fails_when_a_log_changes_under_its_table(tmp_path):
    root = make_tree(tmp_path, MARKED, {"whole-image-h200.log": WHOLE_IMAGE_LOG})
    run("--write", root=root)
    log = root / "docs" / "results" / "whole-image-h200.log"
    log.write_text(log.read_text().replace("| 4.4 |", "| 4.5 |"))
    assert run("--check", root=root).returncode == 1


def test_check_fails_on_a_missing_log_and_on_an_unknown_table(tmp_path):
    root = make_tree(tmp_path, MARKED, {})
    result = run("--check", root=root)
    assert result.returncode == 1
    assert "whole-image-h200.log does not exist" in result.stderr
    (root / "README.md").write_text("<!-- table: no-such-table -->\n<!-- end table -->\n")
    result = run("--check", root=root)
    assert result.returncode == 1
    assert "no spec named no-such-table" in result.stderr
    # --write does not make a missing log's table up either
    assert run("--write", root=root).returncode == 1


def test_check_fails_on_an_unclosed_marker(tmp_path):
    root = make_tree(tmp_path, "<!-- table: whole-image-h200 -->\n| a |\n", {"whole-image-h200.log": WHOLE_IMAGE_LOG})
    result = run("--check", root=root)
    assert result.returncode == 1
    assert "has no '<!-- end table -->'" in result.stderr


def test_pages_without_markers_pass(tmp_path):
    root = make_tree(tmp_path, "No tables here.\n", {})
    assert run("--check", root=root).returncode == 0


def print_table(rows):
    """Rows (case, method, ms, note) as MedianBenchmark prints them
    (benchmarks/BenchmarkCommon.h PrintTable with a Gvox/s column: case and
    method left-aligned, numbers right-aligned under their names)."""
    cw = max(4, *(len(r[0]) for r in rows))
    mw = max(6, *(len(r[1]) for r in rows))
    lines = [f"{'case':<{cw}} {'method':<{mw}} {'ms':>10} {'Gvox/s':>10} {'GB/s':>9} {'%copy':>7}  note"]
    for case, method, ms, note in rows:
        copy = "2.2%" if method.startswith("GPU") else "-"
        lines.append(f"{case:<{cw}} {method:<{mw}} {ms:10.3f} {1.5:10.3f} {3.25:9.2f} {copy:>7}"
                     + (f"  {note}" if note else ""))
    return "\n".join(lines) + "\n"


# made-up figures; the peers' log comes from another device
R1, R2 = "512x512x72 uint16, radius 1", "512x512x72 uint16, radius 2"
MEDIAN_LOG = ("# benchmark: median\n# device: NVIDIA H200\n# command: bin/MedianBenchmark\n\n"
              "Median filter. Device: NVIDIA H200 (sm_90, 132 SMs, 139.801 GiB); D2D copy bandwidth 4202 GB/s\n\n"
              + print_table([(R1, "GPU core, automatic (selection)", 0.404, "forgetful selection"),
                             (R1, "GPU core, selection", 0.405, ""),
                             (R1, "our CPU core, 16 threads", 595.123, "GPU output identical"),
                             (R1, "ITK MedianImageFilter, 16 threads", 678.456, ""),
                             (R2, "GPU core, automatic (radix/tile)", 2.76, "radix"),
                             (R2, "ITK MedianImageFilter, 16 threads", 5731.234, "slab of 8 slices, time scaled")])
              + "\n# exit: 0 after 1.0 s\n")
MEDIAN_PEERS_LOG = ("# benchmark: median-peers\n# device: NVIDIA H100 80GB HBM3\nCuPy 14.2.0 on NVIDIA H100 80GB HBM3\n"
                    + f"{'case':30s} {'method':22s} {'ms':>11s} {'Gvox/s':>8s} {'GB/s':>8s}  note\n"
                    + f"{R1:30s} {'CuPy median_filter':22s} {2.812:11.3f} {6.7:8.3f} {13.4:8.1f}  \n"
                    + f"{R2:30s} {'CuPy median_filter':22s} {32.2:11.3f} {0.59:8.3f} {1.2:8.1f}  \n")


def test_the_median_table_labels_extrapolations_and_other_devices(tmp_path):
    root = make_tree(tmp_path, "", {"median-h200.log": MEDIAN_LOG, "median-peers-h200.log": MEDIAN_PEERS_LOG})
    result = run("--print", "median-h200", root=root)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    row1 = next(line for line in lines if line.startswith("| 512x512x72 uint16, radius 1 |"))
    row2 = next(line for line in lines if line.startswith("| 512x512x72 uint16, radius 2 |"))
    cells1 = [c.strip() for c in row1.strip("|").split("|")]
    cells2 = [c.strip() for c in row2.strip("|").split("|")]
    # case, ours GPU (kernel), CuPy, our CPU, ITK (the cuCIM column is left out: no cuCIM rows)
    assert cells1 == ["512x512x72 uint16, radius 1", "0.404 (selection)", "2.81 (on H100)", "595", "678"]
    assert cells2[1] == "2.76 (radix/tile)"
    assert cells2[2] == "32.2 (on H100)"
    assert cells2[3] == "not in log"  # MEDIAN_LOG has no CPU row for radius 2
    assert cells2[4] == "~5731 (scaled from 8 slices)"
    assert "cuCIM" not in result.stdout


def test_fixed_width_rows_with_wide_values_and_continuation_lines():
    tables = load("docs_tables", SCRIPT)
    columns = [("case", "l", False), ("method", "l", False), ("ms", "r", False), ("note", "l", True)]
    header = "case".ljust(8) + "method".ljust(19) + "ms" + "  note"  # ms ends at column 29
    text = "\n".join([
        header,
        "a b".ljust(8) + "first 16 threads" + "1.5".rjust(29 - 8 - 16) + "  n1",
        "c".ljust(8) + "second" + "1234567.8".rjust(30 - 8 - 6) + "  wide value",  # one column too wide
        " " * 8 + "equal: yes",  # no case: continues the row above
        "",
        header,
        "d".ljust(8) + "third" + "2.0".rjust(29 - 8 - 5),
        "# exit: 0",
        "e".ljust(8) + "not a row" + "9.0".rjust(29 - 8 - 9),
    ])
    rows = tables.fixed_table(text, columns)
    assert [(r["case"], r["method"], r["ms"]) for r in rows] == [
        ("a b", "first 16 threads", "1.5"), ("c", "second", "1234567.8"), ("d", "third", "2.0")]
    assert rows[0]["note"] == "n1"
    assert rows[1]["note"] == "wide value"
    assert rows[1]["_after"] == ["equal: yes"]


def test_the_runner_names_devices_and_lists_its_benchmarks():
    runner = load("run_benchmarks", REPO / "scripts" / "run-benchmarks.py")
    assert runner.device_slug("NVIDIA H200") == "h200"
    assert runner.device_slug("NVIDIA H100 80GB HBM3") == "h100"
    result = subprocess.run([sys.executable, str(REPO / "scripts" / "run-benchmarks.py"), "--list"],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    # every log the runner writes by default has a table spec reading it
    tables = load("docs_tables", SCRIPT)
    read = {f for s in tables.all_specs().values() for f in s.files.values()}
    for name, _, _, default, _ in runner.BENCHMARKS:
        if default:
            assert f"{name}-h200.log" in read, name


@pytest.mark.parametrize("name", ["whole-image-h200", "bin-shrink-h200", "python-overhead-h200-issue21",
                                  "dask-one-gpu-h200", "dask-two-gpu-h200", "slab-benchmark-h200",
                                  "whole-image-h100"]
                         + [f"{base}-h100-2026-11-26" for base in (
                             "whole-image", "median", "resample", "resample-zoom", "prefilter", "edge-preserving",
                             "segmentation", "grbf", "grbf-points", "kernel-superposition", "bin-shrink",
                             "python-overhead")])
def test_the_kept_logs_give_their_tables(tmp_path, name):
    """Each existing log in docs/results gives a table; altering one of its
    figures in a copy makes --check fail."""
    shutil.copytree(REPO / "docs" / "results", tmp_path / "docs" / "results")
    (tmp_path / "README.md").write_text(f"<!-- table: {name} -->\n<!-- end table -->\n")
    assert run("--write", root=tmp_path).returncode == 0
    page = (tmp_path / "README.md").read_text()
    body = [line for line in page.splitlines() if line.startswith("| ") and not line.startswith("|---")]
    assert len(body) >= 3, page  # a header and at least two rows
    assert run("--check", root=tmp_path).returncode == 0
    row = body[1]
    figure = next(c for c in row.strip("|").split("|")[1:] if any(ch.isdigit() for ch in c))
    (tmp_path / "README.md").write_text(page.replace(row, row.replace(figure, figure.strip() + "0 ", 1)))
    assert run("--check", root=tmp_path).returncode == 1


def test_a_run_kept_in_its_folder_gives_captioned_tables(tmp_path):
    """The specs of a run kept in docs/results/<device>-<date>/ read the logs
    there and name device, date, commit and logs in a caption inside the
    markers; a figure from another device is still labelled."""
    run_dir = tmp_path / "docs" / "results" / "h100-2026-11-26"
    run_dir.mkdir(parents=True)
    header = "# device: NVIDIA H100 80GB HBM3\n# date: 2026-11-26T14:45:29Z\n# commit: f86af60dad73694bf3d6\n"
    (run_dir / "median-h100.log").write_text(header + MEDIAN_LOG)
    (run_dir / "median-peers-h100.log").write_text(MEDIAN_PEERS_LOG.replace("H100", "H200"))
    (tmp_path / "README.md").write_text("<!-- table: median-h100-2026-11-26 -->\n<!-- end table -->\n")
    assert run("--write", root=tmp_path).returncode == 0
    page = (tmp_path / "README.md").read_text()
    assert "from docs/results/h100-2026-11-26/median-h100.log, docs/results/h100-2026-11-26/median-peers-h100.log" in page
    assert ("*Run on NVIDIA H100 80GB HBM3 / NVIDIA H200 80GB HBM3, 2026-11-26 / not in log, "
            "commit f86af60 / not in log; "
            "logs: docs/results/h100-2026-11-26/median-h100.log") in page
    assert "| 512x512x72 uint16, radius 1 | 0.404 (selection) | 2.81 (on H200) | 595 | 678 |" in page
    assert run("--check", root=tmp_path).returncode == 0
    (run_dir / "median-h100.log").write_text(header.replace("f86af60", "0123456") + MEDIAN_LOG)
    assert run("--check", root=tmp_path).returncode == 1  # the caption follows the log's header


def test_the_grbf_python_table_says_what_was_not_run(tmp_path):
    """gaussian_rbf_peers.py prints nan for a peer it skipped: the cell says
    'not run' with the script's reason, and the RBFInterpolator's kind and
    largest differences come from the row's method and note."""
    header = f"{'case':18s} {'method':50s} {'ms':>8s}  note\n"

    def row(case, method, ms, note=""):
        return f"{case:18s} {method:50s} {ms:>8s}  {note}\n"

    log = ("# device: NVIDIA H100 80GB HBM3\n# date: 2026-11-26T14:55:35Z\n# commit: f86af60\n" + header
           + row("60x60 zoom 2", "cudaimagefilters GRBF exact, CuPy (GPU)", "0.278", "GPU: NVIDIA H100 80GB HBM3")
           + row("60x60 zoom 2", "cupyx.scipy.ndimage.zoom order 3 (GPU)", "0.244", "cubic, not GRBF")
           + row("60x60 zoom 2", "SciPy RBFInterpolator gaussian dense", "1915.935",
                 "max |ours CPU - it| 1.68e-05, GPU 6.67e-05")
           + row("60x60 zoom 4", "cudaimagefilters GRBF exact, CuPy (GPU)", "0.297")
           + row("60x60 zoom 4", "SciPy RBFInterpolator gaussian", "nan", "not run (--rbf-max-outputs)"))
    run_dir = tmp_path / "docs" / "results" / "h100-2026-11-26"
    run_dir.mkdir(parents=True)
    (run_dir / "grbf-peers-h100.log").write_text(log)
    result = run("--print", "grbf-python-h100-2026-11-26", root=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "| 60x60 zoom 2 | 0.278 | 0.244 |  |  | 1916 (dense) | 1.68e-05 (CPU), 6.67e-05 (GPU) |" in result.stdout
    assert "| 60x60 zoom 4 | 0.297 |  |  |  | not run (--rbf-max-outputs) |  |" in result.stdout
    assert "cuCIM" not in result.stdout  # no cuCIM rows: its column is left out
