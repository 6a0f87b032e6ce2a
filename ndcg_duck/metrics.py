"""Metric names: what users write (`-m P@10`, `metrics=["nDCG@10", "RR"]`) and what ndcg-duck
writes out (ranx's lowercase names: `precision@10`, `mrr`).

Each metric is computed by the SQL in sql/ndcg_metrics.sql; this module only names them, says
which take a cutoff, and turns a user's list of names into the (metric, cutoff) pairs to compute.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Iterable, NamedTuple, Optional, Union

from . import means
from .errors import InputError
from .cutoffs import Cutoff, at_k, parse_cutoffs


@dataclass(frozen=True)
class Metric:
    """One metric: its output name, the spellings accepted as input (lowercase), whether it takes
    a cutoff, and how its per-user values combine into the summary. Its formula is in the header
    of sql/ndcg_metrics.sql (DCG's in sql/ndcg_core.sql) and in docs/metrics.md.

    cutoff: 'k' (always has one: a name without @k takes the -k cutoffs, 'all' meaning none),
    'finite' (as 'k', but 'all' has no meaning), 'optional' (without @k: no cutoff) or 'none'.
    """

    name: str
    aliases: tuple
    cutoff: str
    summary: str = "mean"  # 'mean' over users, 'sum' (the counts, as trec_eval sums them),
    # 'run' (one value per run, from every user's list at once: coverage, gini, entropy,
    # coverage_count, personalization) or 'geometric' (exp of the mean of per-user logs:
    # trec_eval's gm_map, gm_bpref; reported)
    needs: str = ""  # beyond accuracy (sql/ndcg_beyond.sql): the input it reads besides recs and
    # rels: 'catalogue' (items, else train), 'train' or 'items'


METRICS = (
    Metric("ndcg", ("ndcg",), "k"),
    Metric("dcg", ("dcg",), "k"),
    Metric("idcg", ("idcg",), "k"),
    Metric("cg", ("cg",), "k"),
    Metric("precision", ("precision", "p"), "finite"),  # trec_eval and ir_measures P
    Metric("recall", ("recall", "r"), "k"),  # ir_measures R
    Metric("hit_rate", ("hit_rate", "success"), "k"),  # trec_eval and ir_measures success
    Metric("mrr", ("mrr", "rr", "recip_rank"), "optional"),
    Metric("map", ("map", "ap"), "optional"),
    Metric("r_precision", ("r_precision", "r-precision", "rprec"), "none"),  # ranx r-precision
    Metric("num_rel", ("num_rel", "numrel"), "none", summary="sum"),
    Metric("num_rel_ret", ("num_rel_ret", "numrelret"), "none", summary="sum"),
    Metric("judged", ("judged",), "k"),  # ir_measures Judged@k
    Metric("ncg", ("ncg",), "k"),  # normalised cumulated gain
    Metric("err", ("err",), "k"),  # gdeval's and ir_measures' ERR@k
    Metric("bpref", ("bpref",), "none"),  # trec_eval and ir_measures Bpref
    Metric("rbp", ("rbp",), "none"),  # trec_eval rbp, ir_measures RBP (--rbp-p: its p)
    # trec_eval's set and count measures over each whole ranking (sql/ndcg_metrics.sql)
    Metric("num_ret", ("num_ret", "numret"), "none", summary="sum"),  # ir_measures NumRet
    Metric("num_nonrel_judged_ret", ("num_nonrel_judged_ret",), "none", summary="sum"),
    Metric("set_precision", ("set_precision", "set_p", "setp"), "none"),  # ir_measures SetP
    Metric("set_relative_precision", ("set_relative_precision", "set_relative_p"), "none"),
    Metric("set_map", ("set_map", "setap"), "none"),  # ir_measures SetAP
    Metric("set_f", ("set_f", "setf"), "none"),  # ir_measures SetF (--set-f-beta: its beta)
    Metric("relative_precision", ("relative_precision", "relative_p"), "finite"),
    Metric("iprec_11pt_avg", ("iprec_11pt_avg", "11pt_avg"), "none"),  # trec_eval 11pt_avg
    # trec_eval's other per-query measures, by its names (sql/ndcg_metrics.sql)
    Metric("infap", ("infap",), "none"),  # trec_eval and ir_measures infAP
    Metric("rndcg", ("rndcg",), "none"),  # trec_eval Rndcg
    Metric("ndcg_rel", ("ndcg_rel",), "none"),  # trec_eval ndcg_rel
    Metric("rbp_resid", ("rbp_resid",), "none"),  # trec_eval rbp_resid (--rbp-p: its p)
    Metric("utility", ("utility",), "none"),  # trec_eval utility (--utility-weights, --num-docs)
    Metric("unj", ("unj",), "finite"),  # trec_eval unj_k
    Metric("g", ("g",), "none"),  # trec_eval G
    Metric("bing", ("bing",), "none"),  # trec_eval binG
    # trec_eval's geometric means (gm_map, gm_bpref): per user ln(max(value, 0.00001)), the
    # summary exp of their mean (reported)
    Metric("gm_map", ("gm_map",), "none", summary="geometric"),  # trec_eval gm_map
    Metric("gm_bpref", ("gm_bpref",), "none", summary="geometric"),  # trec_eval gm_bpref
    # beyond accuracy: what a run shows, not whether it is right (sql/ndcg_beyond.sql)
    Metric("coverage", ("coverage", "item_coverage"), "k", summary="run", needs="catalogue"),
    Metric("gini", ("gini", "gini_index"), "k", summary="run", needs="catalogue"),
    Metric("entropy", ("entropy", "shannon_entropy"), "k", summary="run", needs="catalogue"),
    Metric("novelty", ("novelty",), "k", needs="train"),
    Metric("popularity", ("popularity", "arp"), "k", needs="train"),
    Metric("tail", ("tail", "tail_share"), "k", needs="train"),
    Metric("ild", ("ild", "diversity"), "k", needs="items"),
    # how many catalogue items are shown (Elliot's ItemCoverage, RecTools' CatalogCoverage), and
    # 1 - the mean overlap of two users' lists (Evidently's PersonalizationMetric)
    Metric("coverage_count", ("coverage_count", "item_count"), "k", summary="run",
           needs="catalogue"),
    Metric("personalization", ("personalization", "personalisation"), "k", summary="run",
           needs="catalogue"),
)
# trec_eval's nickname all_trec (its measures.c): the measures of trec_eval's set that ndcg-duck
# computes as trec_eval does, with trec_eval's default cutoffs (ndcg@all is its ndcg, recall@all
# its set_recall). Not yet here: relstring.
# official: trec_eval's default set (no -m), its measures.c off_names.
NICKNAMES = {
    "all_trec": ("num_ret", "num_rel", "num_rel_ret", "map", "r_precision", "bpref", "mrr",
                 "precision@trec", "recall@trec", "ndcg@all", "ndcg@trec", "map@trec",
                 "relative_precision@trec", "hit_rate@1,5,10", "set_precision",
                 "set_relative_precision", "recall@all", "set_map", "set_f",
                 "num_nonrel_judged_ret", "rbp", "iprec_11pt_avg",
                 "infap", "utility", "bing", "g", "ndcg_rel", "rndcg", "rbp_resid", "unj@5,10,20",
                 "gm_map", "gm_bpref", "iprec_at_recall", "rprec_mult"),
    "official": ("num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "r_precision", "bpref",
                 "mrr", "iprec_at_recall", "precision@trec"),
}
BY_NAME = {metric.name: metric for metric in METRICS}
# The range of a metric's per-user values where it has one (none: dcg, idcg, cg, the counts,
# novelty, popularity): a mean's interval stays inside it (bounds, means.within)
RANGE = {**dict.fromkeys(("ndcg", "precision", "recall", "hit_rate", "mrr", "map", "r_precision",
                          "judged", "ncg", "err", "bpref", "rbp", "tail",
                          "infap", "rbp_resid", "unj", "bing"), (0.0, 1.0)),
         "ild": (0.0, 2.0)}  # 1 - cosine in [0, 2] (1 - Jaccard in [0, 1])
BY_ALIAS = {alias: metric for metric in METRICS for alias in metric.aliases}
DEFAULT = ("ndcg",)


@dataclass(frozen=True)
class Family:
    """trec_eval's measures with a fractional parameter (iprec_at_recall.0.5, Rprec_mult.0.2),
    which a cutoff cannot carry: one measure per parameter, named NAME_X with X to 2 decimals as
    trec_eval prints it (iprec_at_recall_0.50), computed per user by the SQL macro `macro`
    (relevant_ranks, num_relevant, x) over ndcg_user_metrics' columns. Its name alone gives
    trec_eval's parameters (`levels`); NAME_X or an alias @X (IPrec@0.5) gives one."""

    name: str
    aliases: tuple
    levels: tuple  # trec_eval's default parameters
    macro: str
    what: str  # what the parameter is, for a message
    highest: Optional[float]  # the largest parameter (the smallest is 0)


FAMILIES = (
    Family("iprec_at_recall", ("iprec_at_recall", "iprec"), tuple(i / 10 for i in range(11)),
           "ndcg_iprec_at_recall", "a recall level", 1.0),  # ir_measures IPrec@x
    Family("rprec_mult", ("rprec_mult",), tuple(i / 5 for i in range(1, 11)),
           "ndcg_rprec_mult", "a multiple of R", None),
)
FAMILY_BY_ALIAS = {alias: family for family in FAMILIES for alias in family.aliases}
MEMBER = re.compile(r"(?P<name>[a-z_]+)_(?P<level>[0-9]+(?:\.[0-9]*)?)")


def member_name(family: Family, level: float) -> str:
    """The name of one measure of a family: ('iprec_at_recall', 0.5) -> 'iprec_at_recall_0.50'."""
    return f"{family.name}_{level:.2f}"


def member(metric: str) -> Optional[tuple]:
    """(Family, level) of a family's measure name ('rprec_mult_0.20'), else None."""
    found = MEMBER.fullmatch(metric)
    family = found and FAMILY_BY_ALIAS.get(found.group("name"))
    if not family or member_name(family, float(found.group("level"))) != metric:
        return None
    return family, float(found.group("level"))


def _level(family: Family, text: str, given: str) -> float:
    """A family's parameter from its text (after @ or _), checked: a number from 0 to the
    family's largest with at most 2 decimals (as trec_eval prints it)."""
    wanted = (f"{family.what} from 0 to {family.highest:g}" if family.highest is not None
              else f"{family.what}, a number >= 0")
    try:
        exact = Decimal(text.strip())
    except InvalidOperation:
        exact = None
    if (exact is None or not exact.is_finite() or exact < 0
            or (family.highest is not None and exact > Decimal(str(family.highest)))
            or exact != exact.quantize(Decimal("0.01"))):
        raise InputError(f"metric {given!r}: the parameter of {family.name} is {wanted}, with "
                         f"at most 2 decimals", usage=True)
    return float(exact)


def summarised(metric: str, mean: Optional[float]) -> Optional[float]:
    """A metric's summary from the exactly rounded mean of its per-user values, on every engine
    and door: the mean, or for a geometric metric (gm_map, gm_bpref: per-user values
    ln(max(x, 0.00001))) exp of it, the geometric mean (means.geometric)."""
    return means.geometric(mean) if geometric(metric) else mean
# names a user's own measure (--metrics-sql, metrics_sql.py) may not take: the built-in ones'
# names and spellings, and the per-user table's other columns
RESERVED = (frozenset(BY_ALIAS) | frozenset(BY_NAME) | frozenset(FAMILY_BY_ALIAS)
            | {"user_id", "k", "edge"})


def _metric(name: str) -> Metric:
    """The Metric of a measure's metric name: a built-in one, or a user's own measure
    (--metrics-sql: parse_metrics knows those), which takes cutoffs as ndcg does."""
    if name in BY_NAME:
        return BY_NAME[name]
    return Metric(name, (name,), "none" if member(name) else "k")


def own(metric: str) -> bool:
    """Whether a metric is a user's own measure (--metrics-sql), not a built-in one."""
    return metric not in BY_NAME and member(metric) is None


def column_sql(metric: str) -> Optional[str]:
    """The SQL of a family's measure (iprec_at_recall_0.50) over ndcg_user_metrics' row (its
    relevant_ranks and num_relevant), else None (the metrics macro has the others' columns)."""
    found = member(metric)
    if found is None:
        return None
    family, level = found
    return f"{family.macro}(relevant_ranks, num_relevant, {level!r}::DOUBLE)"


class Measure(NamedTuple):
    """A metric at one cutoff (None: no cutoff)."""

    metric: str
    k: Cutoff

    @property
    def name(self) -> str:
        """The output name: 'ndcg@10', 'ndcg@all', 'mrr', 'mrr@10', 'r_precision'."""
        if self.k is None and _metric(self.metric).cutoff in ("optional", "none"):
            return self.metric
        return at_k(self.metric, self.k)


def known_names(own: tuple = ()) -> str:
    """The output names, as a usage error lists them (own: the user's own measures' names)."""
    return ", ".join([metric.name for metric in METRICS] + [f.name for f in FAMILIES]
                     + list(own))


def parse_metrics(values: Union[str, Iterable[str], None], ks: Iterable[Cutoff] = (10,),
                  own: tuple = ()) -> tuple:
    """The measures to compute, in the order given and without repeats, from metric names
    (strings, or comma lists of them; None: ndcg). A name without @k takes the cutoffs `ks`
    where the metric has a cutoff. Names are case-insensitive; ir_measures' and trec_eval's
    spellings are accepted (P@10, R@10, Success@10, RR@10, AP, nDCG@10, Rprec, recip_rank).
    `own`: the names of the user's own measures (--metrics-sql), which take cutoffs as ndcg."""
    if values is None:
        values = DEFAULT
    elif isinstance(values, str):
        values = [values]
    measures: list = []
    for value in values:
        if not isinstance(value, str):
            raise InputError(f"metric {value!r} is not a name: use one of {known_names(own)}",
                             usage=True)
        for piece in value.split(","):
            for measure in _measures(piece, tuple(ks), own):
                if measure not in measures:
                    measures.append(measure)
    if not measures:
        raise InputError(f"no metric given: use one of {known_names(own)}", usage=True)
    return tuple(measures)


def check_names(values: Union[str, Iterable[str], None], own: tuple = ()) -> tuple:
    """The metric names as given (a name, a comma list, or a list of them), each piece checked
    as parse_metrics would with some finite cutoff; the cutoffs they take come later."""
    parse_metrics(values, (10,), own)
    if values is None:
        return DEFAULT
    if isinstance(values, str):
        values = [values]
    return tuple(values)


def _measures(piece: str, ks: tuple, own: tuple = ()) -> list:
    text = piece.strip()
    name, at, cutoff = text.partition("@")
    nickname = NICKNAMES.get(name.strip().lower())
    if nickname is not None:
        if at:
            raise InputError(f"metric {text!r}: {name.strip()} names a set of measures with "
                             f"their own cutoffs and takes no @K", usage=True)
        return [measure for names in nickname for measure in _nicknamed(names)]
    family = FAMILY_BY_ALIAS.get(name.strip().lower())
    found = None if at else MEMBER.fullmatch(name.strip().lower())
    if found and found.group("name") in FAMILY_BY_ALIAS and name.strip().lower() not in own:
        family, at, cutoff = FAMILY_BY_ALIAS[found.group("name")], "_", found.group("level")
    if family is not None:
        levels = (_level(family, cutoff, text),) if at else family.levels
        return [Measure(member_name(family, level), None) for level in levels]
    metric = BY_ALIAS.get(name.strip().lower())
    if metric is None and name.strip().lower() in own:
        metric = _metric(name.strip().lower())
    if metric is None:
        raise InputError(f"unknown metric {text!r}: use one of {known_names(own)} (with @K for a "
                         f"cutoff)", usage=True)
    if at and metric.cutoff == "none":
        raise InputError(f"metric {text!r}: {metric.name} takes no cutoff", usage=True)
    if at:
        try:
            cutoffs = parse_cutoffs(cutoff)
        except InputError:
            raise InputError(f"metric {text!r}: the cutoff after @ is not an integer >= 1 or "
                             f"'all'", usage=True) from None
    elif metric.cutoff in ("k", "finite"):
        cutoffs = ks
    else:
        cutoffs = (None,)
    if metric.cutoff == "finite" and None in cutoffs:
        raise InputError(f"metric {text!r}: {metric.name} divides by k and needs a cutoff, "
                         f"not 'all': write {metric.name}@K", usage=True)
    return [Measure(metric.name, k) for k in cutoffs]


def _nicknamed(names: str) -> list:
    """The measures of one entry of a nickname: a name with @ and its cutoffs (a comma list)."""
    name, _, cutoff = names.partition("@")
    return [measure for k in (cutoff.split(",") if cutoff else [""])
            for measure in _measures(f"{name}@{k}" if k else name, ())]


def per_user_columns(measures: Iterable[Measure]) -> tuple:
    """The per-user columns for these measures: each measure, and before each ndcg@k its parts
    dcg@k and idcg@k (as ndcg-duck has always written them), without repeats. A per-run metric
    (coverage, gini, entropy) has no per-user column."""
    columns: list = []
    for measure in measures:
        if per_run(measure.metric):
            continue
        parts = ("dcg", "idcg", "ndcg") if measure.metric == "ndcg" else (measure.metric,)
        for part in parts:
            if Measure(part, measure.k) not in columns:
                columns.append(Measure(part, measure.k))
    return tuple(columns)


def cutoffs(measures: Iterable[Measure]) -> tuple:
    """The cutoffs to compute these measures at, in order (None: no cutoff). r_precision and
    num_rel_ret read the whole ranking (down to R, or to its end), so they add None; num_rel
    reads none of it."""
    out: list = []
    for measure in measures:
        if measure.metric == "num_rel":
            continue
        if measure.k not in out:
            out.append(measure.k)
    return tuple(out) or (1,)


def beyond(measure: Measure) -> bool:
    """Whether a measure is one of the beyond-accuracy metrics (sql/ndcg_beyond.sql)."""
    return bool(_metric(measure.metric).needs)


def accuracy(measures: Iterable[Measure]) -> tuple:
    """The measures that judge rankings against the relevance data (all but beyond())."""
    return tuple(measure for measure in measures if not beyond(measure))


def per_run(metric: str) -> bool:
    """Whether a metric is one value per run (coverage, gini, entropy), not a mean over users."""
    return _metric(metric).summary == "run"


def core_only(measures: Iterable[Measure]) -> bool:
    """Whether the core's NDCG macros compute all of these (ndcg, dcg and idcg)."""
    return all(measure.metric in ("ndcg", "dcg", "idcg") for measure in measures)


def geometric(metric: str) -> bool:
    """Whether a metric's summary is a geometric mean (gm_map, gm_bpref: summarised)."""
    return _metric(metric).summary == "geometric"


def counts(metric: str) -> bool:
    """Whether a metric is a count, summed over users rather than averaged."""
    return _metric(metric).summary == "sum"


def has_cutoff(metric: str) -> bool:
    """Whether a metric's value depends on the cutoff (all but r_precision, num_rel,
    num_rel_ret, bpref, rbp, num_ret, num_nonrel_judged_ret, the set measures and trec_eval's
    other whole-ranking measures: infap, rndcg, ndcg_rel, rbp_resid, utility, g, bing)."""
    return _metric(metric).cutoff != "none"


# the metrics whose every per-user value lies in [0, 1] (a share, a normalised gain, a reciprocal
# rank, a probability): an interval of their mean never leaves it (means.within)
def bounds(name: str):
    """The range of a metric's values (a name as the summary writes it, 'ndcg@10'): RANGE's,
    None for the unbounded ones (dcg, novelty, ...); a family's measures (iprec_at_recall_0.50,
    rprec_mult_0.20) are precisions, in [0, 1]."""
    return (0.0, 1.0) if member(name) else RANGE.get(name.partition("@")[0])


def is_metric(name: str) -> bool:
    """Whether a summary key names a metric ('recall@10', 'mrr', a user's own 'mine@10'), not a
    count of users (users, users_...: no measure's name starts with users; an own measure's
    name always has its @K; a family's is NAME_X, iprec_at_recall_0.50)."""
    return (name.partition("@")[0] in BY_NAME or member(name) is not None
            or ("@" in name and not name.startswith("users")))
