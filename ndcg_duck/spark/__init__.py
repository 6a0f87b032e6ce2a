"""The Spark engine: the same macros beyond one machine.

Spark reads the inputs and gives every user a bucket, a hash of the user id modulo a number of
buckets sized from the data. `groupBy(bucket).cogroup(...).applyInArrow` moves each bucket's
recommendations and judgments to one worker as two Arrow tables; the worker loads them into an
in-process DuckDB (inputs.load, as the default engine does) and scores their users with the
ndcg_ macros, checks included. There is no second implementation of the metric: Spark only
reads, moves, writes and adds up.

Means are exact sums: each partition adds its users' values as integers (a double is an integer
times a power of two), the driver adds those few partial sums and divides the exact total by the
number of users, rounding once (means.mean_of_sum: every door's rule), so a mean does not
depend on the number of buckets, partitions or workers. Only the partial sums and counts reach
the driver; the per-user rows stay in Spark.

The package holds one concern a module: the driver of an evaluation (engine.py), the workers'
scoring and exact partial sums (scoring.py, exact.py), reading and writing (files.py), one
session and log rule for the command line (launch.py), Spark's failures in the caller's words
(refusals.py), eval's result object for the command line (result.py: SparkResult, the default
engine's interface), segments and plots (extras.py), compare (compare.py), the beyond-accuracy
measures (beyond_accuracy.py).

Needs the `spark` extra (pyspark >= 4.0) and Java 17 or newer.
"""

from __future__ import annotations

from .. import options as registry, outcome
from .engine import SparkEvaluation, run
from .exact import SCALE, Sums, exact_sum  # noqa: F401 (the API)
from .files import check_output  # noqa: F401 (the command line's check before Spark starts)
from .result import SparkResult  # noqa: F401 (eval's result object on Spark)


def evaluate(spark, recs, rels, k=registry.BY_NAME["k"].default, *, per_user=True,
             per_item=False, buckets=None, **options) -> SparkEvaluation:
    """Evaluate the recommendations `recs` against the judgments `rels`, two Spark DataFrames in
    the layouts ndcg_duck.evaluate reads (nested lists, or long rows with a rank or a score), on
    the Spark session `spark`. The keyword options are ndcg_duck.evaluate's (gain=, ties=,
    judged_only=, user_col=, ...; threads, memory_limit and temp_dir apply to each worker's
    DuckDB, one thread by default since Spark runs a task per core; batch_users sets about how
    many users a worker scores at once). The beyond-accuracy metrics' train= and items= are
    read on the driver, as ndcg_duck.evaluate reads them (paths or in-memory tables, not Spark
    DataFrames), and their per-item tables are broadcast to the workers.

    Returns the summary (a dict, as ndcg_duck.evaluate's) and the per-user rows as a Spark
    DataFrame (read from rows persisted on the workers' disks: the result's unpersist() frees
    them), or None with per_user=False; with per_item=True, the result's per_item is the
    per-item view (an Arrow table, as ndcg_duck.evaluate's: the workers' counts added up per
    cutoff and item). buckets sets how many groups of users the workers score,
    BUCKETS_PER_TASK to a Spark task (default: sized from the data). Raises InputError for bad input or options,
    with the message ndcg_duck.evaluate gives.
    """
    return outcome.in_python(lambda: run(spark, recs, rels, k, per_user=per_user,
                                         per_item=per_item, buckets=buckets, **options))
