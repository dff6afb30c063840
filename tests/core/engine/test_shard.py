"""``run --shard i/n``'s split (core.engine.shard): a partition of the flow runs, balanced, independent of order."""
from __future__ import annotations

import pytest

from core.engine.shard import Shard, ShardError, parse_shard, shard_key, shard_units

NAMES = [f"flow_{i:02d}" for i in range(23)]


def _all(n: int, names=NAMES, episodes=None) -> list[dict[str, list[int]]]:
    return [shard_units(names, episodes or {}, Shard(i, n)) for i in range(1, n + 1)]


@pytest.mark.parametrize("n", [1, 2, 3, 5, 23, 40])
def test_the_shards_cover_every_flow_run_exactly_once_and_differ_by_at_most_one(n: int) -> None:
    episodes = {"flow_03": 4, "flow_07": 2}
    parts = _all(n, episodes=episodes)
    units = [(name, k) for part in parts for name, ks in part.items() for k in ks]
    want = [(name, k) for name in NAMES for k in range(episodes.get(name, 1))]
    assert sorted(units) == sorted(want) and len(units) == len(want)
    sizes = [sum(len(ks) for ks in part.values()) for part in parts]
    assert max(sizes) - min(sizes) <= 1


def test_the_split_does_not_depend_on_the_order_of_the_flow_files() -> None:
    a = _all(3)
    b = _all(3, names=list(reversed(NAMES)))
    assert [set(p) for p in a] == [set(p) for p in b]


def test_the_key_is_stable_across_processes() -> None:
    """SHA-256 of the name's UTF-8 bytes, first 8 bytes big-endian: fixed, unlike the per-process salted hash()."""
    import hashlib

    assert shard_key("x") == int.from_bytes(hashlib.sha256(b"x").digest()[:8], "big")


def test_adding_a_flow_moves_few_others() -> None:
    before = {name: i for i, part in enumerate(_all(4), 1) for name in part}
    after = {name: i for i, part in enumerate(_all(4, names=NAMES + ["flow_new"]), 1) for name in part}
    moved = [n for n in NAMES if before[n] != after[n]]
    assert len(moved) < len(NAMES)


@pytest.mark.parametrize("text,word", [("3", "expects i/n"), ("a/b", "expects i/n"), ("0/3", "from 1 to 3"),
                                       ("4/3", "from 1 to 3"), ("1/0", "number of shards"),
                                       ("1/100000", "number of shards"), ("", "expects i/n")])
def test_a_bad_value_is_one_clear_line(text: str, word: str) -> None:
    with pytest.raises(ShardError) as exc:
        parse_shard(text)
    assert word in str(exc.value) and "\n" not in str(exc.value)


def test_a_good_value() -> None:
    s = parse_shard(" 2/3 ")
    assert (s.index, s.count, str(s)) == (2, 3, "2/3")
