"""Benchmark ndcg-duck against the scan floor and peer NDCG implementations.

    python benchmarks/run.py --users 10000,100000,1000000 --runs 3

For each size it generates the data if needed (benchmarks/generate.py, seed --seed), warms the
OS page cache by reading the files once, then runs every tool --runs times, round-robin (run 1
of every tool, then run 2 of every tool, ...), each run a fresh subprocess under
/usr/bin/time -v (wall seconds from the runner's clock, peak RSS from time's "Maximum resident
set size"). It checks that every tool's mean NDCG@10 agrees with ndcg-duck's CLI to 1e-9 and
writes benchmarks/results/u{U}.md (table) and u{U}.json (every run), and prints the tables.

Tools (--tools, comma separated; default all):
  cli          ndcg-duck eval RECS RELS -k 5,10,20 --format json      (subprocess)
  api          ndcg_duck.evaluate(..., k=[5,10,20], per_user=False)   (benchmarks/tools.py)
  scan         scan floor: DuckDB reads every needed column, trivial aggregates
  polars       hand-written polars NDCG@10
  duckdb_sql   hand-written DuckDB SQL NDCG@10 (unnest + generate_subscripts, (user, item) join,
               row_number() for the ideal list; no checks)
  pandas       hand-written pandas NDCG@10
  pytrec_eval  pytrec_eval ndcg_cut_10 (top 10 of each ranking, loading included)
  ranx         ranx ndcg@10 (top 10 of each ranking, loading included)
pandas, pytrec_eval and ranx are skipped above --peer-max-users (default 1,000,000).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import codever  # noqa: E402
import generate  # noqa: E402

RESULTS = Path(os.environ.get("NDCG_BENCH_RESULTS", HERE / "results"))
ALL_TOOLS = ["cli", "cli_unique", "api", "scan", "polars", "duckdb_sql", "pandas", "pytrec_eval",
             "ranx"]
# the metrics beside NDCG (issue 14), not in the default tools: every metric at the cutoffs, and
# with those that read each whole ranking (mrr and map without a cutoff, r_precision, num_rel_ret)
# (their baseline for the whole rankings: ndcg with a cutoff of 'all' too, which reads them all)
METRIC_TOOLS = {
    "cli_metrics": ["-m", "ndcg,dcg,idcg,cg,precision,recall,hit_rate,mrr@5,mrr@10,mrr@20,map@5,"
                          "map@10,map@20,num_rel"],
    "cli_metrics_whole": ["-m", "ndcg,dcg,idcg,cg,precision,recall,hit_rate,mrr,map,r_precision,"
                                "num_rel,num_rel_ret"],
    "cli_ndcg_whole": ["-k", "all"],
}
CLI_TOOLS = ("cli", "cli_unique", *METRIC_TOOLS)
SLOW_PEERS = {"pandas", "pytrec_eval", "ranx"}
TOLERANCE = 1e-9
TIME = "/usr/bin/time"


def ndcg_duck_exe() -> str:
    exe = Path(sys.executable).with_name("ndcg-duck")
    return str(exe) if exe.exists() else (shutil.which("ndcg-duck") or "ndcg-duck")


def cli_flags(exe: str) -> set:
    """The long options `ndcg-duck eval --help` lists (to pass --threads/--memory-limit only if
    the CLI has them)."""
    try:
        out = subprocess.run([exe, "eval", "--help"], capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.TimeoutExpired):
        return set()
    return set(re.findall(r"(--[a-z][a-z0-9-]*)", out))


def command(tool: str, recs: str, rels: str, args, flags: set, notes: list) -> list:
    if tool in CLI_TOOLS:
        cmd = [ndcg_duck_exe(), "eval", recs, rels, "-k", "5,10,20", "--format", "json"]
        if tool == "cli_unique":
            cmd.append("--unique-judgments")
        if tool in METRIC_TOOLS:
            cmd += METRIC_TOOLS[tool]
        for flag, value in (("--threads", args.threads), ("--memory-limit", args.memory_limit)):
            if value:
                if flag in flags:
                    cmd += [flag, str(value)]
                else:
                    note = f"ndcg-duck eval has no {flag}: not passed to the CLI"
                    if note not in notes:
                        notes.append(note)
        return cmd
    cmd = [sys.executable, str(HERE / "tools.py"), tool, recs, rels]
    if tool in ("api", "scan", "duckdb_sql"):
        if args.threads:
            cmd += ["--threads", str(args.threads)]
        if args.memory_limit:
            cmd += ["--memory-limit", str(args.memory_limit)]
    return cmd


def parse_result(tool: str, stdout: str) -> dict:
    line = [ln for ln in stdout.strip().splitlines() if ln.startswith("{")][-1]
    data = json.loads(line)
    if tool in CLI_TOOLS:
        return {"ndcg@10": data["ndcg@10"], "users": data["users"]}
    return data


def descendants(pid: int) -> list:
    """`pid` and every process below it (Linux /proc), deepest last."""
    found, todo = [], [pid]
    while todo:
        p = todo.pop()
        found.append(p)
        try:
            for task in Path(f"/proc/{p}/task").iterdir():
                todo += [int(c) for c in (task / "children").read_text().split()]
        except (OSError, ValueError):
            continue
    return found


def tree_rss_kb(pid: int) -> int:
    """Resident kB of process `pid` and its descendants (0 once they are gone)."""
    total = 0
    for p in descendants(pid):
        try:
            found = re.search(r"VmRSS:\s+(\d+)", Path(f"/proc/{p}/status").read_text())
        except OSError:
            continue
        total += int(found.group(1)) if found else 0
    return total


def run_once(cmd: list, timeout: float, env: dict | None = None,
             max_rss_mb: float | None = None) -> dict:
    """One fresh process under /usr/bin/time -v: wall, CPU s, peak RSS, load. With `max_rss_mb`,
    the process is killed when it and its children hold more than that (polled every 0.2 s), and
    the run is reported as out of memory."""
    use_time = os.path.exists(TIME)
    full = [TIME, "-v"] + cmd if use_time else cmd
    load = loadavg()
    start = time.perf_counter()
    # cwd: DuckDB spills to .tmp/ under the working directory; keep that in the ignored data dir
    work = HERE / "data" / "work"
    work.mkdir(parents=True, exist_ok=True)
    proc = subprocess.Popen(full, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=work, env=env)
    killed = None
    while max_rss_mb and proc.poll() is None and time.perf_counter() - start <= timeout:
        rss = tree_rss_kb(proc.pid) / 1024
        if rss > max_rss_mb:
            killed = rss
            for pid in descendants(proc.pid):
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            break
        time.sleep(0.2)
    try:
        out, err = proc.communicate(timeout=max(1.0, timeout - (time.perf_counter() - start)))
    except subprocess.TimeoutExpired:
        for pid in descendants(proc.pid):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        proc.communicate()
        return {"ok": False, "error": f"timeout after {timeout:.0f} s",
                "wall": time.perf_counter() - start}
    wall = time.perf_counter() - start
    if killed is not None:
        return {"ok": False, "error": f"out of memory: killed at {killed:.0f} MB resident "
                                      f"(cap {max_rss_mb:.0f} MB) after {wall:.0f} s",
                "wall": wall, "rss_mb": killed}
    proc = subprocess.CompletedProcess(full, proc.returncode, out, err)
    rss_kb = None
    stderr = proc.stderr
    if use_time:
        m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", stderr)
        rss_kb = int(m.group(1)) if m else None
        cpu = [re.search(rf"{what} time \(seconds\): ([0-9.]+)", stderr) for what in ("User", "System")]
        cpu_s = sum(float(c.group(1)) for c in cpu if c) if all(cpu) else None
        stderr = stderr[:stderr.rfind("\tCommand being timed")] if "\tCommand being timed" in stderr else stderr
    else:  # fallback: this runner's children maxrss only grows, so it is an upper bound
        import resource
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        rss_kb, cpu_s = usage.ru_maxrss, None
    res = {"ok": proc.returncode == 0, "wall": wall, "rss_mb": rss_kb / 1024 if rss_kb else None,
           "cpu": cpu_s, "load_before": load, "load_after": loadavg()}
    if proc.returncode != 0:
        lines = [ln for ln in stderr.strip().splitlines()
                 if ln.strip() and not ln.startswith("Command exited with non-zero status")]
        res["error"] = (f"exit {proc.returncode}: " + " | ".join(lines[-3:]))[:500]
    else:
        res["stdout"] = proc.stdout.strip()[-5000:]  # the JSON summary of every metric is long
    return res


def round_robin(cases: dict, runs: int, timeout: float, env: dict | None = None) -> dict:
    """Each case (name: command) as `runs` fresh processes (run_once), round-robin: run 1 of every
    case, then run 2, ...; stops at a failed run. {name: [run_once's result, ...]}."""
    got: dict = {}
    for i in range(runs):
        for name, cmd in cases.items():
            res = run_once(cmd, timeout, env)
            if not res["ok"]:
                raise SystemExit(f"{name} failed on run {i + 1}: {res.get('error')}")
            print(f"run {i + 1}/{runs} {name}: {res['wall']:.2f} s", file=sys.stderr, flush=True)
            got.setdefault(name, []).append(res)
    return got


def median_of(got: dict, name: str, key: str) -> float:
    """The median of `key` (wall, cpu, rss_mb) over round_robin's runs of the case `name`."""
    return statistics.median(r[key] for r in got[name])


def medians_table(got: dict) -> str:
    """A Markdown table of round_robin's cases: median wall s, CPU s and peak RSS MB, and below
    it the 1-minute load around the runs."""
    rows = [f"| {name} | {median_of(got, name, 'wall'):.2f} | {median_of(got, name, 'cpu'):.2f} | "
            f"{median_of(got, name, 'rss_mb'):.0f} |" for name in got]
    loads = [r[k] for rs in got.values() for r in rs for k in ("load_before", "load_after")]
    return "\n".join(["| case | wall s | CPU s | peak RSS MB |", "|---|---:|---:|---:|", *rows,
                      f"\n1-minute load around the runs {min(loads):.1f}-{max(loads):.1f} on "
                      f"{os.cpu_count()} cores."])


def loadavg():
    """The 1-minute load average: other work on the machine shows up here."""
    try:
        return float(open("/proc/loadavg").read().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def warm(paths) -> None:
    for p in paths:
        with open(p, "rb") as f:
            while f.read(1 << 24):
                pass


def fmt(x, digits=2):
    if x is None:
        return "-"
    if isinstance(x, float) and abs(x) < 0.01 and x != 0:
        return f"{x:.3f}"
    return f"{x:.{digits}f}"


def bench_size(users: int, tools: list, args, flags: set) -> dict:
    data = args.data_dir.resolve() / f"u{users}_s{args.seed}" if args.data_dir else generate.default_dir(users, args.seed)
    generate.generate(users, args.seed, data)
    recs, rels = str(data / "recs.parquet"), str(data / "rels.parquet")
    meta = json.loads((data / "meta.json").read_text())
    notes: list = []
    active = []
    for t in tools:
        if t in SLOW_PEERS and users > args.peer_max_users:
            notes.append(f"{t} skipped: above --peer-max-users {args.peer_max_users:,}")
        else:
            active.append(t)
    warm([recs, rels])
    runs = {t: [] for t in active}
    for i in range(args.runs):
        for t in active:
            cmd = command(t, recs, rels, args, flags, notes)
            res = run_once(cmd, args.timeout)
            if res["ok"]:
                try:
                    res.update(parse_result(t, res.pop("stdout")))
                except (ValueError, IndexError, KeyError) as exc:
                    res.update(ok=False, error=f"cannot parse output: {exc}")
            runs[t].append(res)
            partial = RESULTS / f"u{users}.partial.json"  # survives if this runner is killed
            partial.write_text(json.dumps({"users": users, "raw": runs, "notes": notes}, indent=1))
            status = (f"{res['wall']:.2f} s, {fmt(res.get('rss_mb'), 0)} MB" if res["ok"]
                      else f"FAILED: {res.get('error')}")
            print(f"[{users:,} users] run {i + 1}/{args.runs} {t}: {status}", file=sys.stderr, flush=True)
            if not res["ok"]:  # keep going: the median is taken over the runs that finished
                notes.append(f"{t} failed on run {i + 1}: {res.get('error')}")

    rows = {}
    for t in active:
        ok = [r for r in runs[t] if r["ok"]]
        if not ok:
            rows[t] = None
            continue
        if len(ok) < len(runs[t]):
            notes.append(f"{t}: median over the {len(ok)} of {len(runs[t])} runs that finished")
        values = {r.get("ndcg@10") for r in ok}
        rows[t] = {"wall": statistics.median(r["wall"] for r in ok),
                   "wall_min": min(r["wall"] for r in ok), "wall_max": max(r["wall"] for r in ok),
                   "rss_mb": max((r["rss_mb"] or 0) for r in ok), "ndcg@10": ok[0].get("ndcg@10"),
                   "cpu": statistics.median(r["cpu"] for r in ok) if all(r.get("cpu") is not None for r in ok) else None,
                   "users": ok[0].get("users"), "runs": len(ok), "stable": len(values) == 1}
    # Agreement: every NDCG@10 against the CLI's (or the first tool that has one).
    ref_tool = next((t for t in ["cli", "api", "polars"] + active if rows.get(t) and rows[t]["ndcg@10"] is not None), None)
    agree = True
    if ref_tool:
        ref = rows[ref_tool]["ndcg@10"]
        for t, row in rows.items():
            if row and row["ndcg@10"] is not None:
                row["diff"] = row["ndcg@10"] - ref
                if abs(row["diff"]) > TOLERANCE:
                    agree = False
                    notes.append(f"DISAGREEMENT: {t} ndcg@10 {row['ndcg@10']!r} vs {ref_tool} {ref!r}")
                if row["users"] != users:
                    notes.append(f"{t} averaged over {row['users']} users, not {users}")
    result = {"users": users, "seed": args.seed, "runs": args.runs, "data": meta, "code": args.code,
              "threads": args.threads, "memory_limit": args.memory_limit,
              "tools": rows, "raw": runs, "notes": notes, "agree": agree, "reference": ref_tool,
              "machine": machine()}
    return result


def table(result: dict) -> str:
    rows = result["tools"]
    floor = (rows.get("scan") or {}).get("wall")
    polars = (rows.get("polars") or {}).get("wall")
    d = result["data"]
    out = [f"### {result['users']:,} users ({result['users'] * 100:,} ranked entries, "
           f"{d.get('judged_rows', 0):,} judged rows)", "",
           f"ndcg-duck: {result.get('code', '?')}. Median of {result['runs']} runs, round-robin; "
           f"wall = whole process (start-up, Parquet reading, computing, exit); CPU = user + "
           f"system seconds of the process.", "",
           "| tool | median wall s | min-max s | x scan floor | x polars | CPU s | peak RSS MB | mean ndcg@10 |",
           "|---|---:|---:|---:|---:|---:|---:|---|"]
    for t, row in rows.items():
        if row is None:
            out.append(f"| {label(t)} | failed | | | | | | |")
            continue
        ratio = fmt(row["wall"] / floor) if floor else "-"
        rpol = fmt(row["wall"] / polars) if polars else "-"
        nd = "-" if row["ndcg@10"] is None else f"{row['ndcg@10']:.12f}"
        out.append(f"| {label(t)} | {row['wall']:.2f} | {row['wall_min']:.2f}-{row['wall_max']:.2f} | "
                   f"{ratio} | {rpol} | {fmt(row.get('cpu'), 1)} | {row['rss_mb']:.0f} | {nd} |")
    out.append("")
    ref = result.get("reference")
    if ref:
        diffs = [abs(r["diff"]) for r in rows.values() if r and "diff" in r]
        out.append(f"NDCG@10 agreement: {'all within 1e-9' if result['agree'] else 'NOT within 1e-9'} "
                   f"of {label(ref)} (largest difference {max(diffs):.1e}).")
    loads = [r.get(k) for rs in result["raw"].values() for r in rs for k in ("load_before", "load_after")]
    loads = [x for x in loads if x is not None]
    if loads:
        out.append(f"1-minute load average around the runs: {min(loads):.1f}-{max(loads):.1f} "
                   f"(the machine has {os.cpu_count()} cores; a load above that means other work competed for them).")
    for n in result["notes"]:
        out.append(f"- {n}")
    return "\n".join(out) + "\n"


LABELS = {"cli": "ndcg-duck CLI (k=5,10,20)",
          "cli_unique": "ndcg-duck CLI --unique-judgments (k=5,10,20)", "api": "ndcg-duck Python API (k=5,10,20)",
          "scan": "scan floor (DuckDB)", "polars": "polars (hand-written, k=10)",
          "duckdb_sql": "DuckDB SQL (hand-written, k=10, no checks)",
          "pandas": "pandas (hand-written, k=10)", "pytrec_eval": "pytrec_eval ndcg_cut_10",
          "ranx": "ranx ndcg@10",
          "cli_metrics": "ndcg-duck CLI, every metric at k=5,10,20",
          "cli_metrics_whole": "ndcg-duck CLI, every metric, mrr/map/r_precision uncut",
          "cli_ndcg_whole": "ndcg-duck CLI (k=5,10,20,all)"}


def label(t):
    return LABELS.get(t, t)


def machine() -> dict:
    info = {"python": platform.python_version(), "platform": platform.platform(),
            "cores": os.cpu_count()}
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                info["cpu"] = line.split(":", 1)[1].strip()
                break
        for line in open("/proc/meminfo"):
            if line.startswith("MemTotal"):
                info["mem_gib"] = round(int(line.split()[1]) / 2**20, 1)
    except OSError:
        pass
    versions = {}
    for mod in ("duckdb", "polars", "pandas", "pyarrow", "numpy", "ranx", "pytrec_eval"):
        try:
            from importlib.metadata import version
            versions[mod] = version({"pytrec_eval": "pytrec_eval-terrier"}.get(mod, mod))
        except Exception:
            versions[mod] = None
    info["versions"] = versions
    return info


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--users", default="10000,100000,1000000",
                    help="comma-separated sizes (suffixes k and M allowed: 10k,1M)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--tools", default=",".join(ALL_TOOLS))
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--threads", help="DuckDB threads for ndcg-duck (CLI if it has --threads; API "
                                      "and scan floor through the connection config)")
    ap.add_argument("--memory-limit", help="DuckDB memory limit, passed like --threads")
    ap.add_argument("--peer-max-users", type=int, default=1_000_000,
                    help="skip pandas, pytrec_eval and ranx above this many users")
    ap.add_argument("--timeout", type=float, default=3600, help="seconds per run")
    ap.add_argument("--data-dir", type=Path, help="where data sets live (default benchmarks/data)")
    ap.add_argument("--rev", default="HEAD",
                    help="git revision of ndcg-duck to measure (unpacked to benchmarks/data/code/); "
                         "'worktree' for the live work tree")
    args = ap.parse_args(argv)
    tools = [t.strip() for t in args.tools.split(",") if t.strip()]
    bad = [t for t in tools if t not in ALL_TOOLS and t not in METRIC_TOOLS]
    if bad:
        ap.error(f"unknown tools {bad}; choose from {ALL_TOOLS}")
    sizes = [parse_size(s) for s in args.users.split(",") if s.strip()]
    args.code = codever.activate(args.rev)
    print(f"measuring ndcg-duck {args.code}", file=sys.stderr)
    flags = cli_flags(ndcg_duck_exe()) if any(t.startswith("cli") for t in tools) else set()
    RESULTS.mkdir(parents=True, exist_ok=True)
    ok = True
    tables = []
    for users in sizes:
        result = bench_size(users, tools, args, flags)
        md = table(result)
        suffix = "" if not (args.threads or args.memory_limit) else \
            f"_t{args.threads or ''}_m{args.memory_limit or ''}"
        (RESULTS / f"u{users}{suffix}.json").write_text(json.dumps(result, indent=1) + "\n")
        (RESULTS / f"u{users}{suffix}.md").write_text(md)
        print(md, flush=True)
        tables.append(md)
        ok = ok and result["agree"]
    m = machine()
    header = (f"Machine: {m.get('cpu', '?')}, {m.get('cores')} cores, {m.get('mem_gib')} GiB; "
              f"Python {m['python']}; " + ", ".join(f"{k} {v}" for k, v in m["versions"].items() if v)
              + f"\nndcg-duck: {args.code}\nCommand: {' '.join(['python', 'benchmarks/run.py'] + list(argv if argv is not None else sys.argv[1:]))}\n")
    (RESULTS / "summary.md").write_text(header + "\n" + "\n".join(tables))
    return 0 if ok else 1


def parse_size(text: str) -> int:
    text = text.strip().lower().replace("_", "")
    mult = {"k": 1_000, "m": 1_000_000}.get(text[-1:], 1)
    return int(float(text[:-1] if mult > 1 else text) * mult)


if __name__ == "__main__":
    sys.exit(main())
