"""One `ndcg-duck eval` run as the command line uses it, the same on every engine: a result with
summary(), notes(), write_per_user(path, fmt), per_user_rows(), plot(path),
segments(segments, by) and close() (or a `with` block). `Result` is what every engine's result
shares (write_trec_lines: trec_eval -q's lines from per_user_rows); `DuckDBResult` is the
default engine's, whose segments and plots are computed in the run's own cursor (its tables
still there). The Spark engine's is ndcg_duck.spark.SparkResult.
"""

from __future__ import annotations

import sys
from contextlib import ExitStack

from .. import outcome
from ..evaluation import evaluate, intervals as ci, progress
from ..options import user_col
from ..metrics import is_metric
from . import output, plot as plotting, segments as segmenting, trec


class Result:
    """What every engine's result shares: the run holds what `open(stack)` entered in its
    ExitStack (the engine's session, the run's connection) until close(); as a `with` block, an
    error inside it reaches them first (an engine's own session may reword it)."""

    def __init__(self, settings: dict):
        self.settings = settings
        self.user_col = user_col(settings)
        self.stack = ExitStack()
        try:
            self.open(self.stack)
        except BaseException:
            if not self.stack.__exit__(*sys.exc_info()):
                raise

    def open(self, stack: ExitStack) -> None:
        raise NotImplementedError

    def close(self) -> None:
        self.stack.close()

    def write_trec_lines(self) -> None:
        """--format trec --per-user -: trec_eval -q's lines (report/trec.py) on stdout, a user at
        a time in trec_eval's order (per_user_rows)."""
        names = [name for name in self.summary() if is_metric(name)]
        for text in trec.per_query_lines(self.per_user_rows(), self.user_col, names,
                                         self.settings):
            sys.stdout.write(text)
        sys.stdout.flush()

    @staticmethod
    def interval_rows(rows: list, names: list, found: dict) -> None:
        """Give each of --segments' rows the intervals of its metrics `names`, from `found`
        ({(segment, or None for every user, metric): (low, high)}), as row['intervals']."""
        for row in rows:
            key = None if row["segment"] == segmenting.ALL else row["segment"]
            row["intervals"] = {m: found.get((key, m), (None, None)) for m in names}

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> bool:
        return self.stack.__exit__(*exc)


class DuckDBResult(Result):
    """An eval run on the default engine (evaluate.running), kept open for what follows it:
    recs and rels as the command line gives them, settings its registry options; per_user:
    keep the per-user table (for --per-user, --segments and --plot); show_progress: on
    stderr (progress.shown) until close."""

    def __init__(self, recs, rels, settings: dict, *, per_user: bool, show_progress: bool,
                 by_segment: bool = False, per_item: bool = False):
        self.recs, self.rels, self.per_user, self.show = recs, rels, per_user, show_progress
        self.per_item = per_item
        super().__init__(settings)

    @staticmethod
    def check_output(path: str) -> None:
        """Before any work: --per-user PATH can be written (a file, its format by extension)."""
        output.check_output_path(path)

    @staticmethod
    def check_per_item(path: str) -> None:
        """Before any work: --per-item PATH can be written (a file, its format by extension)."""
        output.check_output_path(path)

    def open(self, stack: ExitStack) -> None:
        stack.enter_context(progress.shown(enabled=self.show))
        self.ran = stack.enter_context(evaluate.running(self.recs, self.rels,
                                                        per_user=self.per_user,
                                                        per_item=self.per_item, **self.settings))
        self.relation = None

    def summary(self) -> dict:
        return self.ran.evaluation.summary

    def notes(self) -> list:
        return self.ran.notes

    def write_per_user(self, path: str, fmt: str) -> None:
        """The per-user table to `path`, or to stdout for '-' (in `fmt`)."""
        progress.step("writing the per-user table")
        if path == "-":
            output.write_stdout(self.ran.evaluation.per_user, fmt)
        else:
            output.write_table(self.ran.evaluation.per_user, path)

    def write_per_item(self, path: str) -> None:
        """The per-item view (evaluation/leaks.py) to `path`, written whole (its format by
        extension)."""
        progress.step("writing the per-item view")
        output.write_table(self.ran.evaluation.per_item, path)

    def per_user_rows(self):
        """The evaluated users' rows as dicts, user ids in order as text (trec.arrow_rows)."""
        return trec.arrow_rows(self.ran.evaluation.per_user, self.user_col)

    def _per_user(self) -> tuple:
        """The per-user table as a relation of the run's cursor, and the metrics the segments
        and plots show (outcome.shown_metrics)."""
        table = self.ran.evaluation.per_user
        if self.relation is None:
            self.relation = "ndcg_users_wide"
            self.ran.cursor.register(self.relation, table)
        return self.relation, outcome.shown_metrics(table.column_names, self.summary())

    def plot(self, path) -> None:
        relation, metrics = self._per_user()
        plotting.plot_in(self.ran.cursor, relation, metrics, self.summary(), path)

    def intervals(self, spec: ci.Spec) -> tuple:
        """--ci: ({metric: (low, high)} for each metric averaged over users, what was said of
        them: the metrics clipped, those with values outside their bounds) (evaluation/
        intervals.py)."""
        relation, metrics = self._per_user()
        names = ci.averaged(metrics)
        found, said = ci.intervals_in(self.ran.cursor, relation, names,
                                      {(None, m): self.summary()[m] for m in names}, spec)
        return {m: found[(None, m)] for m in names}, said

    def segments(self, segments, by: str, spec=None) -> tuple:
        """--segments' rows (segments.rows'), the per-run metrics of each segment's users
        added (outcome.add_per_run), and with --ci (spec) each row's intervals (interval_rows)
        and the metrics whose interval was clipped: (rows, clipped)."""
        from .popularity import rows as popularity_rows

        if isinstance(segments, segmenting.Popularity):  # not a segment of users
            rows, said = popularity_rows(self.ran, self.settings, segments, spec)
            if spec is not None:
                whole, more = self.intervals(spec)
                rows[0]["intervals"] = whole
                said = ci.merge(said, more)
            return rows, said
        relation, metrics = self._per_user()
        rows = segmenting.means_in(self.ran.cursor, relation, metrics, segments, by,
                                   self.user_col)
        said = ci.said()
        if spec is not None:
            names = ci.averaged(metrics)
            centres = {(None if row["segment"] == segmenting.ALL else row["segment"], m): row[m]
                       for row in rows for m in names}
            found, said = ci.intervals_in(self.ran.cursor, "ndcg_seg_joined", names,
                                          centres, spec, group="segment")
            whole, more = ci.intervals_in(self.ran.cursor, "ndcg_seg_joined", names, centres,
                                          spec)
            found.update(whole)
            said = ci.merge(said, more)
            self.interval_rows(rows, names, found)
        per_run = segmenting.per_run_by_segment(self.ran.cursor, segments, by, self.user_col)
        outcome.add_per_run(rows, self.summary(), per_run, segmenting.ALL)
        return rows, said
