"""Time the SQL prototypes in benchmarks/prototypes.sql against the query evaluate() runs.

    /work/venv20/bin/python benchmarks/prototypes.py --users 1000000 [--repeat 3] [--only NAME,...]

Each prototype runs as CREATE OR REPLACE TEMP TABLE ... AS <prototype> (as evaluate() creates
ndcg_result), in the same connection with the same views; its per-cutoff mean NDCG and user
count are checked against evaluate()'s to 1e-12. Writes benchmarks/results/prototypes_u{U}.md.
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
import time
from pathlib import Path

import duckdb

import ndcg_duck
from ndcg_duck import inputs
from ndcg_duck.options import Options

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import explain  # noqa: E402
import generate  # noqa: E402

COVERAGE = {
    "coverage (current: unnests recs again)": None,
    "coverage from user ids only": """
        SELECT count(*) FILTER (WHERE r.user_id IS NULL), count(*) FILTER (WHERE j.user_id IS NULL)
        FROM (SELECT DISTINCT user_id FROM ndcg_recs) AS r
        FULL OUTER JOIN (SELECT DISTINCT user_id FROM ndcg_rels) AS j ON r.user_id = j.user_id""",
    "coverage from user ids, non-empty lists": """
        SELECT count(*) FILTER (WHERE r.user_id IS NULL), count(*) FILTER (WHERE j.user_id IS NULL)
        FROM (SELECT DISTINCT user_id FROM ndcg_recs WHERE len(items) > 0) AS r
        FULL OUTER JOIN (SELECT DISTINCT user_id FROM ndcg_rels) AS j ON r.user_id = j.user_id""",
}


def sections(path: Path) -> dict:
    out, name, buf = {}, None, []
    for line in path.read_text().splitlines():
        m = re.match(r"-- name: (\S+)", line)
        if m:
            if name:
                out[name] = "\n".join(buf).strip().rstrip(";")
            name, buf = m.group(1), []
        elif name and not line.startswith("--"):
            buf.append(line)
    if name:
        out[name] = "\n".join(buf).strip().rstrip(";")
    return out


def timed(con, sql: str, repeat: int) -> list:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        con.execute(sql).fetchall()
        times.append(time.perf_counter() - t)
    return times


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--users", type=int, default=1_000_000)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--only", help="comma-separated prototype names")
    ap.add_argument("--threads", type=int)
    args = ap.parse_args(argv)
    data = generate.generate(args.users, args.seed, generate.default_dir(args.users, args.seed),
                             quiet=True)
    recs, rels = str(data / "recs.parquet"), str(data / "rels.parquet")
    options = Options(k=(5, 10, 20))
    expected = ndcg_duck.evaluate(recs, rels, k=list(options.k), per_user=False).summary
    con = duckdb.connect(config={"threads": args.threads} if args.threads else {})
    ndcg_duck.register(con)
    inputs.load(con, recs, rels, inputs.Columns())
    current = explain.queries(options)
    protos = {"current (evaluate's scores query)": current["scores (CREATE TABLE ndcg_result)"]
              .split(" AS ", 1)[1]}
    ks = "[5, 10, 20]::BIGINT[]"
    for name, sql in sections(HERE / "prototypes.sql").items():
        if args.only and name not in args.only.split(","):
            continue
        protos[name] = sql.replace("{KS}", ks).replace("{DEPTH}", "20")
    rows = []
    for name, sql in protos.items():
        times = timed(con, f"CREATE OR REPLACE TEMP TABLE proto AS {sql}", args.repeat)
        means = dict(con.execute("SELECT k, avg(ndcg) FROM proto GROUP BY k").fetchall())
        users = con.execute("SELECT count(DISTINCT user_id) FROM proto").fetchall()[0][0]
        ok = users == expected["users"] and all(
            abs(means[k] - expected[f"ndcg@{k}"]) < 1e-12 for k in options.k)
        rows.append((name, statistics.median(times), times, ok))
        print(f"{name:40s} {statistics.median(times):7.3f} s  {'ok' if ok else 'MISMATCH'}",
              flush=True)
    for name, sql in COVERAGE.items():
        sql = sql or current["coverage"]
        times = timed(con, sql, args.repeat)
        rows.append((name, statistics.median(times), times, True))
        print(f"{name:40s} {statistics.median(times):7.3f} s", flush=True)
    threads = con.execute("SELECT current_setting('threads')").fetchall()[0][0]
    lines = [f"### SQL prototypes, {args.users:,} users, k=5,10,20 (duckdb {duckdb.__version__}, "
             f"{threads} threads, in-process, median of {args.repeat})", "",
             "| query | median s | runs s | same means as evaluate() |", "|---|---:|---|---|"]
    for name, med, times, ok in rows:
        lines.append(f"| {name} | {med:.3f} | {', '.join(f'{t:.3f}' for t in times)} | "
                     f"{'yes' if ok else 'NO'} |")
    out = HERE / "results" / f"prototypes_u{args.users}.md"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(lines) + "\n")
    print(f"written to {out}")


if __name__ == "__main__":
    main()
