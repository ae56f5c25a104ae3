"""Groups of partial copies that mean what they say: complete link over confirmed copies, never a chain.

Connected components over partial-copy pairs (single link) chain documents that share
nothing: two pages join through a third that copies from both, and 2,000 pages mixed from
the same 741 sentences made one group of 1,869. A group reads as "these are copies of each
other", so ``simdup groups --partial`` groups by complete link instead (Sørensen's
clustering by the farthest neighbour; in graph terms, a partition into cliques):

- The **units** are the near-duplicate groups (documents within fingerprint distance
  ``k``, joined into connected components as ``simdup groups`` joins them without
  ``--partial``) and the documents in none. A unit is never split or changed.
- Two units are **linked** when a document of one is a confirmed copy of a document of
  the other: found by the part lookup of either (:func:`simdup_es.groups.partial_copies`),
  or, for a pair neither lookup judged (the candidates of a widely copied text are cut
  at a limit), judged when a group needs it (``verify``).
- A **partial group** is a set of units of which every two are linked. Groups grow
  greedily, strongest copy first: the groups of a link's two units merge when every unit
  of one is linked to every unit of the other.

So every two members of a group copy from each other (or are near-duplicates of members
that do), no two groups could be merged, and a document that copies from two unrelated
sources joins the one it copies most from. Pure: :func:`complete_link` sees unit numbers
and links, and asks ``verify`` about the rest.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import NamedTuple

__all__ = ["Link", "complete_link", "group_pairs"]


class Link(NamedTuple):
    """A confirmed copy between units ``a`` and ``b``; ``strength``: the larger share of either side copied."""

    a: int
    b: int
    strength: float


def complete_link(units: int, links: Iterable[Link], verify: Callable[[int, int], bool] | None = None
                  ) -> list[list[int]]:
    """The partial groups of ``units`` units (numbered from 0) given the confirmed ``links`` between them.

    Links are taken strongest first (ties by unit numbers); ``verify(a, b)`` (``a < b``)
    says whether two units no link joins are linked all the same (``None``: they are not),
    and is asked about each pair at most once. Returns the groups of two units or more,
    each sorted, in the order of their first unit.
    """
    known = {(min(a, b), max(a, b)) for a, b, _ in links if a != b}
    ordered = sorted({(min(a, b), max(a, b), s) for a, b, s in links if a != b}, key=lambda x: (-x[2], x[0], x[1]))
    judged: dict[tuple[int, int], bool] = {}

    def linked(a: int, b: int) -> bool:
        pair = (min(a, b), max(a, b))
        if pair in known:
            return True
        if verify is None:
            return False
        if pair not in judged:
            judged[pair] = verify(*pair)
        return judged[pair]

    group_of = list(range(units))
    members: dict[int, list[int]] = {}
    for a, b, _ in ordered:
        ga, gb = group_of[a], group_of[b]
        if ga == gb:
            continue
        one, other = members.get(ga, [ga]), members.get(gb, [gb])
        if all(linked(x, y) for x in one for y in other):
            if len(one) < len(other):
                (ga, one), (gb, other) = (gb, other), (ga, one)
            members[ga] = one + other
            members.pop(gb, None)
            for unit in other:
                group_of[unit] = ga
    return sorted(sorted(group) for group in members.values())


def group_pairs(groups: Sequence[Sequence[int]], first: Sequence[int]) -> list[tuple[int, int]]:
    """Pairs of positions that join each group's units into one component: the first document of the group's
    first unit with the first document of each other unit (``first[unit]``)."""
    return [(first[group[0]], first[unit]) for group in groups for unit in group[1:]]
