"""A plain-Python version of the metrics beside NDCG, written from their definitions (trec_eval's
P, recall, map, map_cut, recip_rank, success, Rprec, num_rel, num_rel_ret, num_ret,
num_nonrel_judged_ret, set_P, set_relative_P, set_map, set_F, relative_P, 11pt_avg,
iprec_at_recall, Rprec_mult, gm_map and gm_bpref per user; Jarvelin and
Kekalainen's CG and nCG; ir_measures' Judged; gdeval's ERR), used only as a test oracle."""

import math

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
                   judged_only=False, beta=1.0):
    """{metric: value} for one user at cutoff k (None: no cutoff) of the metrics that count
    relevant items: precision and relative_precision (None without a cutoff), recall, hit_rate,
    mrr, map, r_precision, num_rel, num_rel_ret, bpref, rbp, and trec_eval's num_ret,
    num_nonrel_judged_ret, set_precision, set_relative_precision, set_map, set_f (with beta).
    ranking: item ids best first; judgments: item id -> relevance."""
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
    # bpref (trec_eval): each relevant ranked item scores 1 - min(n, R) / min(N, R), n the judged
    # nonrelevant items (relevance >= 0) above it, N all of the user's
    nonrel = sum(rel is not None and rel >= 0 and not relevant(rel, min_relevance)
                 for rel in judgments.values())
    above, bpref = 0, 0.0
    for item in cut(ranking, judgments, max_depth, judged_only):
        rel = judgments.get(item)
        if relevant(rel, min_relevance):
            bpref += 1 - min(above, r) / min(nonrel, r) if above else 1.0
        elif rel is not None and rel >= 0:
            above += 1
    # rbp (trec_eval, p = 0.9): each relevance >= 0 (over the user's largest when that is
    # above 1) weighted by 0.9^(i - 1), summed, times 0.1; min_relevance plays no part
    largest = max([0] + [rel for rel in judgments.values()])
    rbp = sum(max(judgments.get(item, 0), 0) / max(largest, 1) * 0.9 ** i
              for i, item in enumerate(cut(ranking, judgments, max_depth, judged_only)))
    # trec_eval's set measures (m_set_*.c, m_num_*.c) over the whole ranking: n ranked, f of them
    # relevant; P = f / n, recall f / R, F = (beta + 1) P Rc / (beta P + Rc)
    ranked = cut(ranking, judgments, max_depth, judged_only)
    n, f = len(ranked), sum(flags)
    set_p = f / n if n else 0.0
    set_r = f / r if r else 0.0
    # 11pt_avg (trec_eval): at recall x = 0, 0.1, ..., 1 the largest precision from the c-th
    # relevant ranked item on, c = x R rounded half away from 0 (at least 1); 0 when c > f
    def iprec(x):
        c = int(x * r) + (1 if x * r - int(x * r) >= 0.5 else 0)
        return max(precisions_all[max(c, 1) - 1:], default=0.0) if c <= f else 0.0

    precisions_all = [j / p for j, p in enumerate(
        [position for position, hit in enumerate(flags, 1) if hit], 1)]
    # trec_eval's Rprec_mult.x: precision at c = (long) (x R + 0.9) ranks, 0 when c is 0
    def rprec_mult(x):
        c = int(x * r + 0.9)
        return sum(flags[:c]) / c if c else 0.0

    # gm_map, gm_bpref (trec_eval): each user's ln(max(value, 0.00001)), map over the whole
    # ranking; the summary is exp of their mean
    whole_ap = sum(precisions_all) / r if r else 0.0
    return {
        **{f"iprec_at_recall_{tenths / 10:.2f}": iprec(tenths / 10) for tenths in range(11)},
        **{f"rprec_mult_{fifths / 5:.2f}": rprec_mult(fifths / 5) for fifths in range(1, 11)},
        "gm_map": math.log(max(whole_ap, 0.00001)),
        "gm_bpref": math.log(max(bpref / r if r else 0.0, 0.00001)),
        "iprec_11pt_avg": sum(iprec(tenths / 10) for tenths in range(11)) / 11,
        "num_ret": n,
        "num_nonrel_judged_ret": sum(judgments.get(item) is not None and judgments[item] >= 0
                                     and not relevant(judgments[item], min_relevance)
                                     for item in ranked),
        "set_precision": set_p,
        "set_relative_precision": f / min(n, r) if n and r else 0.0,
        "set_map": set_p * set_r,
        "set_f": (beta + 1) * set_p * set_r / (beta * set_p + set_r) if f else 0.0,
        "relative_precision": None if k is None else (found / min(k, r) if r else 0.0),
        "rbp": 0.1 * rbp,
        "bpref": bpref / r if r else 0.0,
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


def ncg(ranking, judgments, k, gain="linear", *, scores=None, ties="trec", gain_map=None,
        judged_only=False, max_depth=None, min_relevance=None):
    """nCG@k of one user: CG@k over the CG@k of the user's positive gains sorted best first (0
    when that is 0)."""
    top = user_cg(ranking, judgments, k, gain, scores=scores, ties=ties, gain_map=gain_map,
                  judged_only=judged_only, max_depth=max_depth, min_relevance=min_relevance)
    ideal = sorted((g for g in (gain_of(rel, gain, gain_map, min_relevance)
                                for rel in judgments.values()) if g > 0), reverse=True)
    best = cg(ideal, k)
    return top / best if best > 0 else 0.0


def judged(ranking, judgments, k, *, judged_only=False, max_depth=None):
    """Judged@k of one user: of the first min(k, n) ranked items (n: the ranking's length), the
    share with a judgment of any value; 0 without a ranked item."""
    top = cut(ranking, judgments, max_depth, judged_only)
    top = top if k is None else top[:k]
    return sum(item in judgments for item in top) / len(top) if top else 0.0


def err(ranking, judgments, k, *, min_relevance=None, judged_only=False, max_depth=None):
    """ERR@k of one user as gdeval.pl computes it: down the first k ranks, each relevant item's
    grade g (its relevance; 0 for the others) stops the user with chance (2^g - 1) / 16; ERR adds
    up the chance of stopping at rank i times 1/i."""
    total, looking = 0.0, 1.0
    top = cut(ranking, judgments, max_depth, judged_only)
    for position, item in enumerate(top if k is None else top[:k], 1):
        rel = judgments.get(item)
        grade = rel if relevant(rel, min_relevance) else 0
        stop = (2 ** grade - 1) / 16
        total += stop * looking / position
        looking *= 1 - stop
    return total


def trec_other_metrics(ranking, judgments, ks, min_relevance=None, gain="linear", gain_map=None,
                       *, max_depth=None, judged_only=False, p=0.9, weights=(1, -1, 0, 0),
                       num_docs=0, has_ranking=True):
    """{metric: value} for one user of trec_eval's infAP, Rndcg, ndcg_rel, rbp_resid, utility,
    G, binG (whole ranking) and unj_k (at each k of ks), from their definitions (trec_eval's
    m_infap.c, m_Rndcg.c, m_ndcg_rel.c, m_rbp_resid.c, m_utility.c, m_G.c, m_binG.c,
    m_unjudged.c). Unjudged: not judged, or judged below 0. The gain measures read the gains as
    NDCG does (gain_of), with the ranking in the order given (no tie averaging)."""
    ranked = cut(ranking, judgments, max_depth, judged_only)
    rels = [judgments.get(item) for item in ranked]
    flags = [relevant(rel, min_relevance) for rel in rels]
    r = sum(relevant(rel, min_relevance) for rel in judgments.values())
    n, f = len(ranked), sum(flags)
    unjudged = [rel is None or rel < 0 for rel in rels]
    out = {}
    # infAP: at each relevant ranked item (rank i), 1/i for itself plus, for the judged items
    # above it, the share of them expected relevant: (rel + e) / (rel + nonrel + 2e)
    eps, total, rel_above, nonrel_above, judged_above = 0.00001, 0.0, 0, 0, 0
    for i, (rel, hit) in enumerate(zip(rels, flags), 1):
        if hit:
            total += (1 + judged_above * (rel_above + eps)
                      / (rel_above + nonrel_above + 2 * eps)) / i
            rel_above += 1
        elif rel is not None and rel >= 0:
            nonrel_above += 1
        if rel is not None:
            judged_above += 1
    out["infap"] = total / r if r else 0.0
    gains = [gain_of(rel, gain, gain_map, min_relevance) for rel in rels]
    ideal = sorted((g for g in (gain_of(rel, gain, gain_map, min_relevance)
                                for rel in judgments.values()) if g > 0), reverse=True)
    size = len(ideal)

    def dcg(values, depth):
        return sum(value * reference.discount(i) for i, value in enumerate(values[:depth], 1))

    # Rndcg: nDCG where the ideal's gain changes (and past it, once, when the ranking runs on)
    if r and size:
        changes = [b for b in range(1, size + 1) if b == size or ideal[b - 1] != ideal[b]]
        values = [dcg(gains, b) / dcg(ideal, b) for b in changes]
        if n >= size + 2:
            values.append(dcg(gains, n) / dcg(ideal, size))
        out["rndcg"] = sum(values) / len(values)
    else:
        out["rndcg"] = 0.0
    # ndcg_rel: nDCG at each ranked item with a gain; the whole ranking's for the ones not ranked
    with_gain = [i for i, g in enumerate(gains, 1) if g > 0]
    total = (sum(dcg(gains, i) / dcg(ideal, min(i, size)) for i in with_gain)
             + (size - len(with_gain)) * dcg(gains, n) / dcg(ideal, size)) if size else 0.0
    out["ndcg_rel"] = total / size if size and total > 0 else 0.0
    # rbp_resid: the largest rise of rbp if every unjudged ranked item were relevant
    out["rbp_resid"] = (p ** n + (1 - p) * sum(p ** (i - 1) for i, u in enumerate(unjudged, 1)
                                                if u)) if any(unjudged) else 0.0
    w1, w2, w3, w4 = weights
    out["utility"] = (w1 * f + w2 * (n - f) + w3 * (r - f) + w4 * (num_docs + f - n - r)
                      if has_ranking else 0.0)
    for k in ks:
        out[f"unj@{k}"] = sum(unjudged[:k]) / k
    # G: each gain over log2(2 + the cost so far - the gain so far)
    cost = gained = g_total = 0.0
    for i, g in enumerate(gains, 1):
        cost += max(ideal[i - 1] if i <= size else 0.0, 1.0)
        gained += g
        if g != 0:
            g_total += g / math.log2(2 + cost - gained)
    out["g"] = g_total / sum(ideal) if size else 0.0
    # binG: the j-th relevant ranked item, at rank i, scores 1 / log2(2 + i - j)
    hits = [i for i, hit in enumerate(flags, 1) if hit]
    out["bing"] = sum(1 / math.log2(2 + i - j) for j, i in enumerate(hits, 1)) / r if r else 0.0
    return out
