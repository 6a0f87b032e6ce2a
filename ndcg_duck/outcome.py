"""What follows the numbers, the same on every engine: planning a run (its options to measures
and settings), the summary with the beyond-accuracy measures and the users without a value, the
run's warnings and errors in the caller's words, and a macro's error named as the input it came
from. The default engine (evaluation/, comparison/) and the Spark engine (spark/) call these and
keep only what differs: how the users are scored and how their values are added up.
"""

from __future__ import annotations

import re
import warnings
from typing import Callable, Optional

from . import metrics as metric_names, options as registry
from .errors import InputError, NdcgWarning
from .options import Options


# --- planning a run -----------------------------------------------------------------------------

def check_known(given: dict) -> None:
    """Stop on a keyword that is not an option of evaluate()."""
    unknown = sorted(set(given) - {p.name for p in registry.PYTHON})
    if unknown:
        raise InputError(f"unknown option {unknown[0]}=: the options are "
                         f"{', '.join(p.name for p in registry.PYTHON)}", usage=True)


def measured(metric_options: dict, k) -> tuple:
    """(Options with the cutoffs the measures need, the measures) for these metric options (-m
    names without @K take the cutoffs k, or metric_options' k): the SQL computes at each cutoff
    any measure needs."""
    metric_options = dict(metric_options)
    k = metric_options.pop("k", k)
    options = Options(k=k, **metric_options)
    own = options.metrics_sql.names() if options.metrics_sql is not None else ()
    measures = metric_names.parse_metrics(options.metrics, options.k, own)
    return Options(**{**metric_options, "k": metric_names.cutoffs(measures)}), measures


def plan(k, given: dict) -> tuple:
    """A run's plan from evaluate()'s k and keyword options: (Options, measures, the checked
    settings: registry.check_settings)."""
    check_known(given)
    options, measures = measured({name: value for name, value in given.items()
                                  if registry.BY_NAME[name].group == "metric"}, k)
    return options, measures, registry.check_settings(given)


# --- the summary --------------------------------------------------------------------------------

def beyond_summary(summary: dict, measures: tuple, per_run: dict, per_user: dict,
                   counts: dict) -> dict:
    """The summary with beyond-accuracy measures: every measure in the order of `measures` (the
    accuracy ones from `summary`, the per-run ones from `per_run`, the per-user ones from
    `per_user`: {name: exact mean}), users, users_without_NAME@K for each per-user
    beyond-accuracy measure (the evaluated users without a value, or with users_recommended in
    `summary` (--beyond-users recommended) the users of the recommendations: counts has how many
    have one), then the summary's other counts of users."""
    out = {}
    for m in measures:
        if not metric_names.beyond(m):
            out[m.name] = summary[m.name]
        elif metric_names.per_run(m.metric):
            out[m.name] = per_run[m.name]
        else:
            out[m.name] = per_user.get(m.name)
    out["users"] = summary["users"]
    for m in measures:
        if metric_names.beyond(m) and not metric_names.per_run(m.metric):
            out[f"users_without_{m.name}"] = (summary.get("users_recommended", summary["users"])
                                              - counts.get(m.name, 0))
    out.update((name, value) for name, value in summary.items() if name not in out)
    return out


def beyond_counted(summary: dict, missing: str, empty: str, judged: bool = True
                   ) -> Optional[str]:
    """Which users' lists the beyond-accuracy metrics of `summary` (eval's, on any engine)
    counted, as a line of the summary's table; None without them. With judgments (judged) they
    count the lists of the evaluated users (judged, and with recommendations): --missing and
    --empty choose those as for every metric, so --empty skip leaves out the lists of the users
    whose ideal DCG is 0, and the users only in the recommendations are not counted; without
    (no relevance file: check_lists_only), or with --beyond-users recommended (the summary's
    users_recommended), every user of the recommendations is."""
    names = [name for name in summary  # (a measure of --metrics-sql's is not in BY_NAME)
             if getattr(metric_names.BY_NAME.get(name.partition("@")[0]), "needs", "")]
    if not names:
        return None
    if not judged:
        users = summary["users"]
        return (f"{', '.join(names)}: counted the lists of every user of the recommendations "
                f"({_users(users)}; no relevance file)")
    listed = summary.get("users_recommended")
    if listed is not None:
        return (f"{', '.join(names)}: counted the lists of every user of the recommendations "
                f"({_users(listed)}; --beyond-users recommended), judged or not")
    lists = summary["users"] - (summary.get("users_without_recommendations") or 0
                                if missing == "zero" else 0)
    line = (f"{', '.join(names)}: counted the lists of {lists} evaluated "
            f"user{'' if lists == 1 else 's'} (judged, with recommendations)")
    zero = summary.get("users_with_zero_ideal_dcg")
    if empty == "skip" and zero:
        line += (f"; --empty skip left out the lists of {_users(zero)} whose ideal DCG is 0")
    only = summary.get("users_only_in_recommendations")
    if only:
        line += (f"; not the lists of {_users(only)} only in the recommendations (--beyond-users "
                 f"recommended counts every user's list)")
    return line


def _users(n: int) -> str:
    return f"{n} user{'' if n == 1 else 's'}"


# the options that read the judgments or choose users by them: with no relevance file (only
# beyond-accuracy metrics: check_lists_only) each is refused, never silently dropped
JUDGMENT_OPTIONS = ("judged_only", "missing", "empty", "gain", "gain_map", "min_relevance",
                    "idcg_cutoff", "unique_judgments", "relevance_col", "rels_user_col",
                    "rels_item_col", "rels_format", "beyond_users")


# the Spark engine's refusal of a run without judgments: its workers score each bucket of users
# from the bucket's recommendations and judgments together (spark/engine.py's cogroup)
SPARK_NEEDS_JUDGMENTS = ("the Spark engine needs the judgments (RELEVANCE): its workers score "
                         "each bucket of users from their recommendations and judgments "
                         "together; for the beyond-accuracy metrics of lists without judgments "
                         "use the default engine (--engine duckdb, or ndcg_duck.evaluate)")


def check_lists_only(measures: tuple, given: dict, per_item: bool = False) -> None:
    """A run without judgments (no relevance file), on any engine: every measure must be a
    beyond-accuracy one (they read only the lists, --train and --items), and no option that
    reads the judgments or chooses users by them may be given (`given`: the run's keyword
    options; one at its default is not given), nor --per-item (it counts each item's relevant
    users and hits). A usage error names the first in the caller's words."""
    if per_item:
        raise InputError("--per-item counts how often each item was relevant and how often it "
                         "hit, and there is no relevance file: pass it (RELEVANCE) or leave out "
                         "--per-item", usage=True)
    for m in measures:
        if not metric_names.beyond(m):
            listed = ", ".join(metric.name for metric in metric_names.METRICS if metric.needs)
            raise InputError(f"{m.name} needs judgments: pass the relevance file (RELEVANCE), "
                             f"or ask only for beyond-accuracy metrics ({listed}), which read "
                             f"the lists alone", usage=True)
    for name in JUDGMENT_OPTIONS:
        param = registry.BY_NAME[name]
        value = given.get(name, param.default)
        if value is None or value == param.default or value == ():
            continue
        if name == "beyond_users" and value != "evaluated":  # every user's list counts anyway
            continue
        flag = param.option + (f" {value}" if param.choices and param.kind != "flag" else "")
        why = {"judged_only": "takes the unjudged items out of each list",
               "missing": "chooses users by their judgments",
               "empty": "chooses users by their judgments",
               "beyond_users": "chooses users by their judgments"}.get(name,
                                                                      "reads the judgments")
        counts = (" (without it every user of the recommendations counts)"
                  if name in ("missing", "empty", "beyond_users") else "")
        raise InputError(f"{flag} {why}, and there is no relevance file{counts}: pass it "
                         f"(RELEVANCE) or leave out {flag}", usage=True)


def user_counts(unranked: int, unjudged: int, zero_ideal: int) -> dict:
    """The summary's counts of users besides `users`, as every engine reports them: the judged
    users without recommendations, the users only in the recommendations, the users whose
    ideal DCG is 0 (evaluate.user_flags_sql's zero_ideal)."""
    return {"users_without_recommendations": unranked,
            "users_only_in_recommendations": unjudged,
            "users_with_zero_ideal_dcg": zero_ideal}


# --- warnings and errors ------------------------------------------------------------------------

def as_text_note(as_text: tuple, recs_what: str, rels_what: str, matched: int,
                 judged: int) -> str:
    """The warning for ids compared as text (inputs.Loaded.as_text), with how many of the judged
    users have recommendations."""
    (kind, left, right), *more = as_text
    kinds = ", ".join([f"{kind} ids are {left} in the {recs_what} and {right} in the "
                       f"{rels_what}"]
                      + [f"{kind} ids {left} and {right}" for kind, left, right in more])
    return (f"{kinds}: compared as text, so '001' and '1' differ; {matched} of the "
            f"{judged} users of the relevance data have recommendations")


def unseen_levels_note(levels: list, found, rels_what: str) -> Optional[str]:
    """The warning for gain map levels that never occur among the relevance values `found`
    (None when every level occurs)."""
    unseen = [level for level in levels if level not in (found or ())]
    if not unseen:
        return None
    shown = ", ".join(f"{level:g}" for level in unseen)
    return (f"the gain map (--gain-map) lists level{'s' if len(unseen) > 1 else ''} "
            f"{shown}, which never occur{'' if len(unseen) > 1 else 's'} in the "
            f"{rels_what}: check the map and the relevance values")


def _within(depth) -> str:
    """Where in each ranking a count was made: its first `depth` items (None: all of them)."""
    return "anywhere in their rankings" if depth is None else f"among their first {depth} items"


def _plural(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def seen_note(counted: tuple, depth, train_what: str, excluded: bool) -> Optional[str]:
    """The warning for recommended items their user already has in train (counted: users,
    items, an example user and item, as sql/ndcg_leaks.sql's ndcg_seen gives them, within the
    first `depth` items of each ranking as shown); None when there are none."""
    users, items, user, item = counted
    if not items:
        return None
    said = (f"{_plural(users, 'evaluated user was', 'evaluated users were')} recommended items "
            f"they have in the {train_what} {_within(depth)} "
            f"({_plural(items, 'item', 'items')}; e.g. user {user!r}, item {item!r})")
    if excluded:
        return (f"{said}: --exclude-seen took them out of the rankings before the cut at k "
                f"(the items below moved up)")
    return (f"{said}: they count as recommended; --exclude-seen takes them out before the cut "
            f"at k, as most recommender libraries evaluate")


TIE_RULES = {"trec": "ordered by item id, descending as text (trec_eval's rule; --ties average "
                     "gives ndcg, dcg, idcg, cg and ncg each tied item's mean discount instead)",
             "average": "ndcg, dcg, idcg, cg and ncg give each tied item the mean discount of "
                        "its tie (--ties average); the other metrics order them by item id, "
                        "descending as text (trec_eval's rule)"}


def ties_note(counted: tuple, depth, ties: str) -> Optional[str]:
    """The warning for tied scores (counted: users, tied rows, an example user, as
    sql/ndcg_leaks.sql's ndcg_ties gives them, within the first `depth` items of each ranking),
    naming the rule that orders them (ties: --ties); None when there are none."""
    users, tied, user = counted
    if not tied:
        return None
    return (f"{_plural(tied, 'recommended item shares its', 'recommended items share their')} "
            f"score with another item of {_plural(users, 'user', 'users')} {_within(depth)} "
            f"(e.g. user {user!r}): {TIE_RULES[ties]}")


def run_notes(options: Options, loaded, matched: Callable[[], tuple],
              found: Callable[[list], object], seen: Optional[Callable[[], tuple]] = None,
              tied: Optional[Callable[[], tuple]] = None) -> list:
    """A run's warnings, however the engine counts: with ids compared as text (loaded.as_text,
    inputs.Loaded), as_text_note with matched() = (judged users with recommendations, judged
    users); with a gain map, unseen_levels_note with found(levels) = the levels that occur
    among the judgments' relevance values; with train, seen_note with seen() = (its counts, the
    depth, how the train input is named); with scores, ties_note with tied() = (its counts,
    the depth)."""
    notes = []
    if loaded.as_text:
        notes.append(as_text_note(loaded.as_text, loaded.recs_what, loaded.rels_what,
                                  *matched()))
    if options.gain_map:
        levels = [level for level, _ in options.gain_map]
        unseen = unseen_levels_note(levels, found(levels), loaded.rels_what)
        notes += [unseen] if unseen else []
    if seen is not None:
        counted, depth, train_what = seen()
        notes += [note for note in [seen_note(counted, depth, train_what, options.exclude_seen)]
                  if note]
    if tied is not None and loaded.layout == "scores":
        counted, depth = tied()
        notes += [note for note in [ties_note(counted, depth, options.ties)] if note]
    return notes


def no_file(role: str, path) -> str:
    """An input path (not a glob) that does not exist."""
    return f"{role} file {path} does not exist"


def no_match(role: str, path) -> str:
    """An input glob that matches no file."""
    return f"{role} glob {path} matches no file"


def no_rows(what: str) -> str:
    """An input without rows: nothing to evaluate."""
    return f"{what} has no rows: nothing to evaluate"


def no_overlap(recs_what: str, rels_what: str, recs_user, rels_user) -> str:
    """No judged user has a ranked item: almost always mismatched ids, never a real score of 0
    (recs_user and rels_user: the smallest user id of each side, as text)."""
    return (f"no user of the {rels_what} has recommendations in the {recs_what} "
            f"(user ids there look like {recs_user!r}, here like {rels_user!r}): check "
            f"--user-col and that both files use the same ids")


CHECK = re.compile(r"ndcg-duck: (recommendations|relevance|items|train): ([^\n]*)")


def named_check(text: str, names: dict) -> Optional[str]:
    """A macro's check in `text` (an error's message) as the caller's message, naming the input
    it read by `names` ({'recommendations': how the caller named them, ...}); a check that
    names its own file (the TREC readers) as it is; None when `text` holds no check."""
    found = CHECK.search(text)
    if found:
        what = names.get(found.group(1)) or found.group(1)
        return f"{what}: {found.group(2).strip()}"
    own = re.search(r"ndcg-duck: ([^\n]*)", text)
    return own.group(1).strip() if own else None


def named_input(text: str, recs_what: str, rels_what: str, given=None) -> Optional[str]:
    """named_check with the inputs of an evaluation, as every engine names them: the
    recommendations and judgments as the caller gave them, and with the beyond-accuracy
    metrics' inputs (given: evaluation/beyond.py's Inputs) the items and train ones."""
    return named_check(text, {"recommendations": recs_what, "relevance": rels_what,
                              "items": given and given.items, "train": given and given.train})


def in_python(call: Callable[[], tuple]):
    """The result of call() (which returns (result, notes) in the command line's words) for a
    Python caller: an InputError and the notes (NdcgWarning, at the caller of the function that
    calls in_python) in Python's words (registry.in_python_words)."""
    try:
        result, notes = call()
    except InputError as exc:
        raise InputError(registry.in_python_words(str(exc)), usage=exc.usage) from None
    for note in notes:
        warnings.warn(registry.in_python_words(note), NdcgWarning, stacklevel=3)
    return result


# --- compare's bookkeeping ----------------------------------------------------------------------

def add_run_notes(notes: list, name: str, said: list) -> None:
    """Add run `name`'s warnings `said` to `notes`, each once, named by the run."""
    notes += [f"run {name}: {note}" for note in said if f"run {name}: {note}" not in notes]


def compare_info(names: list, summaries: list, pairs: list, paired: int, everyone: int,
                 metrics: list, chosen: dict) -> dict:
    """compare's info: each run's counts of users (from its summary), the paired users and how
    many were left out (of `everyone`), the baseline (None with all_pairs), the pairs by name,
    the metrics and compare's own options (`chosen`: all_pairs, test, ci, alpha, min_users,
    n_resamples, seed, by)."""
    return {"runs": {name: {key: summary[key] for key in summary if key.startswith("users")}
                     for name, summary in zip(names, summaries)},
            "users": paired, "users_left_out": everyone - paired,
            "baseline": None if chosen["all_pairs"] else names[pairs[0][0]],
            "pairs": [(names[i], names[j]) for i, j in pairs], "test": chosen["test"],
            "metrics": metrics, "ci": chosen["ci"], "alpha": chosen["alpha"],
            "min_users": chosen["min_users"], "n_resamples": chosen["n_resamples"],
            "seed": chosen["seed"], "by": chosen["by"]}


def user_in_two_files(what: str, user, files: int, first: str, second: str) -> str:
    """Recommendations read from several files, a user's rows in two of them: the message."""
    return (f"{what}: user {user} appears in more than one of its {files} files ({first} and "
            f"{second}): if they are two runs, evaluate each on its own; if they are parts of "
            f"one run, give each user's rows in one file")


# --- segments and plots -----------------------------------------------------------------------------------

def shown_metrics(columns: list, summary: dict) -> list:
    """The per-user columns that eval's --segments and --plot show: the summary's metrics."""
    return [c for c in columns if c in summary]


def not_in_segments(what: str, theirs, ours) -> str:
    """No evaluated user is in the segment table `what`: almost always mismatched ids (theirs
    and ours: the smallest user id of each side, as text)."""
    return (f"no evaluated user is in the {what} (user ids there look like {theirs!r}, here like "
            f"{ours!r}): check --user-col and that the files use the same ids")


def add_per_run(rows: list, summary: dict, per_segment: dict, everyone: str) -> list:
    """Add to the per-segment rows (segment, users, means) the summary's per-run metrics
    (coverage, gini, entropy): the summary's value on the row of every user (`everyone`), each
    segment's from `per_segment` ({segment: {name: value}}; None where it has none). Returns
    their names, in the summary's order."""
    names = [name for name in summary if metric_names.is_metric(name)
             and metric_names.per_run(name.partition("@")[0])]
    for name in names:
        for row in rows:
            row[name] = (summary[name] if row["segment"] == everyone
                         else per_segment.get(row["segment"], {}).get(name))
    return names
