"""--format trec: the results as trec_eval prints them, so that a script reading trec_eval's output
reads ndcg-duck's unchanged.

Each line is `measure<TAB>query<TAB>value`, the measure name left-justified in 22 characters, a
value to 4 decimals (trec_eval's %6.4f) or, for a count, an integer. With the per-user values
(--per-user -, as trec_eval -q) each evaluated user's lines come first, users in trec_eval's order
(their ids compared as text); then the `all` lines: runid, num_q (the evaluated users), and each
measure's mean (a count's sum). A measure goes by trec_eval's name (ndcg_cut_10, P_10, map,
recip_rank, Rprec, success_10, recall_10, set_recall, num_rel, num_rel_ret, num_ret, set_P, set_F,
relative_P_10, 11pt_avg, gm_map, iprec_at_recall_0.50, Rprec_mult_0.20 ...; gm_map and gm_bpref
in the `all` lines only, as trec_eval prints them) when ndcg-duck computes
it as trec_eval does, in trec_eval's order; any other (err@20, ndcg@10 with --gain exponential,
mrr@10) keeps ndcg-duck's name and follows, in the order asked.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable, Optional

import duckdb

from .. import objectstore
from ..errors import InputError
from ..evaluation.inputs import COMPRESSED, format_of
from ..sqltext import literal
from ..metrics import counts, geometric, is_metric, member

# trec_eval's measures that ndcg-duck computes, in the order trec_eval prints them (the order of
# its measure table, measures.c)
TREC_ORDER = ("num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
              "recip_rank", "iprec_at_recall", "P", "recall", "infAP", "gm_bpref", "Rprec_mult",
              "utility", "11pt_avg", "binG", "G", "ndcg", "ndcg_rel", "Rndcg", "ndcg_cut",
              "map_cut", "relative_P", "success", "set_P", "set_relative_P", "set_recall",
              "set_map", "set_F", "num_nonrel_judged_ret", "rbp", "rbp_resid", "unj")
WIDTH = 22  # trec_eval's %-22s


def _split(name: str) -> tuple:
    """A summary key ('ndcg@10', 'ndcg@all', 'mrr', 'num_rel') as (metric, k): k an int, or None
    for no cutoff."""
    metric, _, cut = name.partition("@")
    return metric, (int(cut) if cut and cut != "all" else None)


def trec_name(name: str, settings: dict) -> Optional[tuple]:
    """(trec_eval's family, its cutoff or None, trec_eval's name) of the measure ndcg-duck calls
    `name` when trec_eval computes the same; None when it has no such measure. The NDCG family is
    trec_eval's only with linear gains (or, for ndcg without a cutoff, a --gain-map: trec_eval's
    ndcg.LEVEL=GAIN,...), the ideal cut at k, tied scores in trec_eval's order and no
    --min-relevance (trec_eval's ndcg ignores -l)."""
    metric, k = _split(name)
    plain = {"num_rel": "num_rel", "num_rel_ret": "num_rel_ret", "r_precision": "Rprec",
             "bpref": "bpref", "num_ret": "num_ret", "num_nonrel_judged_ret":
             "num_nonrel_judged_ret", "set_precision": "set_P",
             "set_relative_precision": "set_relative_P", "set_map": "set_map",
             "iprec_11pt_avg": "11pt_avg", "gm_map": "gm_map", "gm_bpref": "gm_bpref"}
    plain.update({"infap": "infAP", "bing": "binG"})
    if metric in plain:
        return plain[metric], None, plain[metric]
    found = member(metric)  # iprec_at_recall_0.50, rprec_mult_0.20 -> Rprec_mult_0.20
    if found is not None:
        family = {"iprec_at_recall": "iprec_at_recall", "rprec_mult": "Rprec_mult"}[found[0].name]
        return family, found[1], f"{family}_{found[1]:.2f}"
    found = _trec_b_name(metric, k, settings)
    if found is not None:
        return found
    if metric == "set_f":  # trec_eval's set_F.B prints as set_F_B
        beta = float(settings.get("set_f_beta", 1.0))
        return "set_F", None, "set_F" if beta == 1.0 else f"set_F_{beta:g}"
    if metric == "relative_precision" and k is not None:
        return "relative_P", k, f"relative_P_{k}"
    if metric == "map":
        return ("map", None, "map") if k is None else ("map_cut", k, f"map_cut_{k}")
    if metric == "rbp":  # trec_eval names a measure with parameters NAME_PARAMS
        p = settings.get("rbp_p", 0.9)
        return "rbp", None, "rbp" if float(p) == 0.9 else f"rbp_p={p}"
    if metric == "mrr" and k is None:
        return "recip_rank", None, "recip_rank"
    if metric == "precision" and k is not None:
        return "P", k, f"P_{k}"
    if metric == "recall":
        return ("set_recall", None, "set_recall") if k is None else ("recall", k, f"recall_{k}")
    if metric == "hit_rate" and k is not None:
        return "success", k, f"success_{k}"
    if metric == "ndcg" and settings.get("gain", "linear") == "linear" \
            and settings.get("idcg_cutoff", "k") == "k" and settings.get("ties", "trec") == "trec" \
            and settings.get("min_relevance") is None:
        gain_map = settings.get("gain_map")
        if k is None:
            return "ndcg", None, "ndcg" if gain_map is None else f"ndcg_{_map_text(gain_map)}"
        if gain_map is None:
            return "ndcg_cut", k, f"ndcg_cut_{k}"
    return None


def _trec_b_name(metric: str, k, settings: dict) -> Optional[tuple]:
    """trec_eval's name of rbp_resid, utility, unj_K and of G, ndcg_rel and Rndcg (as for
    ndcg: with linear gains or a --gain-map, tied scores in trec_eval's order and no
    --min-relevance, which trec_eval's ignore), or None."""
    if metric == "rbp_resid":
        p = settings.get("rbp_p", 0.9)
        return "rbp_resid", None, "rbp_resid" if float(p) == 0.9 else f"rbp_resid_p={p}"
    if metric == "utility":
        weights = settings.get("utility_weights", (1.0, -1.0, 0.0, 0.0))
        weights = tuple(float(w) for w in (weights.split(",") if isinstance(weights, str)
                                           else weights))
        if weights == (1.0, -1.0, 0.0, 0.0):
            return "utility", None, "utility"
        return "utility", None, "utility_" + ",".join(f"{w:g}" for w in weights)
    if metric == "unj" and k is not None:
        return "unj", k, f"unj_{k}"
    names = {"g": "G", "ndcg_rel": "ndcg_rel", "rndcg": "Rndcg"}
    if metric in names and settings.get("gain", "linear") == "linear" \
            and settings.get("ties", "trec") == "trec" and settings.get("min_relevance") is None:
        gain_map = settings.get("gain_map")
        name = names[metric]
        return name, None, name if gain_map is None else f"{name}_{_map_text(gain_map)}"
    return None


def _map_text(gain_map) -> str:
    """A gain map as trec_eval's ndcg parameter: the text given, or LEVEL=GAIN,... of a mapping."""
    if isinstance(gain_map, str):
        return gain_map
    pairs = gain_map.items() if isinstance(gain_map, dict) else gain_map
    return ",".join(f"{level:g}={gain:g}" for level, gain in pairs)


def ordered(names: Iterable[str], settings: dict) -> list:
    """(ndcg-duck name, printed name) of each measure: trec_eval's in trec_eval's order (by
    family, then cutoff), then the others as given."""
    trec, own = [], []
    for name in names:
        found = trec_name(name, settings)
        if found is None:
            own.append((name, name))
        else:
            family, k, printed = found
            trec.append(((TREC_ORDER.index(family), k or 0), name, printed))
    return [(name, printed) for _, name, printed in sorted(trec)] + own


def line(measure: str, query: str, value) -> str:
    """One trec_eval line: a count as an integer, any other number to 4 decimals."""
    shown = str(value) if isinstance(value, str) else (
        str(int(value)) if isinstance(value, int) else f"{value:6.4f}")
    return f"{measure:<{WIDTH}}\t{query}\t{shown}\n"


def arrow_rows(table, user_col: str):
    """The rows of a per-user Arrow table as dicts, in trec_eval's order of queries (ids compared
    as text), a batch at a time."""
    import pyarrow.compute as pc

    key = "__ndcg_trec_query"
    queries = pc.cast(table.column(user_col), "string")
    spaced = pc.filter(queries, pc.match_substring_regex(queries, r"\s"))
    if len(spaced):  # before any line is printed
        _refuse_query(spaced[0].as_py())
    table = table.append_column(key, queries).sort_by(key)
    for batch in table.to_batches(max_chunksize=65536):
        yield from batch.to_pylist()


def per_query_lines(rows: Iterable[dict], user_col: str, names: list, settings: dict):
    """trec_eval -q's lines: for each user (rows: one dict per evaluated user, with user_col and
    a key per measure name, in the order to print), a line per measure that has a value."""
    measures = ordered(names, settings)
    for row in rows:
        query = str(row[user_col])
        if any(ch.isspace() for ch in query):
            _refuse_query(query)
        for name, printed in measures:
            value = row.get(name)
            if value is not None and not geometric(_split(name)[0]):  # (trec_eval: `all` only)
                yield line(printed, query, int(value) if counts(_split(name)[0]) else value)


def _refuse_query(query: str):
    raise InputError(f"--format trec: user id {query!r} holds white space, which a trec_eval line "
                     f"(measure, query, value) cannot carry: use --format csv or json for "
                     f"--per-user -")


def summary_lines(summary: dict, settings: dict, run_id: str) -> str:
    """trec_eval's `all` lines: runid, num_q, then each measure with a value."""
    names = [name for name in summary if is_metric(name)]
    out = [line("runid", "all", run_id), line("num_q", "all", int(summary["users"]))]
    for name, printed in ordered(names, settings):
        value = summary[name]
        if value is not None:
            out.append(line(printed, "all", int(value) if counts(_split(name)[0]) else value))
    return "".join(out)


def run_id(recs, recs_format: Optional[str]) -> str:
    """The runid trec_eval prints: the tag (6th word) of the run's last line when RECS is one
    TREC run file (trec_eval keeps the last line's), on disk or on S3, compressed or not; else
    RECS as given (a path), or 'ndcg-duck'."""
    if not isinstance(recs, (str, Path)):
        return "ndcg-duck"
    try:
        path = _one_file(str(recs), recs_format)
        if path is None or format_of(str(path), recs_format, "recommendations") != "trec":
            return str(recs)
        last = _last_line(path)
    except (InputError, OSError, duckdb.Error):  # cannot be told or read: the run reports it
        return str(recs)
    words = last.split()
    return words[5] if len(words) >= 6 else str(recs)


def _one_file(recs: str, recs_format: Optional[str]) -> Optional[Path]:
    """The local file RECS names: itself, or the copy of its s3:// object (the run made it when
    it read a TREC run: objectstore.local_copies keeps one per object and run); None when RECS
    names several files, or an object that is not a TREC run by its name (no copy is made)."""
    if not objectstore.is_url(recs):
        path = Path(recs)
        return path if path.is_file() else None
    kind, urls = objectstore.listing(recs, "recommendations")
    if kind != "file":
        return None
    try:
        if format_of(recs, recs_format, "recommendations") != "trec":
            return None
    except InputError:  # no extension that says: the copy's content tells
        pass
    return Path(objectstore.local_copies(urls, "recommendations")[0])


def _last_line(path: Path) -> str:
    """The last line with a word of the text file at `path`. A compressed one (.gz, .zst) is read
    by DuckDB, as the run read it; another, only its last 64 KiB."""
    if path.suffix.lower() in COMPRESSED:
        con = duckdb.connect()
        try:
            cursor = con.execute(
                f"SELECT line FROM read_csv({literal(path)}, columns = {{'line': 'VARCHAR'}}, "
                f"header = false, delim = chr(31), quote = '', escape = '', auto_detect = false) "
                f"WHERE regexp_matches(line, '\\S')")
            last = ""
            while rows := cursor.fetchmany(65536):
                last = rows[-1][0]
            return last
        finally:
            con.close()
    with open(path, "rb") as handle:
        handle.seek(max(0, path.stat().st_size - 65536))
        tail = handle.read().decode("utf-8", "replace").splitlines()
    return next((text for text in reversed(tail) if text.split()), "")
