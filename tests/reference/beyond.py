"""Beyond-accuracy metrics in plain Python, straight from the formulas in issue 22, for the
tests to compare the SQL (sql/ndcg_beyond.sql) with. tops: {user: [items of top_k, in order]}."""

from __future__ import annotations

import math
from itertools import combinations


def popularity(train):
    """pop(i) (distinct users per item) and U (distinct users) of (user, item) pairs."""
    users = {}
    for user, item in train:
        users.setdefault(item, set()).add(user)
    return {item: len(who) for item, who in users.items()}, len({u for u, _ in train})


def run_metrics(tops, catalogue):
    """coverage, gini, entropy of one run's top_k lists over a catalogue (a set)."""
    n = len(catalogue)
    c = {item: 0 for item in catalogue}
    for top in tops.values():
        for item in top:
            if item in c:
                c[item] += 1
    coverage = sum(1 for v in c.values() if v > 0) / n
    values = sorted(c.values())
    total = sum(values)
    gini = (sum((2 * j - n - 1) * v for j, v in enumerate(values, start=1)) / (n * total)
            if total else 0.0)
    entropy = -sum(v / total * math.log2(v / total) for v in values if v > 0) if total else 0.0
    return coverage, gini, entropy


def head(pop, catalogue, share=0.2):
    """The head: the floor(share * n) most popular catalogue items, ties by item id as text."""
    order = sorted(catalogue, key=lambda i: (-pop.get(i, 0), str(i)))
    return set(order[:math.floor(share * len(order))])


def user_metrics(top, pop, users, heads):
    """novelty, popularity, tail of one user's top_k (None for an empty list)."""
    if not top:
        return None
    novelty = sum(-math.log2((pop.get(i, 0) + 1) / (users + 1)) for i in top) / len(top)
    arp = sum(pop.get(i, 0) for i in top) / len(top)
    tail = sum(1 for i in top if i not in heads) / len(top)
    return novelty, arp, tail


def ild(top, embedding=None, category=None):
    """Mean 1 - cosine (embedding: {item: vector}) else 1 - Jaccard (category: {item: set})."""
    if len(top) < 2:
        return None
    def distance(a, b):
        if embedding is not None:
            x, y = embedding[a], embedding[b]
            dot = sum(p * q for p, q in zip(x, y))
            return 1 - dot / (math.sqrt(sum(p * p for p in x)) * math.sqrt(sum(q * q for q in y)))
        ca, cb = set(category[a]), set(category[b])
        return 1 - len(ca & cb) / len(ca | cb)
    pairs = list(combinations(top, 2))
    return sum(distance(a, b) for a, b in pairs) / len(pairs)


def personalization(tops):
    """1 - the mean over ordered pairs of distinct users of |top(u) & top(v)| / L, L the mean
    list length: pair by pair, for the tests to check ndcg_beyond_personalization_of's algebra."""
    users = list(tops)
    length = sum(len(top) for top in tops.values()) / len(users)
    overlaps = [len(set(tops[u]) & set(tops[v])) for u in users for v in users if u != v]
    return 1 - sum(overlaps) / len(overlaps) / length
