"""A plain-Python NDCG, written from the definitions, used only as a test oracle."""

import math

GAINS = {
    "linear": lambda rel: rel,
    "exponential": lambda rel: 2.0 ** rel - 1.0,
    "binary": lambda rel: 1.0,
}


def gain_of(rel, gain):
    if rel is None or rel <= 0:
        return 0.0
    return float(GAINS[gain](rel))


def dcg(gains, k):
    top = gains if k is None else gains[:k]
    return sum(g / math.log2(i + 2) for i, g in enumerate(top))


def user_scores(ranking, judgments, k, gain="linear", idcg_cutoff="k"):
    """(dcg, idcg, ndcg) of one user's ranking (item ids, best first) against judgments
    (item id -> relevance), at cutoff k (None = all)."""
    actual = dcg([gain_of(judgments.get(item), gain) for item in ranking], k)
    ideal_gains = sorted((g for g in (gain_of(r, gain) for r in judgments.values()) if g > 0),
                         reverse=True)
    cut = k
    if idcg_cutoff == "list":
        cut = len(ranking) if k is None else min(k, len(ranking))
    ideal = dcg(ideal_gains, cut)
    return actual, ideal, (actual / ideal if ideal > 0 else 0.0)


def evaluate(rankings, judgments, k, gain="linear", missing="zero", idcg_cutoff="k",
             empty="zero"):
    """{user: (dcg, idcg, ndcg)} over the users of `judgments` ({user: {item: rel}});
    rankings is {user: [items]}."""
    out = {}
    for user, judged in judgments.items():
        ranking = rankings.get(user)
        if not ranking and missing == "skip":
            continue
        scores = user_scores(ranking or [], judged, k, gain, idcg_cutoff)
        if empty == "skip" and scores[1] == 0:
            continue
        out[user] = scores
    return out


def mean_ndcg(per_user):
    return sum(s[2] for s in per_user.values()) / len(per_user) if per_user else None
