"""The one option registry: every option's name, default, allowed values, help and check, in
PARAMS, and the checks themselves.

PARAMS drives the click options of `ndcg-duck eval` and `ndcg-duck compare` (cli/common.py's
click_option), the keyword arguments of `evaluate()` and the checked `Options` it builds,
compare()'s checks (comparison/common.py check_options) and the list of compare's own options
the Spark engine takes (group 'compare'), and the named arguments the SQL macros get
(statements.py writes them). Adding an option is adding one `Param` below (and, for a metric
option, using it in the SQL). tests/doors/test_options.py checks that the SQL macros' own lists of
allowed values (their `ndcg_option(...)` calls) agree with `choices` here, and that every click
option of eval and compare is a Param.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Optional, Union

from .cutoffs import LARGEST, parse_cutoffs
from .errors import InputError
from .metrics import RESERVED, check_names
from . import metrics_sql as own_sql
from .objectstore import check_endpoint

FORMATS = ("parquet", "csv", "json", "trec", "recbole")
USER_COL = "user_id"  # the user column when --user-col (user_col=) is not given


def user_col(settings: dict) -> str:
    """The user column of a run's settings (--user-col, user_col=), else USER_COL."""
    return settings.get("user_col") or USER_COL


# compare's paired tests, its corrections of p-values, and how it prints (comparison/)
TESTS = ("t", "randomization", "bootstrap", "none")
CORRECTIONS = ("holm", "bonferroni", "none")
COMPARE_FORMATS = ("table", "json", "csv", "parquet", "markdown", "latex")
# how eval prints its summary (cli/eval.py; trec: report/trec.py, markdown and latex:
# report/tables.py)
EVAL_FORMATS = ("table", "json", "csv", "trec", "markdown", "latex")
# eval's intervals of means (--ci-method; evaluation/intervals.py)
CI_METHODS = ("t", "bootstrap")


# --- values that need more than a list of choices -----------------------------------------------

def parse_gain_map(value: Union[str, Mapping, Iterable, None]) -> Optional[tuple]:
    """A gain map from "LEVEL=GAIN,..." text, a {level: gain} mapping or (level, gain) pairs, as a
    tuple of (level, gain) float pairs; None or an empty mapping means no map."""
    if value is None:
        return None
    if isinstance(value, str):
        pairs = [_gain_pair(piece) for piece in value.split(",")]
    else:
        items = value.items() if isinstance(value, Mapping) else value
        pairs = [_gain_pair(pair) for pair in items]
        if not pairs:
            return None
    levels = [level for level, _ in pairs]
    for level in levels:
        if levels.count(level) > 1:
            raise InputError(f"gain map lists relevance level {level:g} twice", usage=True)
    return tuple(pairs)


def _gain_pair(piece) -> tuple:
    """One LEVEL=GAIN piece (text) or (level, gain) pair, as two finite floats."""
    try:
        if isinstance(piece, str):
            level, gain = piece.split("=")
        else:
            level, gain = piece
        level, gain = _number(level), _number(gain)
    except (TypeError, ValueError):
        raise InputError(f"gain map piece {piece!r} is not LEVEL=GAIN with two numbers, "
                         f"as in 1=3,2=9,4=4.5", usage=True) from None
    return level, gain


def _number(text) -> float:
    if isinstance(text, bool):
        raise ValueError(text)
    number = float(text.strip() if isinstance(text, str) else text)
    if not math.isfinite(number):
        raise ValueError(text)
    return number


def whole(name: str, value, minimum: int = 1, maximum: Optional[int] = LARGEST) -> int:
    """The rule for an integer option (kind 'int'): a real int >= minimum, <= maximum if any."""
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise InputError(f"{name} {value!r} is not an integer >= {minimum}", usage=True)
    if maximum is not None and value > maximum:
        raise InputError(f"{name}={value!r} is beyond the largest, {maximum}", usage=True)
    return value


def level(name: str, value):
    """The rule for a level (kind 'level': compare's alpha and ci): a number strictly between
    0 and 1."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < 1:
        raise InputError(f"{name} {value!r} is not a number between 0 and 1", usage=True)
    return value


def flag(name: str, value) -> bool:
    """The one rule for an on/off keyword (judged_only=, unique_judgments=, evaluate()'s
    per_user=): a real bool, never a text or a number that reads as one."""
    if not isinstance(value, bool):
        raise InputError(f"{name} {value!r} is not True or False", usage=True)
    return value


def _relevance_level(value):
    if value is None:
        return None
    try:
        return _number(value)
    except (TypeError, ValueError):
        raise InputError(f"min_relevance {value!r} is not a number", usage=True) from None


def _share(value):
    if value is None:  # not given: --beyond-as's, else BEYOND_DEFAULTS' (Options)
        return None
    try:
        share = _number(value)
    except (TypeError, ValueError):
        share = None
    if share is None or not 0 <= share <= 1:
        raise InputError(f"head_share {value!r} is not a number between 0 and 1", usage=True)
    return share


def _open_share(name: str, value):
    """A share strictly between 0 and 1 (test_share)."""
    try:
        share = _number(value)
    except (TypeError, ValueError):
        share = None
    if share is None or not 0 < share < 1:
        raise InputError(f"{name} {value!r} is not a number between 0 and 1 (both left out)",
                         usage=True)
    return share


def _finite(name: str, value):
    try:
        return _number(value)
    except (TypeError, ValueError):
        raise InputError(f"{name} {value!r} is not a finite number", usage=True) from None


def _persistence(value):
    try:
        p = _number(value)
    except (TypeError, ValueError):
        p = None
    if p is None or not 0 < p < 1:
        raise InputError(f"rbp_p {value!r} is not a number between 0 and 1 (both left out)",
                         usage=True)
    return p


def _beta(value):
    try:
        beta = _number(value)
    except (TypeError, ValueError):
        beta = None
    if beta is None or not beta >= 0:
        raise InputError(f"set_f_beta {value!r} is not a number >= 0", usage=True)
    return beta


# --by's names that group users from the data already given instead of a --segments file
# (report/segments.py Cohorts)
COHORTS = ("user-activity", "item-popularity")


def _activity_cuts(value):
    """--activity-cuts: "5,20,100" or a list of integers, as a tuple of increasing integers >= 2
    (the first count of each group after 1-...), or None."""
    if value is None:
        return None
    pieces = value.split(",") if isinstance(value, str) else value
    try:
        cuts = tuple(int(p.strip()) if isinstance(p, str) else p for p in pieces)
    except (TypeError, ValueError):
        cuts = None
    if not cuts or any(isinstance(c, bool) or not isinstance(c, int) for c in cuts) or \
            cuts[0] < 2 or any(b <= a for a, b in zip(cuts, cuts[1:])):
        shown = value if isinstance(value, str) else ",".join(map(str, value)) \
            if isinstance(value, (list, tuple)) else repr(value)
        raise InputError(f"--activity-cuts {shown}: give increasing whole numbers >= 2, each the "
                         f"first count of a group, as in 5,20,100 (groups 1-4, 5-19, 20-99, "
                         f"100+)", usage=True)
    return cuts


def _utility_weights(value):
    """utility_weights (--utility-weights): 4 finite numbers, as text 'W1,W2,W3,W4' or a list,
    as a tuple of floats."""
    pieces = value.split(",") if isinstance(value, str) else value
    try:
        weights = tuple(_number(piece) for piece in pieces)
    except (TypeError, ValueError):
        weights = ()
    if len(weights) != 4:
        raise InputError(f"utility_weights {value!r} is not 4 numbers W1,W2,W3,W4 (the worth of a "
                         f"relevant and of a nonrelevant item ranked, then not ranked)",
                         usage=True)
    return weights


def _metric_names(value):
    """The metric names given (-m), checked: known, with a cutoff where one may be (metrics.py)."""
    return check_names(value)


def _metrics_sql(value):
    """--metrics-sql: the file read and checked (metrics_sql.py), or None."""
    return own_sql.check(value, RESERVED)


def _existing_dir(value):
    if value is None:
        return None
    if not Path(value).is_dir():
        raise InputError(f"--temp-dir {str(value)!r} is not an existing directory: create it "
                         f"first", usage=True)
    return str(value)


def _text(name: str):
    def check(value):
        if value is not None and not isinstance(value, (str, Path)):
            raise InputError(f"{name} {value!r} is not text", usage=True)
        return None if value is None else str(value)
    return check


# --- the beyond-accuracy metrics as each peer defines them (docs/beyond-peers.md) ----------------
# One table: ndcg-duck's definitions (BEYOND_DEFAULTS), and what --beyond-as PEER changes. An
# option given beside --beyond-as wins over the preset's value.
BEYOND_DEFAULTS = {"beyond_users": "evaluated", "head_share": 0.2, "popularity_by": "users",
                   "popularity_unseen": "zero",
                   "tail_rule": "catalogue", "novelty_by": "users",
                   "novelty_smoothing": "add_one", "novelty_unseen": "count",
                   "catalogue_size": "items", "gini_items": "catalogue", "gini_divisor": "n",
                   "gini_orientation": "inequality", "entropy_base": "2",
                   "entropy_divisor": "none", "ild_divisor": "pairs", "ild_short": "skip"}
BEYOND_PEERS = {
    # RecBole's recbole/evaluator/metrics.py: AveragePopularity and TailPercentage count
    # interactions, TailPercentage's tail_ratio 0.1, ItemCoverage and GiniIndex's num_items
    # has the padding item, ShannonEntropy in nats over the items shown
    "recbole": {"popularity_by": "interactions", "tail_rule": "train_tail", "head_share": 0.9,
                "catalogue_size": "items_plus_one", "entropy_base": "e",
                "entropy_divisor": "shown"},
    # Elliot's ARP, APLT (Popularity.get_short_head: 80% of the interactions), GiniIndex
    # (1 - over n - 1)
    "elliot": {"tail_rule": "short_head", "head_share": 0.8, "gini_divisor": "n_minus_1",
               "gini_orientation": "equality"},
    # RecTools' MeanInvUserFreq (cold items as one user), AvgRecPopularity (interactions),
    # IntraListDiversity (0 for a one-item list); RecTools, Evidently and Microsoft
    # recommenders count every user of the recommendations
    "rectools": {"beyond_users": "recommended", "novelty_smoothing": "none",
                 "novelty_unseen": "one", "popularity_by": "interactions", "ild_short": "zero"},
    # Evidently's NoveltyMetric and PopularityBias (unseen items dropped), get_gini (shown items,
    # n - 1), DiversityMetric (the pairs' sum over the list's items)
    "evidently": {"beyond_users": "recommended", "novelty_smoothing": "none",
                  "novelty_unseen": "skip", "popularity_unseen": "skip", "gini_items": "shown",
                  "gini_divisor": "n_minus_1", "ild_divisor": "items", "ild_short": "zero"},
    # LensKit's ListGini is ndcg-duck's gini
    "lenskit": {},
    # Microsoft recommenders' novelty (interactions, unseen items 0)
    "msrec": {"beyond_users": "recommended", "novelty_by": "interactions",
              "novelty_smoothing": "none", "novelty_unseen": "zero"},
}


def beyond_settings(given: Mapping) -> dict:
    """The beyond-accuracy options from `given` (each None when not given, and beyond_as): an
    option given wins, then beyond_as's preset, then BEYOND_DEFAULTS. A usage error for
    --novelty-unseen count without --novelty-smoothing add_one, and for --beyond-users
    recommended with --judged-only."""
    preset = BEYOND_PEERS.get(given.get("beyond_as")) or {}
    settings = {name: given.get(name) if given.get(name) is not None else
                preset.get(name, default) for name, default in BEYOND_DEFAULTS.items()}
    if settings["novelty_unseen"] == "count" and settings["novelty_smoothing"] != "add_one":
        raise InputError("--novelty-unseen count needs --novelty-smoothing add_one: an item "
                         "unseen in train would score -log2(0), infinite; choose another "
                         "--novelty-unseen (one, skip or zero)", usage=True)
    if settings["beyond_users"] == "recommended" and given.get("judged_only"):
        raise InputError("--judged-only takes the unjudged items out of each list, so a user "
                         "without judgments has none: --beyond-users recommended (or a "
                         "--beyond-as preset that sets it) cannot count them; leave out one, "
                         "or give --beyond-users evaluated", usage=True)
    return settings


# --- the registry --------------------------------------------------------------------------------

@dataclass(frozen=True)
class Param:
    """One option. `name` is the Python keyword (and the SQL argument unless `sql_name` says
    otherwise) and the name its click value arrives under; `flag` the CLI spelling (default:
    --name-with-dashes). `group` places it: 'metric' options are what `Options` holds;
    'beyond', 'columns', 'formats' and 'engine' go to evaluate() too; 'spark' and 'output' are
    eval's command line's own; 'compare' options are compare()'s (and the Spark engine's
    compare options); 'compare_cli' ones compare's command line's own; 'extras' (--segments,
    --by, --plot) are eval's and compare's; 'split' ones `ndcg-duck split`'s (and, named
    without split_, split()'s keywords). `python`: a keyword of evaluate(). `sql` names the
    macro argument list it joins ('scores': ndcg_user_scores and ndcg_user_metrics; 'metrics':
    ndcg_user_metrics only; 'judgments': ndcg_judgments, the judgments edge; 'evaluated':
    ndcg_evaluated; None: not passed as is); statements.py writes
    the arguments. `choices` are the allowed values (None among them: not given); `check`
    turns a given value into the checked one or raises InputError (kinds 'int' and 'level'
    have theirs: `whole`, from `minimum` to `maximum`, and `level`); `shown` is the default as
    help shows it when `default` is None."""

    name: str
    group: str
    help: str
    default: Any = None
    choices: tuple = ()
    # 'value', 'int' (minimum..maximum), 'float', 'level' (0 < x < 1), 'flag' (on/off),
    # 'multiple' (-k, repeated)
    kind: str = "value"
    check: Optional[Callable] = None
    sql: Optional[str] = None
    sql_name: Optional[str] = None
    minimum: int = 1
    maximum: Optional[int] = LARGEST
    flag: Optional[str] = None
    short: Optional[str] = None
    metavar: Optional[str] = None
    shown: Optional[str] = None
    cli: bool = True
    python: bool = True

    @property
    def option(self) -> str:
        """How the CLI spells it."""
        return self.flag or "--" + self.name.replace("_", "-")

    def checked(self, value):
        if self.choices and value not in self.choices:
            allowed = ", ".join(c for c in self.choices if c is not None)
            raise InputError(f"{self.name} {value!r} is not one of: {allowed}", usage=True)
        if self.kind == "flag":
            flag(self.name, value)
        if self.name == "k":  # its check names the cutoff; Python's caller gave k=
            try:
                return self.check(value)
            except InputError as exc:
                raise InputError(f"k={value!r}: {exc}", usage=True) from None
        if self.check:
            return self.check(value)
        if value is None and self.default is None:  # an optional number not given
            return None
        if self.kind == "int":
            return whole(self.name, value, self.minimum, self.maximum)
        if self.kind == "level":
            return level(self.name, value)
        return value


COLUMN_HELP = "(one name serves both files)."

PARAMS = (
    # what to compute
    Param("k", "metric", default=10, kind="multiple", check=parse_cutoffs, sql="scores",
          sql_name="ks", flag="-k", metavar="K[,K...]", shown="10",
          help="Cutoff: an integer >= 1, 'all' (no cutoff) or 'trec' (trec_eval's "
               "5,10,15,20,30,100,200,500,1000). Repeat or use commas. Default 10."),
    Param("metrics", "metric", default=("ndcg",), kind="multiple", check=_metric_names,
          flag="--metric", short="-m", metavar="NAME[@K][,...]", shown="ndcg",
          help="What to compute: ndcg, dcg, idcg, cg, ncg, precision, recall, hit_rate, mrr, "
               "map, r_precision, num_rel, num_rel_ret, bpref, rbp, judged, err, num_ret, "
               "num_nonrel_judged_ret, set_precision, set_relative_precision, set_map, set_f, "
               "relative_precision, iprec_11pt_avg, gm_map, gm_bpref, iprec_at_recall[_X], "
               "rprec_mult[_X] (ir_measures' P, R, Success, RR, AP, nDCG, Rprec, Bpref, RBP, IPrec@X, "
               "Judged, NCG, ERR, NumRet, SetP, SetAP, SetF and trec_eval's set_P, relative_P, "
               "11pt_avg "
               "too; any case), trec_eval's infAP, Rndcg, ndcg_rel, rbp_resid, utility, unj, G, "
               "binG (out as infap, rndcg, ndcg_rel, rbp_resid, utility, unj, g, bing), "
               "and beyond "
               "accuracy coverage, gini, entropy, coverage_count, personalization (with --items "
               "or --train), novelty, popularity, tail (with --train) and ild (with --items); "
               "--beyond-as PEER computes them as RecBole, Elliot, ... do. A name without @K "
               "takes the -k "
               "cutoffs; mrr and map without @K have none. all_trec: trec_eval's all_trec "
               "measures that ndcg-duck has, at trec_eval's cutoffs; official: its default set. "
               "Repeat or use commas. "
               "Default ndcg. "
               "--gain, --gain-map, --idcg-cutoff and --ties average apply to ndcg, dcg, idcg, cg "
               "and ncg only; err reads grades 0-4 (gdeval's), judged any judgment; the others "
               "count relevant items (relevance > 0, or >= --min-relevance), tied items in "
               "trec_eval's order."),
    Param("metrics_sql", "metric", check=_metrics_sql, metavar="FILE",
          help="Your own measures: a file of DuckDB macros ndcg_metric_NAME(gains, k, ...) over "
               "each user's gains, relevant_ranks, judged_ranks, num_relevant, ideal, length, k "
               "and depth, returning a number; then -m NAME@K computes it (docs/own-measures.md)."),
    Param("gain", "metric", default="linear", choices=("linear", "exponential", "binary"),
          sql="judgments", help="Gain of a relevance value: rel, 2^rel - 1, or 1 if rel > 0."),
    Param("gain_map", "metric", check=parse_gain_map, sql="judgments",
          metavar="LEVEL=GAIN[,...]",
          help="Gains for listed relevance levels, e.g. 1=3,2=9,4=4.5 (trec_eval's "
               "ndcg.1=3,...); other levels gain by --gain. A level that never occurs in the "
               "judgments is warned about on stderr."),
    Param("ties", "metric", default="trec", choices=("trec", "average"), sql="scores",
          help="Equal scores: order by item id descending (trec_eval), or give each tied item "
               "the mean discount of the tie (scikit-learn). Scores only."),
    Param("min_relevance", "metric", kind="float", check=_relevance_level, sql="judgments",
          metavar="R",
          help="Judgments below R are not relevant: gain 0, out of the ideal list (trec_eval -l, "
               "ranx rel_lvl). Default: relevance > 0 is relevant."),
    Param("judged_only", "metric", default=False, kind="flag", sql="scores",
          help="Take unjudged items (no judgment, or a negative one) out of each ranking before "
               "scoring (trec_eval -J)."),
    Param("exclude_seen", "metric", default=False, kind="flag",
          help="Take each user's --train items out of their ranking before the cut at k (the "
               "items below move up), as most recommender libraries evaluate. Without it, "
               "recommended items seen in train count as shown, and the run warns about them."),
    Param("missing", "metric", default="zero", choices=("zero", "skip"), sql="evaluated",
          help="Users in RELEVANCE without recommendations: score 0, or leave out."),
    Param("empty", "metric", default="zero", choices=("zero", "skip"), sql="evaluated",
          help="Users whose ideal DCG is 0 (nothing relevant): score 0, or leave out. The "
               "summary counts them either way."),
    Param("idcg_cutoff", "metric", default="k", choices=("k", "list"), sql="scores",
          help="Cut the ideal list at k, or at min(k, length of the user's ranking)."),
    Param("max_depth", "metric", kind="int", metavar="N",
          help="Only the first N items of each ranking count."),
    Param("unique_judgments", "metric", default=False, kind="flag", sql="judgments",
          help="The relevance file has at most one row per (user, item): skip the check for "
               "repeated judgments (faster on large files; a repeat would count twice)."),
    Param("head_share", "metric", kind="float", check=_share, metavar="SHARE", shown="0.2",
          help="tail@K: the head's share (--tail-rule: of the catalogue's items, of train's "
               "interactions, or of train's items); tail@K is the share of each top K in the "
               "tail. Default 0.2 (--beyond-as may set another)."),
    # the beyond-accuracy metrics as each peer defines them (docs/beyond-peers.md): None is 'not
    # given', then --beyond-as's value (BEYOND_PRESETS), else BEYOND_DEFAULTS'
    Param("beyond_as", "metric", choices=(None,) + tuple(sorted(BEYOND_PEERS)), metavar="PEER",
          help="Compute the beyond-accuracy metrics as recbole, elliot, rectools, evidently, "
               "lenskit or msrec (Microsoft recommenders) does: sets the options below (an "
               "option given beside it wins; docs/beyond-peers.md). lenskit: ndcg-duck's own "
               "definitions."),
    Param("beyond_users", "metric", choices=(None, "evaluated", "recommended"),
          shown="evaluated", metavar="USERS",
          help="Whose lists the beyond-accuracy metrics count: the evaluated users (judged, "
               "with recommendations; RecBole, Elliot), or every user of the recommendations "
               "(RecTools, Evidently, Microsoft recommenders). Without RELEVANCE every user of "
               "the recommendations counts either way."),
    Param("popularity_by", "metric", choices=(None, "users", "interactions"), shown="users",
          help="popularity@K and --tail-rule's ranking: an item's count of distinct train users "
               "or of train rows (RecBole, RecTools)."),
    Param("popularity_unseen", "metric", choices=(None, "zero", "skip"), shown="zero",
          help="popularity@K: an item unseen in train counts 0, or is left out of the mean "
               "(Evidently)."),
    Param("tail_rule", "metric", choices=(None, "catalogue", "short_head", "train_tail"),
          shown="catalogue",
          help="tail@K's tail: the catalogue items outside the --head-share most popular; the "
               "train items outside the most popular that hold --head-share of the "
               "interactions (Elliot's short head); or the 1 - --head-share least popular train "
               "items (RecBole's tail_ratio). Under the last two an item unseen in train is not "
               "tail."),
    Param("novelty_by", "metric", choices=(None, "users", "interactions"), shown="users",
          help="novelty@K: an item's share of the distinct train users, or of the train rows "
               "(Microsoft recommenders)."),
    Param("novelty_smoothing", "metric", choices=(None, "add_one", "none"), shown="add_one",
          help="novelty@K: -log2((pop + 1) / (U + 1)), or -log2(pop / U) (RecTools, Evidently, "
               "Microsoft recommenders)."),
    Param("novelty_unseen", "metric", choices=(None, "count", "one", "skip", "zero"),
          shown="count",
          help="novelty@K of an item unseen in train: pop 0 in the formula (with add_one only), "
               "pop 1 (RecTools), left out of the mean (Evidently), or 0 (Microsoft "
               "recommenders)."),
    Param("catalogue_size", "metric", choices=(None, "items", "items_plus_one"), shown="items",
          help="coverage@K and gini@K's n: the catalogue's items, or one more (RecBole's padding "
               "item)."),
    Param("gini_items", "metric", choices=(None, "catalogue", "shown"), shown="catalogue",
          help="gini@K over every catalogue item (never-shown ones as zeros), or over the shown "
               "items only (Evidently)."),
    Param("gini_divisor", "metric", choices=(None, "n", "n_minus_1"), shown="n",
          help="gini@K's sum over n, or over n - 1 (Elliot, Evidently)."),
    Param("gini_orientation", "metric", choices=(None, "inequality", "equality"),
          shown="inequality",
          help="gini@K: 0 when every item is shown equally often, or 1 - that (Elliot)."),
    Param("entropy_base", "metric", choices=(None, "2", "e"), shown="2",
          help="entropy@K in bits, or in nats (RecBole)."),
    Param("entropy_divisor", "metric", choices=(None, "none", "shown"), shown="none",
          help="entropy@K as it is, or divided by the number of items shown (RecBole)."),
    Param("ild_divisor", "metric", choices=(None, "pairs", "items"), shown="pairs",
          help="ild@K: the mean over a list's pairs, or their sum over its items (Evidently)."),
    Param("ild_short", "metric", choices=(None, "skip", "zero"), shown="skip",
          help="ild@K of a one-item list: none, or 0, counted in the mean (RecTools, "
               "Evidently)."),
    Param("rbp_p", "metric", default=0.9, kind="float", check=_persistence, sql="metrics",
          metavar="P",
          help="rbp: the persistence, the chance of going on to the next item (trec_eval's "
               "rbp.p). Default 0.9."),
    Param("set_f_beta", "metric", default=1.0, kind="float", check=_beta, sql="metrics",
          metavar="B",
          help="set_f: how much more recall weighs than precision (trec_eval's set_F.B, "
               "ir_measures' SetF(beta=B)). Default 1: their harmonic mean."),
    Param("utility_weights", "metric", default="1,-1,0,0", check=_utility_weights,
          sql="metrics", metavar="W1,W2,W3,W4",
          help="utility: the worth of each relevant and each nonrelevant item ranked, then of "
               "each relevant and each nonrelevant item not ranked (trec_eval's "
               "utility.W1,W2,W3,W4). Default 1,-1,0,0."),
    Param("num_docs", "metric", default=0, kind="int", minimum=0, sql="metrics", metavar="N",
          help="utility: the documents in the collection, for its fourth weight (trec_eval's "
               "-N). Default 0."),
    Param("duplicates", "metric", default="error", choices=("error", "first"),
          help="An item twice in one ranking: stop with an error, or keep its first occurrence "
               "(later items move up)."),
    # where the columns are
    Param("user_col", "columns", check=_text("user_col"), shown=USER_COL,
          help="User id column " + COLUMN_HELP),
    Param("item_col", "columns", check=_text("item_col"), shown="item_id",
          help="Item id column, long layouts " + COLUMN_HELP),
    Param("items_col", "columns", check=_text("items_col"), shown="items",
          help="List-of-item-ids column, nested layout " + COLUMN_HELP),
    Param("rank_col", "columns", check=_text("rank_col"), shown="rank",
          help="Rank column, long recommendations, smallest first " + COLUMN_HELP),
    Param("score_col", "columns", check=_text("score_col"), shown="score",
          help="Score column, long recommendations, highest first " + COLUMN_HELP),
    Param("relevance_col", "columns", check=_text("relevance_col"), shown="relevance",
          help="Relevance column, long judgments " + COLUMN_HELP),
    # one file's own name for the user or item column, where the two files name it differently
    # (inputs.Columns.renames): the column is read under the shared name (--user-col, --item-col)
    Param("recs_user_col", "columns", check=_text("recs_user_col"), metavar="NAME",
          help="User id column of RECS only (overrides --user-col there)."),
    Param("recs_item_col", "columns", check=_text("recs_item_col"), metavar="NAME",
          help="Item id column of RECS only (overrides --item-col there)."),
    Param("rels_user_col", "columns", check=_text("rels_user_col"), metavar="NAME",
          help="User id column of RELEVANCE only (overrides --user-col there)."),
    Param("rels_item_col", "columns", check=_text("rels_item_col"), metavar="NAME",
          help="Item id column of RELEVANCE only (overrides --item-col there)."),
    # what the beyond-accuracy metrics read besides the rankings (evaluation/beyond.py)
    Param("train", "beyond", metavar="FILE",
          help="The interactions the system learned from: rows of user and item (--user-col, "
               "--item-col; other columns ignored), Parquet, CSV or JSON. novelty, popularity "
               "and tail count each item's train users; without --items its items are the "
               "catalogue."),
    Param("items", "beyond", metavar="FILE",
          help="The catalogue, one row per item (--item-col): coverage, gini and entropy count "
               "within it; ild reads its embedding column (a list of numbers), else its "
               "category column (a text or a list of texts)."),
    # what the files are
    Param("recs_format", "formats", choices=(None,) + FORMATS,
          help="Format of RECS when its extension does not say; trec: a TREC run (recognised "
               "by its content when the name has no known extension); recbole: a RecBole "
               "atomic file (.inter: tab-separated, headers such as user_id:token)."),
    Param("rels_format", "formats", choices=(None,) + FORMATS,
          help="Format of RELEVANCE when its extension does not say; trec: TREC qrels "
               "(recognised by content too); recbole: a RecBole .inter file."),
    # how DuckDB runs
    Param("threads", "engine", kind="int", metavar="N",
          help="DuckDB worker threads (the connection's setting is restored after)."),
    Param("memory_limit", "engine", check=_text("memory_limit"), metavar="SIZE",
          help="Memory DuckDB may use before it spills to disk, e.g. 4GB."),
    Param("temp_dir", "engine", check=_existing_dir, metavar="DIR",
          help="An existing directory where DuckDB spills what does not fit in --memory-limit."),
    Param("batch_users", "engine", kind="int", metavar="N",
          help="Evaluate at most N users per query, by ranges of user ids (default: as many as "
               "the memory limit allows; at most 1000 batches, so N may grow)."),
    Param("s3_endpoint", "engine", check=check_endpoint, metavar="URL",
          help="The S3-compatible store that s3:// inputs and outputs are on, as HOST[:PORT] or "
               "http(s)://HOST[:PORT] (default: AWS S3, or AWS_ENDPOINT_URL). Credentials come "
               "from the AWS environment variables or profile."),
    # where to run: the default engine, or Apache Spark (ndcg_duck/spark/)
    Param("engine", "spark", default="duckdb", choices=("duckdb", "spark"), python=False,
          help="Where to evaluate: DuckDB in this process, or Apache Spark (each worker runs the "
               "same DuckDB macros on its users; needs ndcg-duck[spark] and Java 17+)."),
    Param("spark_master", "spark", default="local[*]", python=False, metavar="URL",
          shown="local[*]",
          help="With --engine spark: the Spark master (local[N], spark://HOST:PORT, yarn, "
               "k8s://...)."),
    Param("spark_conf", "spark", default=(), kind="multiple", python=False, metavar="KEY=VALUE",
          check=lambda pairs: tuple(pairs),
          help="With --engine spark: a Spark setting, e.g. spark.executor.memory=8g. Repeat "
               "for more."),
    # the command line's own
    Param("per_user", "output", metavar="OUT", python=False,
          help="Write one row per evaluated user to OUT (.parquet, .csv, .json, .jsonl), or to "
               "stdout with '-' (CSV, or a JSON array with --format json; the summary then goes "
               "to stderr). With --engine spark, OUT/ (ending in /) or a URI is a directory of "
               "Parquet part files that Spark writes."),
    Param("per_item", "output", metavar="OUT", python=False,
          help="Write one row per item and cutoff to OUT (.parquet, .csv, .json, .jsonl): how "
               "many evaluated users were shown it, its share of exposure, for how many it is "
               "relevant and was a hit, and with --train its train users."),
    Param("format", "output", default="table", choices=EVAL_FORMATS,
          python=False,
          help="How to print the summary (and the per-user table with --per-user -). trec: "
               "trec_eval's lines (measure, query, value; runid, num_q and the means as "
               "query 'all'; with --per-user -, each user's lines first, as trec_eval -q) and "
               "its names (ndcg_cut_10, P_10, map, ...) for the measures it has. markdown, "
               "latex: a table for a paper, one row (the run), a column per metric."),
    # eval's intervals of the means (evaluation/intervals.py; --seed and --n-resamples are
    # compare's, below)
    Param("eval_ci", "intervals", flag="--ci", kind="level", python=False, metavar="LEVEL",
          help="Add a confidence interval at this level (e.g. 0.95) to each mean over users, "
               "per segment too (needs scipy: pip install 'ndcg-duck[compare]'). A t interval "
               "of a metric within [0, 1] is clipped to it, and the output says so."),
    Param("ci_method", "intervals", choices=(None,) + CI_METHODS, python=False, shown="t",
          help="With --ci: Student's t interval, or the percentile bootstrap of the users "
               "(--n-resamples, --seed)."),
    Param("quiet", "output", default=False, kind="flag", python=False,
          help="No progress on stderr (progress shows only on a terminal, after 2 seconds)."),
    # eval's and compare's: the results by segment, and drawn (cli/extras.py, report/)
    Param("segments", "extras", metavar="FILE", python=False,
          help="A table of users and their segment (Parquet, CSV or JSON): every result is also "
               "given per segment. Users it does not list, or lists with a NULL, empty or blank "
               "segment, are '(unknown)'."),
    Param("by", "extras", metavar="COLUMN", python=False,
          help="The segment column of --segments; or, without --segments, user-activity: users "
               "grouped by their number of --train interactions (--groups N or "
               "--activity-cuts), users absent from train 'cold'; or item-popularity: "
               "each accuracy metric over the relevant items of each popularity group only "
               "(head and tail by --head-share, or --groups N), and each group's exposure."),
    Param("groups", "extras", kind="int", minimum=2, maximum=None, metavar="N", python=False,
          help="With --by user-activity (or item-popularity): N groups of about as many train "
               "users (items) each, by quantiles of their counts, each named by its range."),
    Param("activity_cuts", "extras", check=_activity_cuts, metavar="N,N,...", python=False,
          help="With --by user-activity: the first count of each group after the first, "
               "increasing: 5,20,100 makes the groups 1-4, 5-19, 20-99 and 100+."),
    Param("plot", "extras", metavar="OUT.png", python=False,
          help="Draw a PNG picture of the per-user values (needs the compare extra: pip install "
               "'ndcg-duck[compare]')."),
    # `ndcg-duck split` (splitting/): the protocol, the columns it reads, the outputs
    Param("test_share", "split", python=False, kind="float", metavar="S",
          check=lambda v: _open_share("test_share", v),
          help="Per-user holdout: this share of each user's interactions goes to test, rounded "
               "down and at least 1 (0.2 of 12 is 2)."),
    Param("test_last", "split", python=False, kind="int", metavar="N",
          help="Per-user holdout: each user's last N interactions go to test (--test-last 1 "
               "with --by time: leave-one-out)."),
    Param("split_by", "split", python=False, default="time", choices=("time", "random"),
          flag="--by",
          help="The order of each user's interactions whose last ones go to test: by time "
               "(--time-col; ties by item id, then by the whole row), or random (a hash of "
               "--seed, user and item: the same split on any number of threads)."),
    Param("split_seed", "split", python=False, kind="int", minimum=0, maximum=None, flag="--seed",
          metavar="N", shown="0", help="The seed of --by random."),
    Param("time_cut", "split", python=False, check=_text("time_cut"), metavar="T",
          help="Global time cut instead of a per-user holdout: interactions before T (a value "
               "of --time-col, e.g. 1998-03-01 or 889000000) go to train, the others to test."),
    Param("time_col", "split", python=False, check=_text("time_col"), shown="timestamp",
          metavar="COLUMN",
          help="Time column, read by --by time and --time-cut (a number, date or timestamp)."),
    Param("threshold", "split", python=False, kind="float", check=lambda v: _finite("threshold", v),
          metavar="R",
          help="Make the relevance column (--relevance-col) binary: 1 when >= R, else 0. "
               "Default: every column is carried as it is."),
    Param("min_interactions", "split", python=False, kind="int", metavar="N",
          help="Users need N interactions (default: what the holdout needs, --test-last + 1 "
               "or 2); --short-users says what happens to the others."),
    Param("short_users", "split", python=False, default="error", choices=("error", "train", "drop"),
          help="Users with fewer than --min-interactions: stop with an error naming one, keep "
               "all their interactions in train, or leave them out of both files."),
    Param("out_train", "split", python=False, metavar="FILE",
          help="Where to write the train rows (.parquet, .csv, .json, .jsonl)."),
    Param("out_test", "split", python=False, metavar="FILE",
          help="Where to write the test rows (.parquet, .csv, .json, .jsonl)."),
    # how compare compares: compare()'s keywords (comparison/compare.py), and the options of
    # compare the Spark engine takes (spark/compare.py)
    Param("baseline", "compare", metavar="NAME", python=False,
          help="The run the others are compared with (default: the first)."),
    Param("all_pairs", "compare", default=False, kind="flag", python=False,
          help="Compare every pair of runs instead."),
    Param("test", "compare", default="t", choices=TESTS, python=False,
          help="Paired test: t-test, randomization (sign flips), bootstrap, or none. With "
               "--engine spark the bootstrap is a Poisson bootstrap and the randomization "
               "draws per stratum of users: reproducible on any partitioning, the same within "
               "Monte Carlo error, not draw for draw (docs/compare.md)."),
    Param("correction", "compare", choices=(None,) + CORRECTIONS, python=False,
          help="Correction of p-values over every test made (runs x metrics x segments). "
               "Default: holm when there is more than one test."),
    Param("n_resamples", "compare", default=10000, kind="int", maximum=None, python=False,
          help="Resamples of the randomization and bootstrap tests (and of eval's --ci-method "
               "bootstrap)."),
    Param("seed", "compare", default=42, kind="int", minimum=0, maximum=None, python=False,
          help="Seed of the randomization and bootstrap tests (and of eval's --ci-method "
               "bootstrap)."),
    Param("alpha", "compare", default=0.05, kind="level", python=False,
          help="Significance level (marked with *)."),
    Param("ci", "compare", default=0.95, kind="level", python=False,
          help="Level of the confidence intervals."),
    Param("min_users", "compare", default=30, kind="int", maximum=None, python=False,
          help="Segments with fewer users get means but no test."),
    # compare's command line's own
    Param("runs", "compare_cli", default=(), kind="multiple", flag="--run", metavar="NAME=PATH",
          check=tuple, python=False,
          help="A run to compare: its name and its recommendations file (any layout eval reads). "
               "Repeat: two or more; the first is the baseline."),
    Param("compare_per_user", "compare_cli", flag="--per-user", metavar="OUT", python=False,
          help="Write each user's values per run and the differences to OUT (.parquet, .csv, "
               ".json, .jsonl). With --engine spark, OUT/ (ending in /) or a URI is a directory "
               "of Parquet part files that Spark writes."),
    Param("compare_format", "compare_cli", default="table", choices=COMPARE_FORMATS,
          flag="--format", python=False,
          help="table, or tidy rows (one per metric, cutoff, segment and run) as json, csv or "
               "parquet (to a redirected stdout); markdown, latex: a table for a paper, a row "
               "per run, a column per metric, the best in bold, a dagger on each value that "
               "differs significantly from the baseline."),
)

BY_NAME = {param.name: param for param in PARAMS}
PYTHON = tuple(param for param in PARAMS if param.python)  # evaluate()'s keywords


def defaults(group: str) -> dict:
    return {p.name: p.default for p in PARAMS if p.group == group}


def group(name: str) -> tuple:
    """The names of the Params of a group, in the registry's order."""
    return tuple(p.name for p in PARAMS if p.group == name)


def check_segments(segments, by, train=None, groups=None, activity_cuts=None) -> None:
    """--segments and --by (segments=, by=) go together; without --segments, --by
    user-activity needs --train and one of --groups and --activity-cuts, which go with it
    only."""
    cohort = segments is None and by in COHORTS
    if (segments is None) != (by is None) and not cohort:
        if segments is None:
            raise InputError(f"--by {by} names a column of --segments FILE: give --segments, or "
                             f"--by {COHORTS[0]} (with --train) to group users by their train "
                             f"interactions", usage=True)
        raise InputError("--segments FILE and --by COLUMN go together: give both", usage=True)
    if not cohort:
        if groups is not None or activity_cuts is not None:
            said = "--groups" if groups is not None else "--activity-cuts"
            raise InputError(f"{said} groups users by their train interactions: it goes with "
                             f"--by {COHORTS[0]} (and --train), without --segments", usage=True)
        return
    if train is None:
        raise InputError(f"--by {by} groups {'users' if by == COHORTS[0] else 'items'} by "
                         f"their number of train {'interactions' if by == COHORTS[0] else 'users'}"
                         f": give --train FILE", usage=True)
    if by == COHORTS[1]:  # item-popularity: head and tail, or --groups N
        if activity_cuts is not None:
            raise InputError(f"--activity-cuts groups users by their train interactions: with "
                             f"--by {by}, give --groups N, or nothing for head and tail "
                             f"(--head-share)", usage=True)
        if groups is not None:
            BY_NAME["groups"].checked(groups)
        return
    if groups is not None and activity_cuts is not None:
        raise InputError("--groups and --activity-cuts do not go together: give one",
                         usage=True)
    if groups is None and activity_cuts is None:
        raise InputError(f"--by {by} needs --groups N (N groups of about as many train users) "
                         f"or --activity-cuts 5,20,100 (fixed ranges of counts)", usage=True)
    if groups is not None:
        BY_NAME["groups"].checked(groups)
    _activity_cuts(activity_cuts)


class Options:
    """What to compute: every 'metric' option of PARAMS, checked on creation, as attributes."""

    __slots__ = ("_values",)

    def __init__(self, **given):
        metric = {p.name: p for p in PARAMS if p.group == "metric"}
        unknown = sorted(set(given) - set(metric))
        if unknown:
            raise InputError(f"unknown option {unknown[0]}=: use one of "
                             f"{', '.join(metric)}", usage=True)
        values = {name: param.checked(given.get(name, param.default))
                  for name, param in metric.items() if name != "metrics"}
        # -m may name the measures of --metrics-sql, checked first
        own = values["metrics_sql"].names() if values["metrics_sql"] is not None else ()
        values["metrics"] = check_names(given.get("metrics", metric["metrics"].default), own)
        values.update(beyond_settings(values))  # the beyond options not given: --beyond-as's
        object.__setattr__(self, "_values", values)

    def __getattr__(self, name):
        try:
            return self._values[name]
        except KeyError:
            raise AttributeError(name) from None

    def __setattr__(self, name, value):
        raise AttributeError("Options are read-only")

    def __eq__(self, other):
        return isinstance(other, Options) and self._values == other._values

    def __hash__(self):
        return hash(tuple(sorted((k, repr(v)) for k, v in self._values.items())))

    def __repr__(self):
        return "Options(" + ", ".join(f"{k}={v!r}" for k, v in self._values.items()) + ")"

    def value_for(self, name: str, layout: str):
        """An option's value for a recommendation layout: only a ranking by score has ties."""
        if name == "ties" and layout != "scores":
            return "trec"
        return self._values[name]


def check_settings(given: Mapping) -> dict:
    """Every Python keyword of evaluate() except k: known, and checked; missing ones default."""
    known = {p.name: p for p in PYTHON if p.group != "metric"}
    return {name: param.checked(given.get(name, param.default)) for name, param in known.items()}


# --- messages in the caller's words --------------------------------------------------------------

def _flag_pattern(param: Param) -> re.Pattern:
    values = "|".join(re.escape(str(c)) for c in param.choices if c is not None)
    value = rf"(?: (?P<choice>{values})\b| (?P<quoted>'[^']*'))?" if values else \
        r"(?: (?P<quoted>'[^']*'))?"
    return re.compile(rf"(?<![\w-]){re.escape(param.option)}(?![\w-]){value}")


_PATTERNS = [(p, _flag_pattern(p)) for p in PARAMS if p.python]


def in_python_words(message: str) -> str:
    """A message written for the command line, with each flag said as evaluate()'s keyword:
    `--user-col` -> `user_col=`, `--duplicates first` -> `duplicates='first'`,
    `--judged-only` -> `judged_only=True`; eval's argument RELEVANCE -> `rels=`."""
    message = re.sub(r"\bRELEVANCE\b", "rels=", message)
    for param, pattern in _PATTERNS:
        def say(found, param=param):
            if found.group("quoted"):
                return f"{param.name}={found.group('quoted')}"
            choice = found.groupdict().get("choice")
            if choice:
                return f"{param.name}={choice!r}"
            return f"{param.name}=True" if param.kind == "flag" else f"{param.name}="
        message = pattern.sub(say, message)
    return message
