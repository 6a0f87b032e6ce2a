"""Whole-process timings of the input shapes (issue 20): `ndcg-duck eval` on the same users written
nested, long by rank, long by score and as a TREC run, for one or more checkouts of the code, and
each shape's hand-written peers, in one round-robin run.

    python benchmarks/generate.py --users 1000000 --seed 42
    flock /tmp/ndcg-bench.lock python benchmarks/long_inputs.py \\
        --data benchmarks/data/u1000000_s42 --shapes nested,rank,score --runs 3
    python benchmarks/generate.py --users 100000 --seed 42 --trec
    flock /tmp/ndcg-bench.lock python benchmarks/long_inputs.py \\
        --data benchmarks/data/u100000_s42 --shapes trec --trec-eval ~/trec_eval/trec_eval

DIR (--data) holds recs.parquet, recs_long.parquet and rels.parquet from benchmarks/generate.py;
this script adds recs_score.parquet (recs_long.parquet with score = (1000 - rank) / 1000, strictly
decreasing with the rank) and, for the trec shape, run.trec and qrels.trec (generate.write_trec:
the same rankings and judgments as TREC text) when they are missing.

Shapes (--shapes) and their peers (--peers; default every peer of the chosen shapes; each is
benchmarks/tools.py TOOL, see there):
  nested  `eval recs.parquet rels.parquet -k K`: scan, duckdb_sql, polars
  rank    `eval recs_long.parquet rels.parquet -k K --rank-col rank`: scan_long_rank,
          duckdb_long_rank, polars_long_rank
  score   `eval recs_score.parquet rels.parquet -k K --score-col score`: scan_long_score,
          duckdb_long_score, polars_long_score
  trec    `eval run.trec qrels.trec -k K`: trec_eval `-m ndcg_cut.K qrels.trec run.trec`, for each
          --trec-eval [NAME=]PATH given

trec_eval 10.0 is built outside this repository from its public repository:

    git clone https://github.com/usnistgov/trec_eval ~/trec_eval
    cd ~/trec_eval && git checkout v10.0 && make      # ./trec_eval -v: "10.0-rc3"

Its Makefile compiles with -g and no optimisation; that binary is what `make` gives a user. An
optimised one, for a second peer (`--trec-eval O3=$HOME/trec_eval_O3/trec_eval`), in a second
copy: `make CFLAGS='-O3 -I. -w -DVERSIONID=\\"10.0-rc3\\"'`.

Each --code NAME=PATH (default: this checkout) is a checkout whose ndcg_duck package is put first
on PYTHONPATH (checked before timing). Runs go round-robin (run 1 of every case, then run 2, ...),
each a fresh process under /usr/bin/time -v (benchmarks/run.py's run_once: wall clock, CPU, peak
RSS). The script checks that every ndcg-duck case reports the same means (1e-9), that every peer's
NDCG@10 mean equals ndcg-duck's (1e-9; the peers average over the judged users, scoring 0 those
without recommendations, as ndcg-duck's default --missing zero does), and that trec_eval's printed
means (4 decimals) are ndcg-duck's rounded; any failure stops it. It prints one markdown table
with the medians and two ratios: an ndcg-duck case against the same code's nested case
("x nested"), and the first --code's ndcg-duck on the peer's shape against the peer ("ndcg-duck /
peer": below 1 when ndcg-duck is faster). Wrap it in
`flock /tmp/ndcg-bench.lock` on a shared machine.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import generate  # noqa: E402
import run  # noqa: E402

MAIN = "import sys; from ndcg_duck.cli import main; sys.argv[0] = 'ndcg-duck'; main()"
TOLERANCE = 1e-9

# shape: (label, recs file, relevance file, eval flags, peers of benchmarks/tools.py)
SHAPES = {
    "nested": ("nested", "recs.parquet", "rels.parquet", [], ["scan", "duckdb_sql", "polars"]),
    "rank": ("long by rank", "recs_long.parquet", "rels.parquet", ["--rank-col", "rank"],
             ["scan_long_rank", "duckdb_long_rank", "polars_long_rank"]),
    "score": ("long by score", "recs_score.parquet", "rels.parquet", ["--score-col", "score"],
              ["scan_long_score", "duckdb_long_score", "polars_long_score"]),
    "trec": ("TREC run", "run.trec", "qrels.trec", [], []),
}


def write_scores(data: Path) -> None:
    import duckdb
    target = data / "recs_score.parquet"
    if target.exists():
        return
    duckdb.sql(f"COPY (SELECT user_id, item_id, rank, (1000 - rank) / 1000.0 AS score "
               f"FROM '{data / 'recs_long.parquet'}') TO '{target}' "
               f"(FORMAT parquet, ROW_GROUP_SIZE 1000000)")


def code_env(path: Path) -> dict:
    """The environment that imports ndcg_duck from the checkout at `path`; fails unless it does."""
    env = dict(os.environ, PYTHONPATH=str(path))
    work = HERE / "data" / "work"  # run_once's working directory
    work.mkdir(parents=True, exist_ok=True)
    found = subprocess.run([sys.executable, "-c", "import ndcg_duck; print(ndcg_duck.__file__)"],
                           env=env, cwd=work, capture_output=True, text=True,
                           check=True).stdout.strip()
    if not Path(found).resolve().is_relative_to(path):
        raise SystemExit(f"{path}: PYTHONPATH imports ndcg_duck from {found}, not from there")
    return env


def cases(args) -> list:
    """Every timed case: dicts of name, shape, kind (ndcg-duck, peer, trec_eval), cmd, env."""
    out = []
    k = ["-k", args.k]
    for name, path in args.code:
        env = code_env(path)
        for shape in args.shapes:
            _, recs, rels, flags, _ = SHAPES[shape]
            out.append({"name": name, "shape": shape, "kind": "ndcg-duck", "env": env,
                        "cmd": [sys.executable, "-c", MAIN, "eval", str(args.data / recs),
                                str(args.data / rels), *k, *flags, "--format", "json"]})
    for shape in args.shapes:
        _, recs, rels, _, peers = SHAPES[shape]
        for tool in peers:
            if args.peers is None or tool in args.peers:
                limit = ["--memory-limit", args.peer_memory_limit] if args.peer_memory_limit else []
                out.append({"name": tool, "shape": shape, "kind": "peer", "env": None,
                            "cmd": [sys.executable, str(HERE / "tools.py"), tool,
                                    str(args.data / recs), str(args.data / rels), *limit]})
        if shape == "trec":
            for name, path in args.trec_eval:
                out.append({"name": name, "shape": shape, "kind": "trec_eval", "env": None,
                            "cmd": [str(path), "-m", f"ndcg_cut.{args.k}",
                                    str(args.data / rels), str(args.data / recs)]})
    return out


def means(case: dict, stdout: str) -> dict:
    """The means a case printed: {"ndcg@K": float or, for trec_eval, its 4-decimal text,
    "users": int or None}."""
    if case["kind"] == "trec_eval":  # lines "ndcg_cut_10 \t all \t 0.1234"
        found = {}
        for line in stdout.splitlines():
            measure, query, value = line.split()
            if query == "all" and measure.startswith("ndcg_cut_"):
                found[f"ndcg@{measure[len('ndcg_cut_'):]}"] = value
        return found
    data = json.loads([ln for ln in stdout.splitlines() if ln.startswith("{")][-1])
    return {key: value for key, value in data.items() if key.startswith("ndcg@") or key == "users"}


def check(results: dict) -> dict:
    """Raise unless every case's means agree (see the module docstring); returns the reference:
    the first ndcg-duck case's means."""
    ref_case, ref = next(((c, m) for c, m in results.items() if c[2] == "ndcg-duck"),
                         (None, None))
    if ref is None:
        raise SystemExit("no ndcg-duck case finished: nothing to check the peers against")
    for (name, shape, kind), got in results.items():
        where = f"{name} on {shape}"
        if kind == "ndcg-duck":
            bad = [key for key in ref if key == "users" and got.get(key) != ref[key]
                   or key != "users" and abs(got[key] - ref[key]) > TOLERANCE]
        elif kind == "peer":
            bad = [key for key in ("ndcg@10", "users") if got.get(key) is not None
                   and abs(got[key] - ref[key]) > (TOLERANCE if key == "ndcg@10" else 0)]
        else:
            bad = [key for key in got if got[key] != f"{ref[key]:.4f}"]
            if not got:
                bad = ["no ndcg_cut line"]
        if bad:
            raise SystemExit(f"DISAGREEMENT: {where} {got} against {ref_case[0]} on "
                             f"{ref_case[1]} {ref} ({', '.join(bad)})")
    return ref


def table(times: dict, rows: dict, first: str, runs: int) -> str:
    nested = {name: statistics.median(t) for (name, shape, kind), t in times.items()
              if kind == "ndcg-duck" and shape == "nested"}
    duck = {shape: statistics.median(t) for (name, shape, kind), t in times.items()
            if kind == "ndcg-duck" and name == first}
    out = [f"| case | shape | median of {runs} (s) | runs (s) | CPU s | peak RSS MB | "
           f"x nested (same code) | ndcg-duck / peer |", "|---|---|---|---|---|---|---|---|"]
    for (name, shape, kind), t in times.items():
        median = statistics.median(t)
        own = f"{median / nested[name]:.2f}" if kind == "ndcg-duck" and name in nested else ""
        peer = f"{duck[shape] / median:.2f}" if kind != "ndcg-duck" and shape in duck else ""
        cpu = [r["cpu"] for r in rows[(name, shape, kind)] if r.get("cpu") is not None]
        rss = [r["rss_mb"] for r in rows[(name, shape, kind)] if r.get("rss_mb")]
        label = f"ndcg-duck ({name})" if kind == "ndcg-duck" else name
        out.append(f"| {label} | {SHAPES[shape][0]} | {median:.2f} | "
                   f"{', '.join(f'{r:.2f}' for r in t)} | "
                   f"{f'{statistics.median(cpu):.1f}' if cpu else '-'} | "
                   f"{f'{max(rss):.0f}' if rss else '-'} | {own} | {peer} |")
    return "\n".join(out)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, required=True)
    ap.add_argument("--code", action="append", help="NAME=PATH of a checkout (default: this one)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("-k", default="5,10,20")
    ap.add_argument("--shapes", default="nested,rank,score", help=f"of {','.join(SHAPES)}")
    ap.add_argument("--peers", help="comma list of benchmarks/tools.py peers to run (default: "
                                    "every peer of the shapes; 'none' for none)")
    ap.add_argument("--trec-eval", action="append", default=[],
                    help="[NAME=]PATH of a trec_eval binary, a peer of the trec shape")
    ap.add_argument("--timeout", type=float, default=3600, help="seconds per run")
    ap.add_argument("--peer-memory-limit", metavar="SIZE",
                    help="DuckDB's memory limit for the peers (tools.py --memory-limit; polars "
                         "has none); ndcg-duck keeps its default")
    ap.add_argument("--max-rss-mb", type=float,
                    help="kill a case whose processes hold more than this many MB resident; it "
                         "is then reported as out of memory (as a timeout is) and the run goes on")
    args = ap.parse_args(argv)
    args.data = args.data.resolve()
    args.code = [(name, Path(path).resolve()) for name, path in
                 (c.split("=", 1) for c in args.code or [f"this checkout={HERE.parent}"])]
    args.shapes = args.shapes.split(",")
    if any(shape not in SHAPES for shape in args.shapes):
        ap.error(f"--shapes: choose from {','.join(SHAPES)}")
    args.peers = None if args.peers is None else set(args.peers.split(","))
    args.trec_eval = [(t.split("=", 1) if "=" in t else ("trec_eval", t)) for t in args.trec_eval]
    if "score" in args.shapes:
        write_scores(args.data)
    if "trec" in args.shapes:
        generate.write_trec(args.data)
    todo = cases(args)
    run.warm(sorted({args.data / name for shape in args.shapes for name in SHAPES[shape][1:3]}))
    times: dict = {}
    rows: dict = {}
    results: dict = {}
    failed: dict = {}
    for i in range(args.runs):
        for case in todo:
            key = (case["name"], case["shape"], case["kind"])
            res = run.run_once(case["cmd"], args.timeout, case["env"], args.max_rss_mb)
            if not res["ok"] and not args.max_rss_mb:
                raise SystemExit(f"{key} failed on run {i + 1}: {res.get('error')}")
            if not res["ok"]:  # out of memory or timed out: reported, not timed
                print(f"run {i + 1}/{args.runs} {case['name']} on {case['shape']}: "
                      f"{res['error']}", file=sys.stderr, flush=True)
                failed.setdefault(key, []).append(res["error"])
                continue
            print(f"run {i + 1}/{args.runs} {case['name']} on {case['shape']}: "
                  f"{res['wall']:.2f} s", file=sys.stderr, flush=True)
            results[key] = means(case, res.pop("stdout"))
            times.setdefault(key, []).append(res["wall"])
            rows.setdefault(key, []).append(res)
    ref = check(results)
    print(table(times, rows, args.code[0][0], args.runs))
    for (name, shape, _), errors in failed.items():
        print(f"\n{name} on {SHAPES[shape][0]}: {'; '.join(errors)}")
    loads = [r[k] for rs in rows.values() for r in rs for k in ("load_before", "load_after")
             if r.get(k) is not None]
    print(f"\nMeans (every case agrees): {json.dumps(ref)}; 1-minute load around the runs "
          f"{min(loads, default=0):.1f}-{max(loads, default=0):.1f} on {os.cpu_count()} cores.")


if __name__ == "__main__":
    main()
