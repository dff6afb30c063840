"""``run --shard i/n``: a project's flow runs split over n CI jobs without a queue.

A *unit* is one flow run: a plain flow is one unit (its name), an episodic flow run with ``--episodes N`` is
N units (``name#k``, k = 0..N-1, the episode's index, not its seed, so ``--seed`` does not move episodes
between shards).  Every unit gets a stable key: the first 8 bytes of the SHA-256 of its UTF-8 name, read
big-endian (the same on every machine and Python, unlike ``hash()``, which is salted per process).  The
units are ordered by that key (the name breaks a tie) and dealt round-robin: the unit of rank r goes to
shard ``r % n + 1``.  So, for the same flow set and the same ``--episodes``:

* the n shards together run every unit exactly once (a partition), whatever the order of the flow files;
* the shards' sizes differ by at most one (plain ``hash % n`` can leave a shard empty on a small project);
* adding or removing a flow moves only the units after it in key order, by one shard.

Shard numbers are 1-based as in Playwright's ``--shard=1/3``.  A shard with no unit (more shards than flow
runs) runs nothing and passes: its reports are written, with no case.
"""
from __future__ import annotations

import hashlib
import re
from typing import Mapping, Sequence

__all__ = ["Shard", "ShardError", "parse_shard", "shard_key", "shard_units"]

_SHARD = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")

#: Most shards one split may have: a bound on a typo (``1/30000``) long before any CI runs that many jobs.
MAX_SHARDS = 1000


class ShardError(ValueError):
    """A ``--shard`` value that cannot be used; the message is one line naming the value and the form expected."""


class Shard(tuple):
    """``(index, count)``, 1 <= index <= count: shard ``index`` of ``count``."""

    __slots__ = ()

    def __new__(cls, index: int, count: int) -> "Shard":
        return super().__new__(cls, (index, count))

    @property
    def index(self) -> int:
        """1-based number of this shard."""
        return self[0]

    @property
    def count(self) -> int:
        """How many shards the flow runs are split into."""
        return self[1]

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def parse_shard(text: str) -> Shard:
    """``"2/3"`` -> ``Shard(2, 3)``.

    Raises
    ------
    ShardError
        Not of the form ``i/n`` with whole numbers, ``n`` below 1 or above :data:`MAX_SHARDS`, or ``i`` outside
        ``1..n``.
    """
    m = _SHARD.match(text or "")
    if not m:
        raise ShardError(f"--shard expects i/n such as 1/3 (shard i of n, i from 1 to n), got {text!r}")
    index, count = int(m.group(1)), int(m.group(2))
    if not 1 <= count <= MAX_SHARDS:
        raise ShardError(f"--shard {text}: the number of shards must be from 1 to {MAX_SHARDS}, got {count}")
    if not 1 <= index <= count:
        raise ShardError(f"--shard {text}: the shard number must be from 1 to {count}, got {index}")
    return Shard(index, count)


def shard_key(unit: str) -> int:
    """Stable 64-bit key of a unit name: SHA-256 of its UTF-8 bytes, first 8 bytes big-endian."""
    return int.from_bytes(hashlib.sha256(unit.encode("utf-8")).digest()[:8], "big")


def shard_units(names: Sequence[str], episodes: Mapping[str, int], shard: Shard) -> dict[str, list[int]]:
    """The flow runs of ``shard``: flow name -> the episode indexes (0-based) it runs there.

    ``names`` are the flows of the run (after ``--flow`` and ``-k``); ``episodes`` maps each episodic flow to
    its number of runs N (its units are ``name#0`` .. ``name#N-1``); a flow not in it is plain (one unit, its
    name).  The result keeps the order of ``names`` and lists only flows with at least one run in
    this shard, each flow's indexes ascending.
    """
    units: list[tuple[int, str, str, int]] = []
    for name in dict.fromkeys(names):
        if name not in episodes:
            units.append((shard_key(name), name, name, 0))
            continue
        for k in range(max(1, int(episodes[name]))):
            unit = f"{name}#{k}"
            units.append((shard_key(unit), unit, name, k))
    units.sort()
    mine: dict[str, list[int]] = {}
    for rank, (_, _, name, k) in enumerate(units):
        if rank % shard.count == shard.index - 1:
            mine.setdefault(name, []).append(k)
    return {name: sorted(mine[name]) for name in dict.fromkeys(names) if name in mine}
