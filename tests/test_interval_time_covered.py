"""sql/intervals.sql interval_time_covered, the ordered pass advice.sql sums a rule's held time with, gives what
joining every piece to every island of the covering intervals' union gives (the join it replaced), on random
intervals: overlapping, touching, nested, zero-length and reversed ones, pieces that share time among them."""

from __future__ import annotations

import duckdb
from hypothesis import given, settings
from hypothesis import strategies as st

from libreyolo_profile.sqlfiles import sql_text

intervals = st.lists(st.tuples(st.integers(0, 60), st.integers(-5, 25)), max_size=25)

JOINED = """
WITH spans AS (SELECT 1 AS grp, s, e FROM covering)
SELECT coalesce(sum(interval_overlap_length(p.s, p.e, u.s, u.e)), 0)
FROM pieces p JOIN interval_union(spans) u ON p.s < u.e AND u.s < p.e
"""


@settings(max_examples=150, deadline=None)
@given(pieces=intervals, covering=intervals)
def test_the_ordered_pass_sums_what_the_join_sums(pieces, covering):
    con = duckdb.connect()
    try:
        con.execute(sql_text("intervals.sql"))
        for name, rows in (("pieces", pieces), ("covering", covering)):
            con.execute(f"CREATE TABLE {name} (s BIGINT, e BIGINT)")
            if rows:
                con.executemany(f"INSERT INTO {name} VALUES (?, ?)", [(s, s + d) for s, d in rows])
        joined = con.execute(JOINED).fetchone()[0]
        passed = con.execute("SELECT covered FROM interval_time_covered(pieces, covering)").fetchone()[0]
    finally:
        con.close()
    assert passed == joined
