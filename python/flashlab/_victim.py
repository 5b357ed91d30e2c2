"""GC victim policies written in Python (``flashlab.run(..., gc_victim=f)``).

The FTL calls ``f(candidates)`` each time a plane needs a victim. ``candidates`` is a
read-only :class:`Candidates` (a tuple of :class:`Block`, listed fewest valid pages
first, in the order built-in ``greedy`` prefers among equals; with ``.plane``,
``.pages_per_block`` and ``.now``, the host pages written so far). ``f`` returns one
of the blocks (or its ``block`` id). So ``lambda c: min(c, key=lambda b: b.valid)``
is exactly the built-in greedy policy.
"""

from __future__ import annotations

from typing import Any, Callable, NamedTuple, Optional, Sequence, Tuple, Union


class Block(NamedTuple):
    """One GC candidate (a closed block) as the policy sees it."""

    block: int
    valid: int
    erase_count: int
    age: int
    """Host pages written since the block's last page was programmed."""
    temperature: Optional[float]
    """Seed 001's block temperature where a hot-data placement tracks it, else None."""


class Candidates(tuple):
    """The candidate blocks of one plane (a read-only tuple of :class:`Block`)."""

    plane: int
    pages_per_block: int
    now: int

    def __new__(cls, blocks: Sequence[Block], plane: int, pages_per_block: int, now: int) -> "Candidates":
        self = super().__new__(cls, blocks)
        self.plane, self.pages_per_block, self.now = plane, pages_per_block, now
        return self


VictimPolicy = Callable[[Candidates], Union[Block, int]]


def wrap(policy: VictimPolicy) -> Callable[[Tuple[int, int, int], list], int]:
    """The callable the native run calls: plain tuples in, a block id out."""

    def choose(info: Tuple[int, int, int], rows: list) -> Any:
        cands = Candidates([Block(*r) for r in rows], *info)
        chosen = policy(cands)
        return chosen.block if isinstance(chosen, Block) else chosen

    return choose
