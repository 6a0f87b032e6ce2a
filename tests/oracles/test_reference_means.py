"""One rule for every mean (ndcg_duck/means.py): each reported mean is the exactly rounded mean
of the per-user values, the same bits through every door (eval, in batches or not, on any number
of threads; eval's segments; compare) as a plain-Python reference with fractions.Fraction."""

from fractions import Fraction

import duckdb
import numpy as np
import pyarrow as pa
import pytest

import ndcg_duck
from ndcg_duck import means
from ndcg_duck.comparison.compare import compare
from ndcg_duck.report.segments import by_segment

METRICS = ["ndcg", "map", "recall", "mrr", "r_precision", "bpref"]  # the last two without a cutoff
K = [5, 10]


def exact_mean(values) -> float:
    """The reference: the sum of the doubles as an exact fraction, divided, rounded once."""
    values = [Fraction(v) for v in values if v is not None]
    return float(sum(values) / len(values))


def test_exact_means_match_fractions_on_awkward_values():
    rng = np.random.default_rng(3)
    con = duckdb.connect()
    ndcg_duck.register(con)
    for trial in range(40):
        n = int(rng.integers(1, 500))
        x = rng.random(n) ** int(rng.integers(1, 9)) - (0.5 if trial % 2 else 0.0)
        x[rng.random(n) < 0.1] = 0.0
        if trial == 0:
            x[:4] = [5e-324, 1e-310, 2.0 ** -1000, 1e300]  # subnormal, tiny and huge values
        groups = np.arange(n) % 3
        con.execute("CREATE OR REPLACE TABLE t AS SELECT unnest($1) AS x, unnest($2) AS g",
                    [x.tolist(), groups.tolist()])
        assert means.exact_means(con, "t", {"x": "x"}) == {("x",): exact_mean(x.tolist())}
        by_group = means.exact_means(con, "t", {"x": "x"}, groups=("g",))
        assert by_group == {(g, "x"): exact_mean(x[groups == g].tolist())
                            for g in range(3) if (groups == g).any()}


def test_exact_means_at_the_edge_of_one_scaled_sum():
    # a column is added up in one HUGEINT sum when its values, scaled to whole numbers, fit
    # (means.shift); at the widest span that fits and one power of two past it (an exponent per
    # value then), full 53-bit mantissas of both signs give the Fraction reference's bits
    rng = np.random.default_rng(5)
    con = duckdb.connect()
    ndcg_duck.register(con)
    n = 1000  # 10 bits of count: 2**(high + 1 + 52 - low) * 2**10 <= 2**126 for high - low <= 63
    for high, scaled in ((23, True), (24, False)):
        x = (1 + rng.random(n)) * np.where(rng.random(n) < 0.5, 2.0 ** -40, 2.0 ** high)
        x *= np.where(rng.random(n) < 0.5, -1.0, 1.0)
        x[:2] = [2.0 ** -40 * (1 + 2.0 ** -52), 2.0 ** high * (2 - 2.0 ** -52)]
        assert (means.shift(float(np.abs(x).min()), float(np.abs(x).max()), n) is not None) \
            == scaled
        con.execute("CREATE OR REPLACE TABLE t AS SELECT unnest($1) AS x", [x.tolist()])
        assert means.exact_means(con, "t", {"x": "x"}) == {("x",): exact_mean(x.tolist())}


def test_one_pass_means_flag_what_their_shift_cannot_add_exactly():
    # exact_means adds each column up once, at a shift chosen before the scan from the size its
    # values are expected to have (sizes=, else means.UNBOUNDED) and the row count: a value finer
    # than that shift's resolution, or past the size, must send its column to a second pass
    con = duckdb.connect()
    ndcg_duck.register(con)
    values = {
        # 1e-40 rounds to 0 at a size of 1's shift (2**122 for 4 rows); the exact mean,
        # (2 + 2**-52 + 1e-40) / 4, lies just above the midpoint 0.5 + 2**-54 between two
        # doubles: without the tiny value it rounds (to even) to 0.5. Too wide a span for one
        # sum: an exponent per value.
        "tiny": ([1.0, 1.0, 2.0 ** -52, 1e-40], 1.0),
        # full mantissas near 2**-60, finer than an unbounded column's shift (2**103): one sum
        # at the shift their own range allows
        "small": ([2.0 ** -60 * 4 / 3, 2.0 ** -60 * 5 / 7, 2.0 ** -61 * 11 / 13, 2.0 ** -59 / 3],
                  None),
        # past its size of 1: left out of the first sum (which it would overflow), flagged
        "huge": ([0.5, 1e300, -3.0, 2.0 ** -40], 1.0)}
    assert exact_mean(values["tiny"][0]) == 0.5 + 2.0 ** -53
    assert exact_mean(values["tiny"][0][:3] + [0.0]) == 0.5
    con.execute("CREATE TABLE t AS SELECT range AS i FROM range(1, 5)")  # (lists count from 1)
    columns = {name: f"{list(x)!r}[i]" for name, (x, _) in values.items()}
    found = means.exact_means(con, "t", columns,
                              sizes={name: size for name, (_, size) in values.items() if size})
    assert found == {(name,): exact_mean(x) for name, (x, _) in values.items()}
    with pytest.raises(duckdb.Error, match="a mean over a value that is not finite: nan"):
        means.exact_means(con, "t", {"x": "CASE WHEN i = 2 THEN 'nan'::DOUBLE ELSE i / 4 END"},
                          sizes={"x": 1.0})


def test_mean_of_sum_is_the_partitioned_engines_door():
    # an engine that adds exact partial sums (as integers times 2**exponent) gets the same bits
    values = [0.1, 0.2, 0.7, 1 / 3, 2 / 3, 1e-20]
    scaled = sum(int(Fraction(v) * 2 ** 1100) for v in values)
    assert means.mean_of_sum(scaled, -1100, len(values)) == exact_mean(values)
    assert means.mean_of_sum(0, 0, 0) is None and means.mean_of_sum(0, -5, 3) == 0.0


@pytest.fixture(scope="module")
def runs():
    """Two runs of random rankings with graded judgments over 3000 users: per-user values of
    every kind of mantissa, whose fsum / count is off by one bit for some of the means."""
    rng = np.random.default_rng(1)
    users = [f"u{i:05d}" for i in range(3000)]
    rels = {"user_id": [], "item_id": [], "relevance": []}
    for user in users:
        for item in rng.choice(40, size=int(rng.integers(1, 8)), replace=False):
            rels["user_id"].append(user)
            rels["item_id"].append(f"i{item}")
            rels["relevance"].append(int(rng.integers(1, 4)))
    recs = [pa.table({"user_id": users,
                      "items": [[f"i{j}" for j in rng.permutation(40)[:12]] for _ in users]})
            for _ in range(2)]
    segments = pa.table({"user_id": users, "group": [f"g{i % 4}" for i in range(len(users))]})
    return recs, pa.table(rels), segments


def _per_user(recs, rels):
    return ndcg_duck.evaluate(recs, rels, k=K, metrics=METRICS).per_user


def test_eval_means_are_exact_on_any_threads_and_batches(runs):
    recs, rels, _ = runs
    per_user = _per_user(recs[0], rels)
    columns = [c for c in per_user.column_names[1:] if c.split("@")[0] in METRICS]
    reference = {c: exact_mean(per_user.column(c).to_pylist()) for c in columns}
    con = duckdb.connect()
    con.register("per_user", per_user)
    fsum = {c: con.sql(f'SELECT fsum("{c}") / count("{c}") FROM per_user').fetchall()[0][0]
            for c in columns}
    assert fsum != reference  # the data tells the two rules apart
    for settings in ({"threads": 1}, {"threads": 2}, {"threads": 2, "batch_users": 700}):
        summary = ndcg_duck.evaluate(recs[0], rels, k=K, metrics=METRICS, per_user=False,
                                     **settings).summary
        assert {c: summary[c] for c in columns} == reference, settings


def test_segment_and_compare_means_are_evals(runs):
    recs, rels, segments = runs
    tables = [_per_user(r, rels) for r in recs]
    summary = ndcg_duck.evaluate(recs[0], rels, k=K, metrics=METRICS).summary
    columns = [c for c in tables[0].column_names[1:] if c in summary]
    groups = segments.column("group").to_pylist()
    rows = by_segment(tables[0], summary, segments, "group")
    for row in rows:
        chosen = [i for i, g in enumerate(groups) if row["segment"] in ("(all)", g)]
        for c in columns:
            values = tables[0].column(c).to_pylist()
            assert row[c] == exact_mean([values[i] for i in chosen]), (row["segment"], c)
    result = compare(rels, [("a", recs[0]), ("b", recs[1])], k=K, metrics=METRICS,
                     segments=segments, by="group", test="none")
    for row in result.rows:
        name = row["metric"] + (f"@{row['cutoff']}" if row["cutoff"] else "")
        chosen = [i for i, g in enumerate(groups) if row["segment"] in ("(all)", g)]
        own = tables[0 if row["run"] == "a" else 1].column(name).to_pylist()
        assert row["mean"] == exact_mean([own[i] for i in chosen])
        if row["baseline"]:
            base = tables[0].column(name).to_pylist()
            assert row["diff"] == exact_mean([own[i] - base[i] for i in chosen])
