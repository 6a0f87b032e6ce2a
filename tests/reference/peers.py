"""Random runs for the tests that run a peer library's own code beside ndcg-duck
(tests/oracles/test_peer_*.py): the same lists, train rows and catalogue, written as the files
ndcg-duck reads and kept as plain Python for the peer's own data frames."""

from __future__ import annotations

import random
from dataclasses import dataclass


@dataclass
class Run:
    """lists {user: [items, best first]}; train [(user, item)] rows (repeats included); items
    {item: category}: the catalogue."""

    lists: dict
    train: list
    items: dict


def random_run(seed: int = 32, users: int = 300, train_users: int = 80, catalogue: int = 60,
               longest: int = 12) -> Run:
    """`users` lists of 1 to `longest` distinct items (one-item lists included) from a catalogue
    of `catalogue` items in 5 categories. Popular items are drawn more often, so train's counts
    tie; the last sixth of the catalogue is never in train (unseen: pop 0) and its last two
    items are never recommended (coverage and Gini count them as zeros). train: `train_users`
    users (ids apart from the lists' users), 1 to 8 items each, a fifth of the rows twice (rows
    and distinct users then differ)."""
    rng = random.Random(seed)
    items = {f"i{j:02d}": f"c{rng.randrange(5)}" for j in range(catalogue)}
    names = list(items)
    seen = names[:catalogue - catalogue // 6]
    shown = names[:-2]
    skewed = [1 / (j + 1) for j in range(len(seen))]
    train = []
    for t in range(train_users):
        # sorted: a set's order of text varies from run to run (PYTHONHASHSEED)
        for item in sorted(set(rng.choices(seen, weights=skewed, k=rng.randint(1, 8)))):
            train += [(f"t{t:02d}", item)] * (2 if rng.random() < 0.2 else 1)
    rng.shuffle(train)
    weights = [1 / (j + 3) for j in range(len(shown))]
    lists = {}
    for u in range(users):
        top = []
        length = rng.choice([1, 1] + list(range(2, longest + 1)))
        while len(top) < length:
            item = rng.choices(shown, weights=weights)[0]
            if item not in top:
                top.append(item)
        lists[f"u{u:03d}"] = top
    return Run(lists, train, items)


def write(run: Run, folder, judged: bool):
    """recs.csv (user_id, item_id, rank), train.csv (user_id, item_id), items.csv (item_id,
    category) in `folder`, and when `judged` rels.csv judging every listed user (its first item
    relevant): (recs, rels or None, train, items) paths as text."""
    recs = folder / "recs.csv"
    recs.write_text("user_id,item_id,rank\n" + "".join(
        f"{u},{i},{r}\n" for u, top in run.lists.items() for r, i in enumerate(top, 1)))
    (folder / "train.csv").write_text("user_id,item_id\n" + "".join(
        f"{u},{i}\n" for u, i in run.train))
    (folder / "items.csv").write_text("item_id,category\n" + "".join(
        f"{i},{c}\n" for i, c in run.items.items()))
    rels = None
    if judged:
        rels = folder / "rels.csv"
        rels.write_text("user_id,item_id,relevance\n" + "".join(
            f"{u},{top[0]},1\n" for u, top in run.lists.items()))
    return (str(recs), rels and str(rels), str(folder / "train.csv"),
            str(folder / "items.csv"))


def rows(run: Run):
    """The lists as (user, item, rank) rows, the train rows, the catalogue's (item, category)."""
    recs = [(u, i, r) for u, top in run.lists.items() for r, i in enumerate(top, 1)]
    return recs, list(run.train), list(run.items.items())
