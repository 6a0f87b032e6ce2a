"""The Spark engine against the default engine, end to end, in the same run.

    python benchmarks/spark_run.py --users 100000,1000000 --runs 2
    python benchmarks/spark_run.py --users 10000000 --runs 1 \\
        --tools spark --driver-memory 2g

Each run is a fresh `ndcg-duck eval RECS RELS -k 5,10,20 --format json` process (the Spark runs
add --engine spark --spark-master local[2] --spark-conf spark.driver.memory=...), so the Spark
figures include starting the JVM and the session. Runs are round-robin (run 1 of every tool,
then run 2, ...). While a run goes, its process tree is sampled every 0.2 s from /proc: the peak
resident memory of the CLI's own Python process (the driver's Python side), of the JVM (the Spark
driver; in local mode also the executor) and of the Python workers together (the sum over the
workers alive at one time). CPU seconds are those of the whole tree (sampled, so a
process that lives less than 0.2 s may be missed). Every tool's means must
agree with the default engine's to 1e-12. Prints a Markdown table with the 1-minute load average.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
PAGE = os.sysconf("SC_PAGE_SIZE")


def exe() -> str:
    found = Path(sys.executable).with_name("ndcg-duck")
    return str(found) if found.exists() else "ndcg-duck"


TICK = os.sysconf("SC_CLK_TCK")


def tree(root: int) -> dict:
    """{pid: (command line, rss bytes, cpu seconds)} for root and its descendants."""
    children, info = {}, {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        pid, ppid, rss = int(entry), int(fields[1]), int(fields[21]) * PAGE
        cpu = (int(fields[11]) + int(fields[12])) / TICK  # utime + stime
        children.setdefault(ppid, []).append(pid)
        info[pid] = (cmd, rss, cpu)
    found, todo = {}, [root]
    while todo:
        pid = todo.pop()
        if pid in info:
            found[pid] = info[pid]
        todo.extend(children.get(pid, []))
    return found


def run(cmd: list) -> dict:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    peaks = {"cli": 0, "jvm": 0, "workers": 0}
    cpu_seen = {}  # pid -> the last CPU seconds sampled (for processes that are not reaped)
    done = threading.Event()

    def sample():
        while not done.is_set():
            workers = 0
            for pid, (line, rss, cpu) in tree(proc.pid).items():
                cpu_seen[pid] = cpu
                if pid == proc.pid:
                    peaks["cli"] = max(peaks["cli"], rss)
                elif "java" in line.split(" ")[0]:
                    peaks["jvm"] = max(peaks["jvm"], rss)
                else:
                    workers += rss
            peaks["workers"] = max(peaks["workers"], workers)
            done.wait(0.2)

    thread = threading.Thread(target=sample, daemon=True)
    thread.start()
    out, err = proc.communicate()
    done.set()
    thread.join()
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{err}")
    # the tree's CPU: what the kernel reports for reaped children, or the processes' own last
    # samples when that is more (the JVM and the Python workers are not always reaped)
    cpu = max((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime),
              sum(cpu_seen.values()))
    return {"seconds": seconds, "cpu": cpu, "summary": json.loads(out), **peaks,
            "load": os.getloadavg()[0]}


def commands(tool: str, data: Path, args) -> list:
    cmd = [exe(), "eval", str(data / "recs.parquet"), str(data / "rels.parquet"),
           "-k", "5,10,20", "--format", "json"]
    if tool == "spark":
        cmd += ["--engine", "spark", "--spark-master", args.master,
                "--spark-conf", f"spark.driver.memory={args.driver_memory}"]
    return cmd


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data-dir", type=Path, default=HERE / "data",
                    help="where data sets live (default benchmarks/data)")
    ap.add_argument("--users", default="1000000")
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--tools", default="duckdb,spark")
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--driver-memory", default="2g")
    args = ap.parse_args(argv)
    tools = args.tools.split(",")
    mib = 2**20
    print("| users | engine | wall s (median) | CPU s | peak RSS: CLI / JVM / Python workers (MiB) "
          "| load (1 min) |")
    print("|---:|---|---:|---:|---|---:|")
    for users in (int(u) for u in args.users.split(",")):
        data = args.data_dir / f"u{users}_s42"
        if not (data / "meta.json").exists():
            raise SystemExit(f"{data}: generate it first (benchmarks/generate.py --users "
                             f"{users} --out {data})")
        results = {tool: [] for tool in tools}
        for _ in range(args.runs):
            for tool in tools:
                results[tool].append(run(commands(tool, data, args)))
        means = {tool: results[tool][0]["summary"] for tool in tools}
        first = means[tools[0]]
        for tool in tools:
            for name in ("ndcg@5", "ndcg@10", "ndcg@20"):
                assert abs(means[tool][name] - first[name]) <= 1e-12, (tool, name)
            assert means[tool]["users"] == first["users"]
        for tool in tools:
            runs = results[tool]
            print(f"| {users:,} | {tool} | {statistics.median(r['seconds'] for r in runs):.1f} "
                  f"| {statistics.median(r['cpu'] for r in runs):.1f} "
                  f"| {max(r['cli'] for r in runs) / mib:.0f} / {max(r['jvm'] for r in runs) / mib:.0f}"
                  f" / {max(r['workers'] for r in runs) / mib:.0f} "
                  f"| {', '.join(format(r['load'], '.1f') for r in runs)} |", flush=True)
        print(f"<!-- {users:,} users: ndcg@10 {first['ndcg@10']!r}, users {first['users']} -->",
              flush=True)


if __name__ == "__main__":
    main()
