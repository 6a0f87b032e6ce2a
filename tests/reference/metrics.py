"""A plain-Python version of the metrics beside NDCG, written from their definitions (trec_eval's
P, recall, map, map_cut, recip_rank, success, Rprec, num_rel, num_rel_ret; Jarvelin and
Kekalainen's CG), used only as a test oracle."""

import reference


def relevant(rel, min_relevance=None):
    """A judged relevance counts as relevant when > 0, or >= min_relevance when given."""
    if rel is None:
        return False
    return rel >= min_relevance if min_relevance is not None else rel > 0


def cut(ranking, judgments, max_depth=None, judged_only=False):
    """The ranking as the metrics see it: its first max_depth items, then with judged_only
    (trec_eval -J) only the items with a judgment >= 0."""
    ranked = list(ranking)[:max_depth] if max_depth is not None else list(ranking)
    if judged_only:
        ranked = [item for item in ranked
                  if judgments.get(item) is not None and judgments[item] >= 0]
    return ranked


def binary_metrics(ranking, judgments, k, min_relevance=None, *, max_depth=None,
                   judged_only=False):
    """{metric: value} for one user at cutoff k (None: no cutoff) of the metrics that count
    relevant items: precision (None without a cutoff), recall, hit_rate, mrr, map, r_precision,
    num_rel, num_rel_ret. ranking: item ids best first; judgments: item id -> relevance."""
    flags = [relevant(judgments.get(item), min_relevance)
             for item in cut(ranking, judgments, max_depth, judged_only)]
    r = sum(relevant(rel, min_relevance) for rel in judgments.values())
    top = flags if k is None else flags[:k]
    found = sum(top)
    first = next((position for position, hit in enumerate(top, 1) if hit), None)
    precisions = []  # precision at the rank of each relevant item in the first k
    for position, hit in enumerate(top, 1):
        if hit:
            precisions.append((len(precisions) + 1) / position)
    return {
        "precision": None if k is None else found / k,
        "recall": found / r if r else 0.0,
        "hit_rate": 1.0 if found else 0.0,
        "mrr": 1.0 / first if first else 0.0,
        "map": sum(precisions) / r if r else 0.0,
        "r_precision": sum(flags[:r]) / r if r else 0.0,
        "num_rel": r,
        "num_rel_ret": sum(flags),
    }


def cg(gains, k):
    """Cumulated gain: the sum of the first k gains (Jarvelin and Kekalainen 2002)."""
    return sum(gains if k is None else gains[:k])


def tie_averaged_cg(gains, scores, k):
    """CG@k where the items of a run of equal scores share the group's mean gain at each of its
    positions (the tie averaging of reference.tie_averaged_dcg, without the discount)."""
    total, start = 0.0, 0
    while start < len(gains):
        end = start
        while end + 1 < len(gains) and scores[end + 1] == scores[start]:
            end += 1
        inside = sum(1 for p in range(start + 1, end + 2) if k is None or p <= k)
        total += sum(gains[start:end + 1]) / (end - start + 1) * inside
        start = end + 1
    return total


def gain_of(rel, gain, gain_map=None, min_relevance=None):
    """reference.gain_of, and 0 below min_relevance (which overrides the gain map)."""
    if rel is not None and min_relevance is not None and rel < min_relevance:
        return 0.0
    return reference.gain_of(rel, gain, gain_map)


def user_cg(ranking, judgments, k, gain="linear", *, scores=None, ties="trec", gain_map=None,
            judged_only=False, max_depth=None, min_relevance=None):
    """CG@k of one user, with the gains and options of reference.user_scores."""
    order = cut(ranking, judgments, max_depth, judged_only)
    gains = [gain_of(judgments.get(item), gain, gain_map, min_relevance) for item in order]
    if ties == "average" and scores is not None:
        score_of = dict(zip(ranking, scores))
        return tie_averaged_cg(gains, [score_of[item] for item in order], k)
    return cg(gains, k)
