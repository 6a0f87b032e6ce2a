"""Process CPU around each statement of one `evaluate()` of the six non-ILD beyond metrics.

    python benchmarks/beyond_statements.py DIR [--metrics ndcg,coverage,...] [--k 10,20]

DIR as benchmarks/beyond.py's (recs, rels, train, items .parquet; train and items are read
unless --metrics is ndcg alone). Prints, per statement the
run executes (or fetches), the CPU seconds (user + sys of the process, every thread) and its
first words, then the total; the statements above 0.05 s only.
"""

from __future__ import annotations

import argparse
import contextlib
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from ndcg_duck.evaluation import evaluate as ev  # noqa: E402

BEYOND = "ndcg,coverage,gini,entropy,novelty,popularity,tail"
LOG = []


def cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def wrap_cursors(wrap) -> None:
    """Every cursor evaluate() works in, wrapped by wrap(cursor) (ev.borrowed replaced)."""
    original = ev.borrowed

    @contextlib.contextmanager
    def borrowed(con, settings):
        with original(con, settings) as work:
            yield wrap(work)

    ev.borrowed = borrowed


def timed(text, call):
    t0, w0 = cpu(), time.time()
    out = call()
    LOG.append((cpu() - t0, time.time() - w0, " ".join(str(text).split())))
    return out


class Rel:
    def __init__(self, rel, text):
        self._rel, self._text = rel, text

    def __getattr__(self, name):
        got = getattr(self._rel, name)
        if name in ("fetchall", "fetchone", "to_arrow_table", "arrow", "df", "fetchdf"):
            return lambda *a, **k: timed(self._text, lambda: got(*a, **k))
        return got


class Cur:
    def __init__(self, cur):
        self._cur = cur

    def execute(self, text, *a, **k):
        return timed(text, lambda: self._cur.execute(text, *a, **k))

    def sql(self, text, *a, **k):
        return Rel(self._cur.sql(text, *a, **k), text)

    def __getattr__(self, name):
        return getattr(self._cur, name)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("data", type=Path)
    ap.add_argument("--metrics", default=BEYOND)
    ap.add_argument("--k", default="10,20")
    ap.add_argument("--width", type=int, default=150)
    args = ap.parse_args()
    wrap_cursors(Cur)
    d = args.data
    t0, w0 = cpu(), time.time()
    ks = [int(x) for x in args.k.split(",")]
    extra = ({} if args.metrics == "ndcg" else
             {"train": str(d / "train.parquet"), "items": str(d / "items.parquet")})
    res = ev.evaluate(str(d / "recs.parquet"), str(d / "rels.parquet"), ks,
                      metrics=args.metrics.split(","), per_user=False, **extra)
    total, wall = cpu() - t0, time.time() - w0
    for c, w, text in LOG:
        if c >= 0.05:
            print(f"{c:6.2f} {w:6.2f}  {text[:args.width]}")
    print(f"{total:6.2f} {wall:6.2f}  total (CPU, wall)")
    print({k: v for k, v in res.summary.items() if not isinstance(v, dict)})


if __name__ == "__main__":
    main()
