"""GC victim policies written in Python (issue 18 part 4)."""

import pytest

import flashlab


def _same(a, b):
    da, db = a.to_dict(), b.to_dict()
    for k in ("wall_time_s", "config"):
        da.pop(k), db.pop(k)
    return da == db


def test_python_greedy_equals_builtin_greedy(small):
    over = dict(small, **{"workload.requests": 30000, "workload.pattern": "hotcold"})
    builtin = flashlab.run({}, dict(over, **{"gc.victim": "greedy"}))
    calls = []

    def greedy(cands):
        calls.append(len(cands))
        return min(cands, key=lambda b: b.valid)

    mine = flashlab.run({}, over, gc_victim=greedy)
    assert builtin.gc_runs > 0
    assert len(calls) == builtin.gc_runs
    assert _same(builtin, mine)
    assert mine.config["gc"]["victim"] == "external"


def test_python_greedy_equals_builtin_under_timing_and_dftl(small):
    over = dict(small, **{"workload.requests": 20000, "ftl.mapping": "dftl", "ftl.map_cache_entries": 512})
    builtin = flashlab.run({}, over)
    mine = flashlab.run({}, over, gc_victim=lambda c: min(c, key=lambda b: b.valid).block)
    assert builtin.gc_runs > 0
    assert _same(builtin, mine)


def test_the_view_is_read_only_and_consistent(small):
    seen = []

    def check(cands):
        assert isinstance(cands, tuple) and len(cands) > 0
        assert all(0 <= b.valid <= cands.pages_per_block for b in cands)
        assert [b.valid for b in cands] == sorted(b.valid for b in cands)
        assert all(b.age >= 0 and b.erase_count >= 0 for b in cands)
        assert all(b.age <= cands.now for b in cands)
        with pytest.raises(AttributeError):
            cands[0].valid = 0
        seen.append(cands.plane)
        return cands[0]

    flashlab.run({}, dict(small, **{"workload.requests": 20000}), gc_victim=check)
    assert len(set(seen)) > 1  # several planes asked


def test_a_bad_policy_costs_more(small):
    over = dict(small, **{"workload.requests": 20000})
    greedy = flashlab.run({}, over)
    # The most valid pages that still frees one: the worst sensible choice.
    worst = flashlab.run(
        {}, over, gc_victim=lambda c: max((b for b in c if b.valid < c.pages_per_block), key=lambda b: b.valid)
    )
    assert worst.waf > greedy.waf * 1.2


def test_errors_in_the_policy(small):
    over = dict(small, **{"workload.requests": 20000})

    def boom(cands):
        raise ValueError("no idea")

    with pytest.raises(flashlab.SimulationError, match="ValueError: no idea"):
        flashlab.run({}, over, gc_victim=boom)
    with pytest.raises(flashlab.SimulationError, match="not one of the plane's candidates"):
        flashlab.run({}, over, gc_victim=lambda c: 10**6)
    with pytest.raises(flashlab.SimulationError, match="must return a candidate's block id"):
        flashlab.run({}, over, gc_victim=lambda c: "first")
    with pytest.raises(flashlab.ConfigError, match="ftl.mapping"):
        flashlab.run({}, dict(over, **{"ftl.mapping": "bast", "ftl.log_blocks": 4}), gc_victim=lambda c: c[0])
