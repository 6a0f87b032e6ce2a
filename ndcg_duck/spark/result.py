"""eval on Spark for the command line: SparkResult, report/result.py's interface (the default
engine's DuckDBResult) over a Spark session that stays up until close."""

from __future__ import annotations

from .. import options as registry, outcome
from ..evaluation import beyond, inputs, leaks
from ..evaluation import intervals as ci
from ..evaluation.inputs import described
from ..report import output
from ..report.result import Result
from .columns import col
from .engine import refuse_beyond_users, run
from .files import (check_one_file_per_user, check_output, check_table_output, read,
                    write_per_user)
from .launch import cli_session, parse_conf
from .refusals import refusals


class SparkResult(Result):
    """An eval run on Spark for the command line (report/result.py's interface): the session
    (launch.cli_session: master, conf_pairs as --spark-conf gives them, show_progress: Spark's
    progress bar, else its log in a temporary file) stays up until close. per_user: keep the
    per-user rows (for --per-user, --segments and --plot); by_segment: keep, with per-run
    metrics, the evaluated users' lists for --segments; output: --per-user's path or
    table:NAME; popularity: --by item-popularity's segments.Popularity (each group scored on
    the workers in the same run, engine.run)."""

    def __init__(self, recs, rels, settings: dict, *, per_user: bool, show_progress: bool,
                 by_segment: bool = False, master: str = "local[*]", conf_pairs=(),
                 output=None, per_item: bool = False, popularity=None):
        self.recs, self.rels, self.per_user, self.show = recs, rels, per_user, show_progress
        self.output = output  # --per-user's path, or table:NAME (checked once Spark is up)
        self.master, self.conf_pairs = master, conf_pairs
        self.by_segment = by_segment and popularity is None  # groups of items, not of users
        self.popularity = popularity
        self.per_item = per_item
        super().__init__(settings)

    check_output = staticmethod(check_output)

    @staticmethod
    def check_per_item(path: str) -> None:
        """Before any work: --per-item PATH can be written (a file, its format by extension),
        as the default engine checks it."""
        output.check_output_path(path)

    def write_per_item(self, path: str) -> None:
        """The per-item view (engine.item_view: the workers' counts added up on Spark, one row
        per cutoff and item on the driver) to `path`, written whole (its format by
        extension)."""
        output.write_table(self.result.per_item, path)

    def open(self, stack) -> None:
        settings = self.settings
        conf = parse_conf(self.conf_pairs)
        leaks.needs_train(settings["exclude_seen"], settings["train"])  # before Spark starts
        refuse_beyond_users(settings)  # before Spark starts
        beyond.require(outcome.measured({name: value for name, value in settings.items()
                                         if registry.BY_NAME[name].group == "metric"},
                                        None)[1],  # fail fast, before Spark starts
                       settings["train"], settings["items"])
        self.spark = stack.enter_context(cli_session(self.master, conf, self.show))
        check_table_output(self.spark, self.output)
        self.lists = {} if self.by_segment else None  # the per-run metrics per segment
        stack.callback(self._drop_lists)
        cols = inputs.Columns.given(**settings)
        recs = read(self.spark, self.recs, settings["recs_format"], "recommendations", cols)
        rels = read(self.spark, self.rels, settings["rels_format"], "relevance", cols)
        self.names = (described("recommendations", self.recs),
                      described("relevance", self.rels))
        if inputs.table_name(self.recs) is None:  # a table's files are one dataset
            with refusals(*self.names):
                check_one_file_per_user(recs, self.names[0], cols.of("recommendations").user)
        self.result, self._notes = run(
            self.spark, recs, rels, per_user=self.per_user, per_item=self.per_item,
            recs_what=self.names[0], rels_what=self.names[1], lists=self.lists,
            popularity=self.popularity, **settings)
        stack.callback(self.result.unpersist)

    def _drop_lists(self) -> None:
        if self.lists:
            self.lists["driver"].close()

    def summary(self) -> dict:
        return self.result.summary

    def notes(self) -> list:
        return self._notes

    def write_per_user(self, path: str, fmt: str) -> None:
        """The per-user rows to `path` (a file, or part files in a directory), or to stdout
        for '-' (in `fmt`)."""
        rows = self.result.per_user
        with refusals(*self.names):
            if path == "-":
                output.through_file(lambda tmp: write_per_user(rows, str(tmp), self.user_col),
                                    fmt)
            else:
                write_per_user(rows, path, self.user_col)

    def per_user_rows(self):
        """The evaluated users' rows as dicts, user ids in order as text, a partition at a time
        to the driver."""
        ordered = self.result.per_user.orderBy(col(self.user_col).cast("string"))
        return (row.asDict() for row in ordered.toLocalIterator())

    def write_trec_lines(self) -> None:
        with refusals(*self.names):
            super().write_trec_lines()

    def plot(self, path) -> None:
        from .extras import plot as draw

        with refusals(*self.names):
            draw(self.result.per_user, self.result.summary, path)

    def intervals(self, spec) -> tuple:
        """--ci (t only: cli/eval.py refuses the bootstrap on Spark), from exact sums of the
        values and their squares (extras.intervals)."""
        from .extras import intervals

        with refusals(*self.names):
            return intervals(self.result.per_user, self.result.summary, spec)

    def segments(self, segments, by: str, spec=None) -> tuple:
        """--segments' rows, with spec (--ci) their t intervals, and what was said of those
        (evaluation/intervals.py said): (rows, said)."""
        from .extras import by_segment, per_run_by_segment
        from .popular import rows as popularity_rows

        if self.popularity is not None:  # the groups' sums, added up in open (engine.run)
            rows, said = popularity_rows(self.result.grouped, self.result.summary, spec)
            if spec is not None:  # '(all)': the run's own, as the default engine's
                whole, more = self.intervals(spec)
                rows[0]["intervals"] = whole
                said = ci.merge(said, more)
            return rows, said
        with refusals(*self.names):
            rows, said = by_segment(self.spark, self.result.per_user, self.result.summary,
                                    segments, by, self.user_col, spec)
            if self.lists:
                per_run_by_segment(self.spark, self.lists, rows, self.result.summary,
                                   segments, by, self.user_col)
        return rows, said
