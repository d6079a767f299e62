#!/usr/bin/env python3
"""Runs the benchmarks whose output the docs' tables are made from, on the GPU
machine, and keeps each one's raw output (issue 21: every figure in the docs
comes from a kept log).

For each benchmark it writes <OUT>/<name>-<device slug>.log: a header (the
device as nvidia-smi names it, the date in UTC, the git commit, the host),
then for each of its commands a "# command:" line, everything the command
printed (stdout and stderr, unchanged) and a "# exit:" line with the status
and the wall time. scripts/docs-tables.py reads these files (copied into
docs/results/) and writes the tables of README.md and docs/.

Usage, on the GPU machine, from the repository root, with a packed build
(../shared/tools/device-pack: .device/) and a cp312 wheel of the package in
.whl/ (plus .whl/peers/ for cuCIM, scripts/install-peers-offline.sh):

    CIF_COMMIT=<sha> python3 scripts/run-benchmarks.py [--out DIR] [--only a,b]
        [--skip a,b] [--args NAME='ARGS'] [--time-limit S] [--list] [--dry-run]

  --out DIR         where the logs go (default $OUT, else /tmp/benchmark-logs)
  --only a,b        these benchmarks only (also ONLY="a b" or ONLY=a,b); the
                    names are in --list; "all" adds the optional ones
  --args NAME=ARGS  replace the arguments of NAME's (first) command, e.g.
                    --args whole-image='--sizes 512 --reps 3' (sizes, reps);
                    also ARGS_<name with _ for ->='...' in the environment
  --time-limit S    start no benchmark (with its peers: X and X-peers go
                    together) that would, by its estimate, end after
                    S seconds (default 540); the ones left out are listed with
                    the ONLY= that runs them; a command still running 40 s
                    after the limit, or after 3 times its estimate (at least
                    120 s), is killed and its log says so
  --commit SHA      the commit (also CIF_COMMIT; else .device/commit, which
                    --stamp writes here at pack time; else git rev-parse)
  --stamp           (here, after ../shared/tools/device-pack, which empties
                    .device/) write .device/commit and exit
  --build DIR       without .device/run: the build tree to run (default build)

The default set is the rows the docs' tables show (read docs/*.md and
README.md): whole images, median, resampling, the prefilter, edge-preserving
filters, segmentation, GRBF (zooms, points), kernel superposition, the Python
layer's overhead, bin shrink; the CuPy/cuCIM peers of each in the same run.
Optional (--only): slab-benchmark (17 GB in host memory, about 3 minutes),
resample-1024, dask-two-gpu (two GPUs, dask installed). Estimates are from
the H200/H100 logs in docs/results and the docs' figures; the run writes the
real durations into each log and prints them at the end.
"""
import argparse
import datetime
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# name, [(kind, program, arguments)], estimated seconds on an H200, in the
# default set?, what it gives. kind "cpp": an executable of the build's bin/
# (through .device/run); "py": a script of the repository run with python3;
# "py-device": the same through .device/run (it starts a C++ executable).
BENCHMARKS = [
    ("whole-image", [("cpp", "WholeImageBenchmark", "--sizes 512,1024 --reps 3")], 60, True,
     "every ITK class, plain itk::Image against device-resident data, 512^3 and 1024^3 (docs/WholeImages.md)"),
    ("median", [("cpp", "MedianBenchmark", "--reps 10 --cpu-max-radius 1")], 120, True,
     "median 512x512x72 uint16 r=1,2,3,5,7 and 512^3 float32 r=1,2,3: GPU kernels, our CPU, ITK (slabs above r=1, scaled)"),
    ("median-data", [("cpp", "MedianBenchmark",
                      "--reps 5 --skip-itk --skip-cpu --skip-float --smooth --full-range --integer-float "
                      "--radii-u16 3,5,7")], 60, True,
     "the median's GPU kernels at 7^3, 11^3, 15^3 on 12-bit random, smooth and full-range 16-bit data and on float "
     "pixels holding the 12-bit integers (the data dependence of the sliding histogram and the radix select)"),
    ("grbf-block-rows", [("cpp", "GaussianRBFBenchmark",
                          f"CIF_GRBF_BLOCK_ROWS={k} --reps 20 --skip-cpu --skip-itk --only 512x512")
                         for k in (32, 64, 128, 256)], 120, False,
     "GRBF: the banded GEMMs' block height Kb (CIF_GRBF_BLOCK_ROWS 32, 64, 128, 256) on 512^2 x4 and the "
     "512x512x192 stacks (the tuning of GaussianRBF.md)"),
    ("median-peers", [("py", "benchmarks/median_cupy.py", "--reps 10")], 50, True,
     "CuPy median_filter and cuCIM filters.median, the same cases"),
    ("resample", [("cpp", "ResampleBenchmark", "--reps 10")], 25, True,
     "512^3 rotation (cubic, linear, nearest), 2D zooms to 2048^2, ITK's CPU filter"),
    ("resample-peers", [("py", "benchmarks/resample_cupy.py", "--reps 10")], 20, True,
     "CuPy affine_transform and cuCIM warp/rescale, the same cases"),
    ("prefilter", [("cpp", "BSplinePrefilterBenchmark", "--reps 100")], 35, True,
     "cubic prefilter 2048^2, 256^3, 512^3: GPU recursive/FIR, the ITK filter end to end, CPU, ITK"),
    ("prefilter-peers", [("py", "benchmarks/bspline_prefilter_cupy.py", "--reps 100")], 10, True,
     "CuPy spline_filter, the same sizes (cuCIM has no public spline prefilter)"),
    ("edge-preserving", [("cpp", "EdgePreservingBenchmark", "--reps 10")], 30, True,
     "bilateral r=1..3 (1/3/5 iterations), rotating mask; CPU and ITK on 16 slices, scaled"),
    ("segmentation", [("cpp", "SegmentationBenchmark", "--reps 20")], 60, True,
     "threshold, pack, download, unpack, apply, box mean and erosion r=1..3; CPU cores and ITK"),
    ("segmentation-peers", [("py", "benchmarks/segmentation_cupy.py", "--reps 20")], 25, True,
     "CuPy's nearest equivalents; cuCIM erosion and rank mean"),
    ("python-overhead", [("py-device", "benchmarks/python_overhead.py", "--cpp {build}/bin/CoreCallBenchmark --reps 100")],
     35, True, "the Python layer's cost per call against CoreCallBenchmark, with CuPy"),
    ("bin-shrink-cupy", [("py", "benchmarks/bin_shrink_cupy.py", "--sizes 512,1024 --reps 20")], 15, True,
     "bin shrink 512^3 and 1024^3 by 2 and 4: ours from Python, CuPy, cuCIM"),
    ("grbf", [("cpp", "GaussianRBFBenchmark", "--reps 50 --only 512x512"),
              ("cpp", "GaussianRBFBenchmark", "--reps 50 --only '60x60 zoom 2' --skip-cpu")], 60, True,
     "GRBF zooms: 512^2 x4 and the 512x512x192 stacks with CPU and ITK; 60x60 x2 without the CPU rows"),
    ("grbf-points", [("cpp", "GaussianRBFPointsBenchmark", "--reps 5")], 15, True,
     "GRBF at the points of a rotation: 512^2 (sigma 1, 1.6), 128^3, 256^3"),
    ("grbf-peers", [("py", "benchmarks/gaussian_rbf_peers.py",
                     "--reps 20 --scipy-max-voxels 300000 --rbf-max-outputs 30000")], 40, True,
     "GRBF from Python on CuPy and NumPy, cupyx/cuCIM/SciPy cubic zooms, SciPy's RBFInterpolator where short"),
    ("kernel-superposition", [("cpp", "KernelSuperpositionBenchmark", "--reps 10")], 70, True,
     "seed 004's protocol: 512^2 r_max 1..32, 256^3 r_max 1..8, scatter variants, exact gather, CPU"),
    ("slab-benchmark", [("cpp", "SlabBenchmark", "")], 180, False,
     "a 17.2 GB float32 volume: one piece against slabs under a 4 GiB cap (docs/LargeVolumes.md)"),
    ("resample-1024", [("cpp", "ResampleBenchmark", "--size3d 1024 --skip-itk --reps 10")], 40, False,
     "the 1024^3 rotation, GPU rows only"),
    ("dask-two-gpu", [("py", "scripts/dask-multi-gpu-check.py", "")], 150, False,
     "the dask scaling over two GPUs (needs two GPUs and dask)"),
]
NAMES = [b[0] for b in BENCHMARKS]


def die(message):
    print(f"run-benchmarks: {message}", file=sys.stderr)
    sys.exit(2)


def gpu_description():
    """(name, the full nvidia-smi line, number of GPUs); ('none', reason, 0) without nvidia-smi."""
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return "none", "no nvidia-smi", 0
    try:
        text = subprocess.run([smi, "--query-gpu=name,driver_version,memory.total", "--format=csv,noheader"],
                              capture_output=True, text=True, timeout=60).stdout.strip()
    except (OSError, subprocess.TimeoutExpired) as e:
        return "none", f"nvidia-smi failed: {e}", 0
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines:
        return "none", "nvidia-smi lists no GPU", 0
    return lines[0].split(",")[0].strip(), lines[0].strip(), len(lines)


def device_slug(name):
    """'NVIDIA H200' -> 'h200', 'NVIDIA H100 80GB HBM3' -> 'h100'."""
    m = re.search(r"\b([A-Z]{1,2}\d{2,4}[A-Za-z]?)\b", name)
    if m:
        return m.group(1).lower()
    slug = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")
    return slug or "unknown"


def git_commit():
    try:
        sha = subprocess.run(["git", "-C", REPO, "rev-parse", "HEAD"], capture_output=True, text=True,
                             timeout=30).stdout.strip()
        if not sha:
            return None
        dirty = subprocess.run(["git", "-C", REPO, "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=30).stdout.strip()
        return sha + (" (with uncommitted changes)" if dirty else "")
    except OSError:
        return None


def find_commit(given):
    if given:
        return given
    if os.environ.get("CIF_COMMIT"):
        return os.environ["CIF_COMMIT"]
    stamp = os.path.join(REPO, ".device", "commit")
    if os.path.exists(stamp):
        return open(stamp).read().strip() + " (from .device/commit)"
    return git_commit() or "unknown"


def selected(args):
    only = args.only if args.only is not None else os.environ.get("ONLY", "")
    names = [n for n in re.split(r"[,\s]+", only) if n]
    if not names:
        names = [b[0] for b in BENCHMARKS if b[3]]
    elif names == ["all"]:
        names = list(NAMES)
    unknown = [n for n in names if n not in NAMES]
    if unknown:
        die(f"unknown benchmark(s) {', '.join(unknown)}; --list shows them")
    skip = [n for n in re.split(r"[,\s]+", args.skip or "") if n]
    return [b for b in BENCHMARKS if b[0] in names and b[0] not in skip]


def replaced_arguments(args):
    out = {}
    for name in NAMES:
        value = os.environ.get("ARGS_" + name.replace("-", "_"))
        if value is not None:
            out[name] = value
    for item in args.args or []:
        name, _, value = item.partition("=")
        if name not in NAMES:
            die(f"--args {item!r}: no benchmark {name!r}")
        out[name] = value
    return out


class Runner:
    """How commands run here: through .device/run (the packed build) or from a local build tree."""

    def __init__(self, build_option):
        run = os.path.join(REPO, ".device", "run")
        if os.path.exists(run):
            subprocess.run([run, "true"], check=True)  # unpacks the build on the first call
            self.prefix = [run]
            self.build = open(os.path.join(REPO, ".device", "origin")).read().strip()
        else:
            self.prefix = []
            self.build = os.path.abspath(build_option)
        self.env = dict(os.environ)

    def argv(self, kind, program, arguments):
        words = shlex.split(arguments.replace("{build}", self.build).replace("{repo}", REPO))
        if kind == "cpp":
            # leading NAME=VALUE words: the program's environment (a tuning knob), through env(1)
            settings = []
            while words and re.fullmatch(r"[A-Z_][A-Z0-9_]*=\S*", words[0]):
                settings.append(words.pop(0))
            return self.prefix + (["env"] + settings if settings else []) + [os.path.join(self.build, "bin", program)] + words
        script = [sys.executable, os.path.join(REPO, program)] + words
        return (self.prefix if kind == "py-device" else []) + script

    def add_python_path(self, path):
        self.env["PYTHONPATH"] = path + (":" + self.env["PYTHONPATH"] if self.env.get("PYTHONPATH") else "")

    def importable(self, module):
        return subprocess.run([sys.executable, "-c", f"import {module}"], env=self.env,
                              capture_output=True).returncode == 0

    def prepare_python(self, log):
        """The package from .whl/*.whl and cuCIM from .whl/peers when they are not importable."""
        wheels = [os.path.join(REPO, ".whl", f) for f in sorted(os.listdir(os.path.join(REPO, ".whl")))
                  if f.endswith(".whl")] if os.path.isdir(os.path.join(REPO, ".whl")) else []
        if not self.importable("cudaimagefilters") and wheels:
            subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-index", "--no-deps", "--no-compile",
                            "--upgrade", "--target", "/tmp/site"] + wheels, check=False)
            self.add_python_path("/tmp/site")
        log(f"cudaimagefilters importable: {'yes' if self.importable('cudaimagefilters') else 'NO'}")
        peers = os.path.join(REPO, ".whl", "peers")
        if not self.importable("cucim.skimage") and os.path.isdir(peers):
            subprocess.run(["bash", os.path.join(REPO, "scripts", "install-peers-offline.sh"), "/tmp/peers-site"],
                           check=False)
            self.add_python_path("/tmp/peers-site")
        log(f"cuCIM importable: {'yes' if self.importable('cucim.skimage') else 'no (the cuCIM rows are skipped)'}")


def run_command(argv, log_file, env, timeout):
    """Runs argv with its stdout and stderr into log_file; (exit status or 'timeout', seconds)."""
    start = time.monotonic()
    log_file.flush()
    try:
        process = subprocess.Popen(argv, stdout=log_file, stderr=subprocess.STDOUT, env=env, cwd=REPO,
                                   start_new_session=True)
    except OSError as e:
        return f"could not start ({e})", time.monotonic() - start
    try:
        status = process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        status = f"killed after the {timeout:.0f} s timeout"
    return status, time.monotonic() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default=os.environ.get("OUT") or "/tmp/benchmark-logs")
    parser.add_argument("--only")
    parser.add_argument("--skip")
    parser.add_argument("--args", action="append", metavar="NAME=ARGS")
    parser.add_argument("--time-limit", type=float, default=540.0)
    parser.add_argument("--commit")
    parser.add_argument("--build", default=os.path.join(REPO, "build"))
    parser.add_argument("--list", action="store_true", help="the benchmarks, their commands and estimates")
    parser.add_argument("--dry-run", action="store_true", help="print what would run")
    parser.add_argument("--stamp", action="store_true", help="write .device/commit (here, after device-pack) and exit")
    args = parser.parse_args()

    if args.stamp:
        commit = git_commit()
        if commit is None:
            die("not a git checkout")
        os.makedirs(os.path.join(REPO, ".device"), exist_ok=True)
        with open(os.path.join(REPO, ".device", "commit"), "w") as f:
            f.write(commit + "\n")
        print(f"wrote .device/commit: {commit}")
        return 0

    chosen = selected(args)
    replaced = replaced_arguments(args)
    if args.list or args.dry_run:
        total = 0
        for name, commands, estimate, default, what in (BENCHMARKS if args.list else chosen):
            total += estimate if (default or not args.list) else 0
            print(f"{name:22s} ~{estimate:4d} s {'default ' if default else 'optional'}  {what}")
            for i, (kind, program, arguments) in enumerate(commands):
                arguments = replaced.get(name, arguments) if i == 0 else arguments
                print(f"{'':30s} {program} {arguments}")
        print(f"estimated total: ~{total} s" + (" (default set)" if args.list else ""))
        return 0

    started = time.monotonic()
    deadline = started + args.time_limit + 40  # a command still running then is killed
    name, smi_line, gpus = gpu_description()
    slug = device_slug(name) if gpus else "nogpu"
    commit = find_commit(args.commit)
    os.makedirs(args.out, exist_ok=True)
    print(f"run-benchmarks: device {smi_line}; slug {slug}; commit {commit}; logs in {args.out}", flush=True)
    runner = Runner(args.build)
    runner.prepare_python(lambda line: print("run-benchmarks: " + line, flush=True))

    summary, left_out = [], []
    chosen_names = [b[0] for b in chosen]
    estimates = {b[0]: b[2] for b in chosen}
    for bench, commands, estimate, _, what in chosen:
        # a benchmark and its peers ("X", "X-peers") run together or not at all
        needed = estimate + (estimates.get(bench + "-peers", 0) if bench + "-peers" in chosen_names else 0)
        if time.monotonic() - started + needed > args.time_limit or bench.removesuffix("-peers") in left_out:
            left_out.append(bench)
            summary.append((bench, "not run (time limit)", 0.0, ""))
            continue
        path = os.path.join(args.out, f"{bench}-{slug}.log")
        bench_start = time.monotonic()
        statuses = []
        with open(path, "w") as log:
            log.write(f"# benchmark: {bench} ({what})\n")
            log.write(f"# device: {name}\n# nvidia-smi: {smi_line}; {gpus} GPU(s)\n")
            log.write(f"# date: {datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%dT%H:%M:%SZ')}\n")
            log.write(f"# commit: {commit}\n")
            log.write(f"# host: {socket.gethostname()}; {os.cpu_count()} CPU threads\n")
            for i, (kind, program, arguments) in enumerate(commands):
                arguments = replaced.get(bench, arguments) if i == 0 else arguments
                argv = runner.argv(kind, program, arguments)
                log.write(f"# command: {shlex.join(argv)}\n")
                timeout = max(10.0, min(max(3.0 * estimate, 120.0), deadline - time.monotonic()))
                status, seconds = run_command(argv, log, runner.env, timeout)
                log.write(f"\n# exit: {status} after {seconds:.1f} s\n")
                statuses.append(str(status))
        seconds = time.monotonic() - bench_start
        summary.append((bench, "ok" if all(s == "0" for s in statuses) else "exit " + ", ".join(statuses),
                        seconds, path))
        print(f"run-benchmarks: {bench}: {summary[-1][1]} in {seconds:.0f} s (estimate {estimate} s) -> {path}",
              flush=True)

    print(f"\nrun-benchmarks: {time.monotonic() - started:.0f} s in all, device {name}, commit {commit}")
    for bench, status, seconds, path in summary:
        print(f"  {bench:22s} {status:24s} {seconds:7.1f} s  {os.path.basename(path)}")
    if left_out:
        print(f"left out by --time-limit {args.time_limit:.0f}: run them with ONLY={','.join(left_out)}")
    return 0 if all(s[1] == "ok" for s in summary) else 1


if __name__ == "__main__":
    sys.exit(main())
