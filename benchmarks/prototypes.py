"""Time the SQL prototypes in benchmarks/prototypes.sql against the query evaluate() runs.

    python benchmarks/prototypes.py --users 1000000 [--repeat 3] [--only NAME,...]

Each `-- name:` prototype runs as CREATE OR REPLACE TEMP TABLE ... AS <prototype> (as evaluate()
creates ndcg_result), in one connection with the views evaluate() creates; its per-cutoff mean
NDCG and user count are checked against evaluate()'s to 1e-12. `-- floor:` pieces and the
coverage variants are timed only. Repetitions are round-robin over all queries (repetition 1 of
each, then repetition 2, ...), so drifting machine speed hits them alike.
Writes benchmarks/results/prototypes_u{U}.md.
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import codever  # noqa: E402
import generate  # noqa: E402

COVERAGE = {
    "coverage from user ids only": """
        SELECT count(*) FILTER (WHERE r.user_id IS NULL), count(*) FILTER (WHERE j.user_id IS NULL)
        FROM (SELECT DISTINCT user_id FROM ndcg_recs) AS r
        FULL OUTER JOIN (SELECT DISTINCT user_id FROM ndcg_rels) AS j ON r.user_id = j.user_id""",
    "coverage from user ids, non-empty lists": """
        SELECT count(*) FILTER (WHERE r.user_id IS NULL), count(*) FILTER (WHERE j.user_id IS NULL)
        FROM (SELECT DISTINCT user_id FROM ndcg_recs WHERE len(items) > 0) AS r
        FULL OUTER JOIN (SELECT DISTINCT user_id FROM ndcg_rels) AS j ON r.user_id = j.user_id""",
}


def sections(path: Path) -> list:
    """[(kind, name, sql)] with kind 'name' (checked prototype) or 'floor' (timed piece)."""
    out, cur, buf = [], None, []

    def flush():
        if cur and "".join(buf).strip():
            out.append((cur[0], cur[1], "\n".join(buf).strip().rstrip(";")))

    for line in path.read_text().splitlines():
        m = re.match(r"-- (name|floor): (.+)", line)
        if m:
            flush()
            cur, buf = (m.group(1), m.group(2).strip()), []
        elif cur and not line.startswith("--"):
            buf.append(line)
    flush()
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--users", type=int, default=1_000_000)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--only", help="comma-separated prototype names")
    ap.add_argument("--threads", type=int)
    ap.add_argument("--rev", default="HEAD", help="git revision of ndcg-duck, or 'worktree'")
    args = ap.parse_args(argv)
    code = codever.activate(args.rev)
    import duckdb
    import ndcg_duck
    from ndcg_duck.evaluation import inputs
    data = generate.generate(args.users, args.seed, generate.default_dir(args.users, args.seed),
                             quiet=True)
    recs, rels = str(data / "recs.parquet"), str(data / "rels.parquet")
    ks = (5, 10, 20)
    expected = ndcg_duck.evaluate(recs, rels, k=list(ks), per_user=False).summary
    con = duckdb.connect(config={"threads": args.threads} if args.threads else {})
    ndcg_duck.register(con)
    inputs.load(con, recs, rels, inputs.Columns())
    queries = [("evaluate", "evaluate() on this connection (every statement it runs)", None)]
    for kind, name, sql in sections(HERE / "prototypes.sql"):
        if args.only and name not in args.only.split(","):
            continue
        sql = sql.replace("{KS}", "[5, 10, 20]::BIGINT[]").replace("{DEPTH}", "20")
        queries.append(("check" if kind == "name" else "floor", name, sql))
    queries += [("floor", name, sql) for name, sql in COVERAGE.items()]
    times = {name: [] for _, name, _ in queries}
    ok = {}
    for rep in range(args.repeat):
        for kind, name, sql in queries:
            t = time.perf_counter()
            if kind == "evaluate":
                ndcg_duck.evaluate(recs, rels, k=list(ks), per_user=False, con=con)
            else:
                run = f"CREATE OR REPLACE TEMP TABLE proto AS {sql}" if kind == "check" else sql
                con.execute(run).fetchall()
            times[name].append(time.perf_counter() - t)
            if kind == "check" and rep == 0:
                means = dict(con.execute("SELECT k, avg(ndcg) FROM proto GROUP BY k").fetchall())
                users = con.execute("SELECT count(DISTINCT user_id) FROM proto").fetchall()[0][0]
                ok[name] = users == expected["users"] and all(
                    abs(means[k] - expected[f"ndcg@{k}"]) < 1e-12 for k in ks)
            print(f"rep {rep + 1} {name:45s} {times[name][-1]:7.3f} s", file=sys.stderr, flush=True)
    threads = con.execute("SELECT current_setting('threads')").fetchall()[0][0]
    lines = [f"### SQL prototypes, {args.users:,} users, k=5,10,20 (duckdb {duckdb.__version__}, "
             f"{threads} threads, in-process, median of {args.repeat}, round-robin)", "",
             f"ndcg-duck: {code}", "",
             "| query | median s | runs s | same means as evaluate() |", "|---|---:|---|---|"]
    for kind, name, _ in queries:
        check = (("yes" if ok[name] else "NO") if kind == "check" else
                 "(reference)" if kind == "evaluate" else "(piece, not checked)")
        lines.append(f"| {name} | {statistics.median(times[name]):.3f} | "
                     f"{', '.join(f'{t:.2f}' for t in times[name])} | {check} |")
    out = HERE / "results" / f"prototypes_u{args.users}.md"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    print(f"written to {out}")


if __name__ == "__main__":
    main()
