"""Rebuild the example files from the literal data below: python examples/make_examples.py"""

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

HERE = Path(__file__).parent

# Ten recommended songs per listener, best first.
RECS = {
    "ana": ["s01", "s07", "s03", "s12", "s05", "s09", "s02", "s14", "s11", "s04"],
    "ben": ["s22", "s21", "s03", "s25", "s28", "s07", "s24", "s26", "s23", "s30"],
    "chloé": ["s40", "s41", "s44", "s42", "s47", "s49", "s43", "s45", "s48", "s46"],
    "dev": ["s50", "s51", "s52", "s53", "s54", "s55", "s56", "s57", "s58", "s59"],
    "eli": ["s60", "s61", "s62", "s63", "s64", "s65", "s66", "s67", "s68", "s69"],
}

# A second model's recommendations for the same listeners, to compare with the first.
RECS_NEW = {
    "ana": ["s01", "s08", "s03", "s07", "s12", "s04", "s05", "s09", "s02", "s14"],
    "ben": ["s29", "s22", "s21", "s25", "s03", "s28", "s07", "s24", "s26", "s23"],
    "chloé": ["s41", "s47", "s40", "s49", "s44", "s42", "s43", "s45", "s48", "s46"],
    "dev": ["s50", "s51", "s52", "s53", "s54", "s55", "s56", "s57", "s58", "s90"],
    "eli": ["s60", "s61", "s62", "s63", "s64", "s65", "s66", "s67", "s68", "s69"],
}

# How much each listener listens: a segment to break results down by (fay has none).
ACTIVITY = [("ana", "heavy"), ("ben", "heavy"), ("chloé", "light"), ("dev", "light"),
            ("eli", "light")]

# The listening the models learned from (train: one row per play), for --by user-activity and
# --by item-popularity: ana played 7 songs, ben 5, chloé 3, eli 2, dev 1; fay none (cold).
HISTORY = [("ana", s) for s in ("s01", "s03", "s07", "s08", "s21", "s40", "s44")] + \
    [("ben", s) for s in ("s01", "s03", "s21", "s25", "s40")] + \
    [("chloé", s) for s in ("s01", "s40", "s44")] + \
    [("eli", "s01"), ("eli", "s03"), ("dev", "s01")]

# Held-out listening, graded: 3 = on repeat, 2 = saved, 1 = played through, 0 = skipped.
RELEVANCE = [
    ("ana", "s01", 3), ("ana", "s03", 2), ("ana", "s04", 1), ("ana", "s08", 3), ("ana", "s02", 0),
    ("ben", "s21", 1), ("ben", "s25", 2), ("ben", "s29", 3),
    ("chloé", "s40", 2), ("chloé", "s42", 2), ("chloé", "s43", 1), ("chloé", "s44", 3),
    ("dev", "s90", 2), ("dev", "s91", 1),
    ("fay", "s70", 1), ("fay", "s71", 2),
]


def main():
    users = list(RECS)
    pq.write_table(pa.table({"user_id": users, "items": [RECS[u] for u in users]}),
                   HERE / "recs.parquet")
    pq.write_table(pa.table({"user_id": users, "items": [RECS_NEW[u] for u in users]}),
                   HERE / "recs_new.parquet")
    with open(HERE / "listeners.csv", "w", encoding="utf-8") as out:
        out.write("user_id,activity\n")
        for row in ACTIVITY:
            out.write(",".join(row) + "\n")
    with open(HERE / "history.csv", "w", encoding="utf-8") as out:
        out.write("user_id,item_id\n")
        for row in HISTORY:
            out.write(",".join(row) + "\n")
    with open(HERE / "recs.json", "w", encoding="utf-8") as out:
        json.dump([{"user_id": u, "items": RECS[u]} for u in users], out, ensure_ascii=False,
                  indent=1)
    for name, recs in (("recs_long.csv", RECS), ("recs_new_long.csv", RECS_NEW)):
        with open(HERE / name, "w", encoding="utf-8") as out:
            out.write("user_id,item_id,rank\n")
            for u in users:
                for rank, item in enumerate(recs[u], start=1):
                    out.write(f"{u},{item},{rank}\n")
    with open(HERE / "relevance.csv", "w", encoding="utf-8") as out:
        out.write("user_id,item_id,relevance\n")
        for row in RELEVANCE:
            out.write(",".join(map(str, row)) + "\n")


if __name__ == "__main__":
    main()
