"""Scaling of ``fminspect eval`` on a Dask cluster against local ``--jobs``, on one machine.

    python benchmarks/bench_cluster.py [--images 200] [--methods 4] [--workers 1 2 4]

Writes a generated benchmark (``make_benchmark.py``, COD10K-sized images) to a temporary
folder, then, in the same run:

1. ``fminspect eval --jobs 1`` and ``--jobs 2`` (the local references);
2. for each N in ``--workers``: a Dask scheduler and ``fminspect worker --nworkers N`` started
   as separate processes on 127.0.0.1 (as the README's "On a cluster" says), then
   ``fminspect eval --scheduler`` with a fresh output folder (nothing cached);
3. the scheduler's overhead per task: :meth:`fminspect.batch.cluster.Cluster.run` over
   trivial tasks on 2 workers (what one unit costs beyond its own work), and the CPU time
   the client and the scheduler spend per pair and per image — what bounds the number of
   worker cores one client and one scheduler can keep busy.

It prints the work phase's pairs/s (as ``eval`` reports it: planning, discovery and outputs
excluded), each ratio to ``--jobs 1`` measured here, and checks that every cluster run's
``summary.json`` is byte-identical to ``--jobs 1``'s. Ratios, not absolute times, carry
over to other machines; more worker processes than cores only show the cost of
oversubscription.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
PY = sys.executable


def _eval(work: Path, out: str, *args: str) -> tuple[float, int, float]:
    """(work-phase seconds, pairs computed, the client's CPU seconds) of one
    ``fminspect eval`` run."""
    cmd = [PY, "-m", "fminspect", "eval", "data", "--out", out, "--no-plots", "--quiet", *args]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(cmd, cwd=work, capture_output=True, text=True, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{done.stderr}")
    m = re.search(r"(\d+) computed in ([\d.]+) s", done.stderr)
    if m is None:
        raise SystemExit(f"no timing in:\n{done.stderr}")
    return float(m.group(2)), int(m.group(1)), cpu


class Scheduler:
    """A scheduler and ``fminspect worker --nworkers N``, each a process group of its own."""

    def __init__(self, folder: Path, nworkers: int) -> None:
        folder.mkdir(parents=True)
        info = folder / "scheduler.json"
        self.procs = [
            subprocess.Popen(
                [PY, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port",
                 "0", "--no-dashboard", "--scheduler-file", str(info)],
                cwd=folder, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                start_new_session=True,
            )
        ]  # fmt: skip
        while not (info.exists() and info.stat().st_size):
            time.sleep(0.05)
        self.address = json.loads(info.read_text())["address"]
        self.procs.append(
            subprocess.Popen(
                [PY, "-m", "fminspect", "worker", self.address, "--nworkers", str(nworkers)],
                cwd=folder, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                start_new_session=True,
            )
        )  # fmt: skip
        from distributed import Client

        with Client(self.address, timeout=30) as client:
            client.wait_for_workers(nworkers, timeout=120)

    def scheduler_cpu(self) -> float:
        """CPU seconds the scheduler process has used (Linux; NaN elsewhere)."""
        try:
            fields = Path(f"/proc/{self.procs[0].pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            return float("nan")
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def close(self) -> None:
        for p in reversed(self.procs):
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGTERM)
                p.wait(30)


def _overhead(address: str, tasks: int) -> float:
    """Seconds per trivial task through :meth:`Cluster.run` (submit, run, gather, release)."""
    from fminspect.batch.cluster import connect

    with connect(address) as cluster:
        units = [()] * tasks
        start = time.perf_counter()
        n = sum(1 for _ in cluster.run(units, len))
        assert n == tasks
        return (time.perf_counter() - start) / tasks


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--images", type=int, default=200)
    ap.add_argument("--methods", type=int, default=4)
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4])
    ap.add_argument("--tasks", type=int, default=2000, help="trivial tasks for the overhead")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="fminspect-cluster-"))
    subprocess.run(
        [PY, str(HERE / "make_benchmark.py"), str(work / "data"), "--images",
         str(args.images), "--methods", str(args.methods), "--jobs", "2"],
        check=True, capture_output=True,
    )  # fmt: skip
    cores = os.cpu_count() or 1
    print(f"{args.images} images × {args.methods} methods (≈ 400×550), {cores} cores")
    rows = []
    for jobs in (1, 2):
        sec, pairs, cpu = _eval(work, f"jobs{jobs}", "--jobs", str(jobs))
        rows.append((f"--jobs {jobs}", sec, pairs, cpu, float("nan")))
    reference = (work / "jobs1" / "summary.json").read_bytes()
    overhead = float("nan")
    for n in args.workers:
        sched = Scheduler(work / f"cluster{n}", n)
        try:
            start_cpu = sched.scheduler_cpu()
            sec, pairs, cpu = _eval(work, f"dask{n}", "--scheduler", sched.address)
            sched_cpu = sched.scheduler_cpu() - start_cpu
            if n == 2:
                overhead = _overhead(sched.address, args.tasks)
        finally:
            sched.close()
        same = (work / f"dask{n}" / "summary.json").read_bytes() == reference
        if not same:
            raise SystemExit(f"the cluster run with {n} workers differs from --jobs 1")
        name = f"Dask, {n} worker process{'es' if n > 1 else ''}"
        rows.append((name, sec, pairs, cpu, sched_cpu))
    base = rows[0][2] / rows[0][1]
    print(
        f"{'run':<28}{'seconds':>9}{'pairs/s':>9}{'× jobs 1':>10}"
        f"{'client CPU ms/pair':>20}{'scheduler CPU ms/image':>24}"
    )
    for name, sec, pairs, cpu, sched_cpu in rows:
        rate = pairs / sec
        print(
            f"{name:<28}{sec:9.2f}{rate:9.1f}{rate / base:10.2f}{1e3 * cpu / pairs:20.2f}"
            f"{1e3 * sched_cpu / (pairs / args.methods):24.2f}"
        )
    print("(client CPU includes its start-up, discovery, hashing and outputs)")
    print("every cluster run's summary.json is byte-identical to --jobs 1's")
    unit_ms = 1e3 * rows[0][1] / (rows[0][2] / args.methods)
    print(
        f"scheduler overhead: {overhead * 1e3:.2f} ms per task (2 workers, {args.tasks} trivial "
        f"tasks); one unit (an image with its {args.methods} methods) takes {unit_ms:.0f} ms "
        "of work on one core"
    )


if __name__ == "__main__":
    main()
