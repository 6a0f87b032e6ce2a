"""A plain-Python NDCG, written from the definitions, used only as a test oracle (`import
reference`; the metrics beside NDCG are in reference.metrics, the beyond-accuracy ones in
reference.beyond)."""

import math

GAINS = {
    "linear": lambda rel: rel,
    "exponential": lambda rel: 2.0 ** rel - 1.0,
    "binary": lambda rel: 1.0,
}


def gain_of(rel, gain, gain_map=None):
    """The gain of a judged relevance `rel` (None: not judged). gain_map {level: gain} overrides
    `gain` for the levels it lists; otherwise relevance <= 0 gains 0."""
    if rel is None:
        return 0.0
    if gain_map and float(rel) in gain_map:
        return float(gain_map[float(rel)])
    if rel <= 0:
        return 0.0
    return float(GAINS[gain](rel))


def discount(position):
    """The discount of a 1-based position."""
    return 1.0 / math.log2(position + 1)


def dcg(gains, k):
    top = gains if k is None else gains[:k]
    return sum(g * discount(i + 1) for i, g in enumerate(top))


def tie_averaged_dcg(gains, scores, k):
    """scikit-learn's tie-averaged DCG@k: the items of a run of equal `scores` (a tie group) all
    get the group's mean gain at each of the group's positions; positions past k count 0."""
    total, start = 0.0, 0
    while start < len(gains):
        end = start
        while end + 1 < len(gains) and scores[end + 1] == scores[start]:
            end += 1
        positions = [p for p in range(start + 1, end + 2) if k is None or p <= k]
        mean_gain = sum(gains[start:end + 1]) / (end - start + 1)
        total += mean_gain * sum(discount(p) for p in positions)
        start = end + 1
    return total


def user_scores(ranking, judgments, k, gain="linear", idcg_cutoff="k", *, scores=None,
                ties="trec", gain_map=None, judged_only=False, max_depth=None):
    """(dcg, idcg, ndcg) of one user's ranking (item ids, best first) against judgments
    (item id -> relevance), at cutoff k (None = all).

    scores: the items' scores in ranking order (a ranking by score, already in trec_eval's order:
    ties by item id descending); ties 'average' averages over equal scores. max_depth keeps the
    first N items; judged_only then drops the items without a judgment >= 0 (trec_eval -J)."""
    ranked = list(zip(ranking, scores if scores is not None else range(len(ranking))))
    if max_depth is not None:
        ranked = ranked[:max_depth]
    if judged_only:
        ranked = [(item, score) for item, score in ranked
                  if judgments.get(item) is not None and judgments[item] >= 0]
    gains = [gain_of(judgments.get(item), gain, gain_map) for item, _ in ranked]
    if ties == "average" and scores is not None:
        actual = tie_averaged_dcg(gains, [score for _, score in ranked], k)
    else:
        actual = dcg(gains, k)
    ideal_gains = sorted((g for g in (gain_of(r, gain, gain_map) for r in judgments.values())
                          if g > 0), reverse=True)
    cut = k
    if idcg_cutoff == "list":
        cut = len(ranked) if k is None else min(k, len(ranked))
    ideal = dcg(ideal_gains, cut)
    return actual, ideal, (actual / ideal if ideal > 0 else 0.0)


def evaluate(rankings, judgments, k, gain="linear", missing="zero", idcg_cutoff="k",
             empty="zero", *, scores=None, **options):
    """{user: (dcg, idcg, ndcg)} over the users of `judgments` ({user: {item: rel}});
    rankings is {user: [items]}, scores {user: [score of each ranked item]} (optional);
    options: ties, gain_map, judged_only, max_depth as in user_scores."""
    out = {}
    for user, judged in judgments.items():
        ranking = rankings.get(user)
        if not ranking and missing == "skip":
            continue
        user_options = dict(options, scores=scores[user] if scores and ranking else None)
        result = user_scores(ranking or [], judged, k, gain, idcg_cutoff, **user_options)
        if empty == "skip" and result[1] == 0:
            continue
        out[user] = result
    return out


def mean_ndcg(per_user):
    return sum(s[2] for s in per_user.values()) / len(per_user) if per_user else None
