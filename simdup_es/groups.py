"""Duplicate groups: connected components of near-duplicate pairs, written back onto the documents.

``simdup groups`` reads every fingerprint through the store seam (:meth:`Store.scan
<simdup_es.store.base.Store.scan>`), finds all pairs within Hamming distance ``k`` of the same
fingerprint version, optionally keeps only those the comparison matrix confirms or adds
partial copies, joins the pairs into connected components and writes ``dup_group``,
``dup_group_size`` and ``dup_kind`` where they changed. Kinds, group ids, what is written and
how it reads: docs/groups.md, "How a full run works". The pure parts (pairs, components,
ids, the plan of writes, the matrix filter) come first; :func:`update_groups` is the job
that runs them over a store.
"""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import logging
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from .fingerprint import Doc
from .join import UnionFind, components, join_pairs
from .keys import check_k
from .partial_groups import Link, complete_link, group_pairs
from .store.base import Key, Members, Store

if TYPE_CHECKING:
    from .compare import Comparison
    from .multilevel import CommonText, Kind, MultiParams, PartCandidate
    from .parts import PartPrinter

log = logging.getLogger(__name__)

DEFAULT_THRESHOLD = 0.5
"""With the matrix: share of either document that must be copied in the other."""

NEAR_DUPLICATE: Kind = "near-duplicate"
PARTIAL: Kind = "partial"

Membership = tuple[str, int]  # (group id, group size)


# --- pure -----------------------------------------------------------------------------------


def near_pairs(fingerprints: np.ndarray, versions: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """All ``(i, j, d)`` with ``i < j``, the same version code and distance ``d <= k``, nearest first.

    ``versions`` holds a small integer per fingerprint; negative means "no
    fingerprint" and never pairs. ``k`` is 0 to 7, as every lookup takes it (:func:`simdup_es.keys.check_k`).
    """
    check_k(k)
    fps = np.asarray(fingerprints, dtype=np.uint64)
    codes = np.asarray(versions, dtype=np.int64)
    parts = []
    for code in np.unique(codes[codes >= 0]).tolist():
        pos = np.flatnonzero(codes == code)
        i, j, d = join_pairs(fps[pos], k)
        parts.append((pos[i], pos[j], d))
    if not parts:
        return np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0, np.uint8)
    i = np.concatenate([p[0] for p in parts])
    j = np.concatenate([p[1] for p in parts])
    d = np.concatenate([p[2] for p in parts])
    i, j = np.minimum(i, j), np.maximum(i, j)
    order = np.lexsort((j, i, d))
    return i[order], j[order], d[order]


def distinct(fingerprints: np.ndarray, versions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The distinct ``(fingerprint, version)`` pairs ("nodes") and how many documents share each.

    Returns ``(fingerprints, version codes, counts)``, by version code, then
    fingerprint. Entries with a negative version code are left out.
    """
    fps = np.asarray(fingerprints, dtype=np.uint64)
    codes = np.asarray(versions, dtype=np.int64)
    parts = []
    for code in np.unique(codes[codes >= 0]).tolist():
        values, counts = np.unique(fps[codes == code], return_counts=True)
        parts.append((values, np.full(len(values), code, np.int64), counts))
    if not parts:
        return np.empty(0, np.uint64), np.empty(0, np.int64), np.empty(0, np.int64)
    return tuple(np.concatenate([p[n] for p in parts]) for n in range(3))  # type: ignore[return-value]


def grouped_nodes(i: np.ndarray, j: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """The nodes in a group: in a near pair, or shared by two or more documents (exact duplicates)."""
    return np.union1d(np.union1d(i, j), np.flatnonzero(np.asarray(counts) >= 2)).astype(np.int64)


def doc_pairs(doc_nodes: Sequence[int], node_pairs: Iterable[tuple[int, int]], *, every: bool = False
              ) -> Iterator[tuple[int, int]]:
    """Document pairs from node pairs; ``doc_nodes[p]`` is the node of document ``p`` (negative: none).

    By default a smaller set with the same components as all pairs: each
    document with the first document of its node, and the first documents of
    the two nodes of each pair (one pair per node pair, not one per document pair). With ``every``, all pairs: exact
    duplicates first, then the pairs of each node pair in the order given (so
    nearest first when ``node_pairs`` is), as the comparison matrix needs.
    """
    members: dict[int, list[int]] = defaultdict(list)
    for pos, node in enumerate(doc_nodes):
        if node >= 0:
            members[node].append(pos)
    for docs in members.values():
        if every:
            yield from itertools.combinations(docs, 2)
        else:
            yield from ((docs[0], other) for other in docs[1:])
    for a, b in node_pairs:
        if a in members and b in members:
            if every:
                yield from itertools.product(members[a], members[b])
            else:
                yield members[a][0], members[b][0]


def group_id(key: Key) -> str:
    """A group's id from its first member's key: 16 hex digits of SHA-1 of ``index/_id`` (or ``id``)."""
    return hashlib.sha1("/".join(key).encode("utf-8", "surrogatepass")).hexdigest()[:16]


def assign_groups(keys: Sequence[Key], pairs: Iterable[tuple[int, int]]) -> dict[int, Membership]:
    """``{position: (group id, size)}`` for every document in a group of two or more.

    ``keys[p]`` is the key (``(index, _id)``, or ``(id,)``) of position ``p``; the group id comes from
    the member whose key sorts first (:func:`group_id`).
    """
    members: dict[int, list[int]] = defaultdict(list)
    for pos, root in components(pairs).items():
        members[root].append(pos)
    out: dict[int, Membership] = {}
    for group in members.values():
        membership = (group_id(min(keys[p] for p in group)), len(group))
        for pos in group:
            out[pos] = membership
    return out


def link_kinds(near: Iterable[tuple[int, int]], partial: Iterable[tuple[int, int]] = ()) -> dict[int, Kind]:
    """``{position: kind}`` for every position in a pair: ``near-duplicate`` beats ``partial``."""
    kinds: dict[int, Kind] = {p: PARTIAL for pair in partial for p in pair}
    kinds.update((p, NEAR_DUPLICATE) for pair in near for p in pair)
    return kinds


@dataclass
class Plan:
    """The writes that bring stored groups to the computed ones."""

    set: list[tuple[Any, ...]] = field(default_factory=list)
    """``(position, group id, size, kind)`` to write (``position`` and the fields of ``desired``)."""
    clear: list[int] = field(default_factory=list)
    """Positions whose group fields become null."""
    unchanged: int = 0
    """Documents in a group whose fields are right already."""


def plan_writes(current: Mapping[int, tuple[Any, ...]], desired: Mapping[int, tuple[Any, ...]]) -> Plan:
    """What to write so that the stored group fields (``(dup_group, dup_group_size, dup_kind)``) equal ``desired``.

    ``current`` has the positions that store any of the fields now (others are
    taken as having none), as tuples of the same shape as ``desired``'s; positions
    missing from ``desired`` belong to no group. Writes are in position order.
    """
    plan = Plan()
    for pos in sorted(desired):
        if current.get(pos) == desired[pos]:
            plan.unchanged += 1
        else:
            plan.set.append((pos, *desired[pos]))
    plan.clear = sorted(pos for pos, now in current.items()
                        if pos not in desired and any(value is not None for value in now))
    return plan


@dataclass
class Confirmed:
    """Pairs the comparison matrix kept, and what it took."""

    pairs: list[tuple[int, int]] = field(default_factory=list)
    compared: int = 0
    already_joined: int = 0
    no_text: int = 0


def confirm_pairs(
    pairs: Iterable[tuple[int, int]],
    texts: Callable[[list[int]], Mapping[int, str | None]],
    similarity: Callable[[str, str], float],
    threshold: float = DEFAULT_THRESHOLD,
    *,
    chunk: int = 256,
    on_done: Callable[[int], None] | None = None,
) -> Confirmed:
    """Keep the pairs whose ``similarity`` is at least ``threshold``, in the order given (nearest first).

    ``texts`` fetches the texts of some positions (``None`` when a document has
    none); it is called once per ``chunk`` pairs with the positions that chunk
    still needs. A pair already joined through kept pairs is skipped: it could
    not change the components. ``components(result.pairs)`` therefore equals the
    components of all pairs that pass. ``on_done`` hears how many pairs were
    handled so far, after each chunk.
    """
    uf = UnionFind()
    out = Confirmed()
    pending = iter(pairs)
    done = 0
    while True:
        if on_done is not None and done:
            on_done(done)
        block = [(int(a), int(b)) for a, b in itertools.islice(pending, chunk)]
        done += len(block)
        if not block:
            return out
        needed = sorted({p for a, b in block if not uf.connected(a, b) for p in (a, b)})
        found = texts(needed) if needed else {}
        for a, b in block:
            if uf.connected(a, b):
                out.already_joined += 1
                continue
            ta, tb = found.get(a), found.get(b)
            if not ta or not tb:
                out.no_text += 1
                continue
            out.compared += 1
            if similarity(ta, tb) >= threshold:
                out.pairs.append((a, b))
                uf.union(a, b)


# --- the job -------------------------------------------------------------------------------


@dataclass
class GroupsSummary:
    """What one ``groups`` run found and wrote, and where the time went."""

    fingerprinted: int = 0
    distinct: int = 0
    versions: int = 0
    pairs: int = 0
    """Pairs of distinct fingerprints (same version) within ``k``."""
    exact: int = 0
    """Documents whose fingerprint (and version) another document has too: exact copies as far as the
    fingerprint sees, grouped without a pair (so there can be groups with 0 ``pairs``)."""
    members: int = 0
    """Documents read with their ids: those in groups, and those that had a group."""
    compared: int = 0
    confirmed: int = 0
    partial: int = 0
    """With ``partial``: copies (whole or partial) the part lookups confirmed between documents of different
    near-duplicate groups (or of none)."""
    verified: int = 0
    """With ``partial``: pairs of those groups no lookup had judged, judged to decide whether they may share a
    partial group (:mod:`simdup_es.partial_groups`)."""
    kinds: dict[str, int] = field(default_factory=dict)
    """Documents in groups by ``dup_kind``: ``near-duplicate``, ``partial``."""
    no_text: int = 0
    groups: int = 0
    grouped: int = 0
    largest: int = 0
    set: int = 0
    cleared: int = 0
    unchanged: int = 0
    gone: int = 0
    failed: list[tuple[str, str]] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)
    """Wall time of each phase: ``read`` (fingerprints), ``join`` (pairs), ``members`` (ids of the
    documents in groups), ``matrix`` (with one), ``partial`` (with partial copies), ``components`` (groups and the plan of
    writes), ``write``."""

    def to_dict(self) -> dict[str, Any]:
        out = {k: v for k, v in self.__dict__.items() if k not in ("failed", "seconds")}
        out["failed"] = len(self.failed)
        out["seconds"] = {k: round(v, 3) for k, v in self.seconds.items()}
        return out


def copied_share(compare: Callable[[str, str], Any]) -> Callable[[str, str], float]:
    """A ``similarity`` for :func:`update_groups`: the larger share of either text copied in the other.

    ``compare`` is the comparison matrix (e.g. :func:`simdup_es.search.comparer`).
    """

    def similarity(a: str, b: str) -> float:
        c = compare(a, b)
        return max(c.similarity_a, c.similarity_b)

    return similarity


def cached_texts(store: Store, docs: Members, field: str | None, prepare: Callable[[str], str] = str,
                 *, cache_size: int = 20_000) -> Callable[[list[int]], dict[int, str | None]]:
    """A ``texts`` function for :func:`confirm_pairs`: the store's texts, prepared, through a small cache."""
    cache: dict[int, str | None] = {}

    def texts(positions: list[int]) -> dict[int, str | None]:
        missing = [p for p in positions if p not in cache]
        if len(cache) + len(missing) > cache_size:
            cache.clear()
            missing = positions
        found = store.texts([docs.refs[p] for p in missing], field)
        cache.update((p, prepare(text) if text else None) for p, text in zip(missing, found))
        return {p: cache[p] for p in positions}

    return texts


@dataclass(frozen=True)
class PartialLinks:
    """How ``groups --partial`` finds partial copies: the indexing fingerprinter's levels, the matrix, thresholds."""

    printer: PartPrinter
    compare: Callable[[str, str], Comparison]
    params: MultiParams
    workers: int | None = None


@dataclass
class PartialCopies:
    """What :func:`partial_copies` found: the confirmed copies between units, and how to judge other pairs alike."""

    links: list[Link] = field(default_factory=list)
    """Copies between documents of different units, as :class:`~simdup_es.partial_groups.Link` of positions."""
    common: dict[int, CommonText] = field(default_factory=dict)
    """Each looked-up document's counts of its frequent keys (:meth:`simdup_es.multilevel.CommonText.frequent_only`):
    what its own lookup read as common, so that a pair judged later is judged as the lookup would have judged it."""


def partial_copies(store: Store, docs: Members, versions: Sequence[str], links: PartialLinks,
                   text_field: str | None = None, unit: Sequence[int] | None = None,
                   on_done: Callable[[int], None] | None = None) -> PartialCopies:
    """The copies (whole or partial, :mod:`simdup_es.multilevel`) between the documents of ``docs``, each pair once.

    Only documents of the printer's fingerprint version are looked up (``versions[p]``
    is ``docs``' ``p``). Pairs in the same ``unit`` (``unit[p]``: a near-duplicate group's
    number; default: every document its own) are not compared, nor is a pair found from
    its other side already. ``on_done`` hears how many documents were looked up so far
    (those of another version or without text count as done at once).
    """
    from .multilevel import CommonText, StoredText, find_copies, rare_levels
    from .search import counted_keys
    from .text import unify

    unit = unit if unit is not None else range(len(docs.keys))
    by_id = _positions_by_id(docs.keys)
    wanted = [p for p in range(len(docs.keys)) if versions[p] == links.printer.version]
    if len(wanted) < len(docs.keys):
        log.warning("%d of %d documents have another fingerprint version than %s and are not looked up for partial "
                    "copies: give the --idf/--marked-words they were indexed with", len(docs.keys) - len(wanted),
                    len(docs.keys), links.printer.version)

    def texts_of(positions: list[int]) -> list[str | None]:
        return store.texts([docs.refs[p] for p in positions], text_field)

    def with_text() -> Iterator[tuple[int, str]]:
        for start in range(0, len(wanted), 256):
            chunk = wanted[start : start + 256]
            yield from ((p, t) for p, t in zip(chunk, texts_of(chunk)) if t)

    # Candidates recur across queries: their unified texts are read and unified once, through a cache.
    unified_texts = cached_texts(store, docs, text_field, unify)
    limit = links.params.store_limit
    queries = links.printer.map_items_unified(with_text(), lambda item: Doc(item[1]), workers=links.workers)
    skipped = len(docs.keys) - len(wanted)
    out = PartialCopies()
    found_pairs: set[tuple[int, int]] = set()
    for done, ((p, _), _, levels, text) in enumerate(queries, skipped + 1):
        if on_done is not None:
            on_done(done)
        if levels is None or text is None:
            continue
        # Text that many stored documents hold (a footer, a template) links nothing: its keys are not asked for.
        common = CommonText.of(store.key_frequencies(counted_keys(levels.key_values())), text, links.params)
        levels = rare_levels(levels, common)
        # Not excluded by id in the store: on an index pattern another index may hold the same _id.
        found = store.part_candidates(levels.fingerprints, [k.key for k in levels.keys], levels.version,
                                      limit=limit + 1)
        found = _candidates_by_position(found, by_id, p)[:limit]
        out.common[p] = common.frequent_only()

        def texts(names: Sequence[str], p: int = p) -> dict[str, StoredText]:
            todo = [int(q) for q in names if unit[int(q)] != unit[p] and (min(p, int(q)), max(p, int(q)))
                    not in found_pairs]
            return {str(q): StoredText(t) for q, t in unified_texts(todo).items() if t}

        # Any copy the matrix confirms links (a whole copy past distance k is a near-duplicate by its shares).
        for m in find_copies(text, levels, [], found, texts, links.compare, common=common, params=links.params):
            pair = (min(p, int(m.id)), max(p, int(m.id)))
            if pair not in found_pairs:
                found_pairs.add(pair)
                out.links.append(Link(*pair, max(m.copied_query, m.copied_match)))
    return out


def pair_judge(store: Store, docs: Members, links: PartialLinks, found: PartialCopies, text_field: str | None
                 ) -> Callable[[int, int], bool]:
    """``verify`` for :func:`~simdup_es.partial_groups.complete_link` over positions: whether two documents no
    lookup judged are copies, judged as the first one's lookup would have (by the counts of its keys: its common
    text discounted)."""
    from .multilevel import judge
    from .text import unify

    unified_texts = cached_texts(store, docs, text_field, unify, cache_size=2_000)

    def verify(p: int, q: int) -> bool:
        common = found.common.get(p)
        if common is None:  # not looked up (another version, or no text)
            return False
        texts = unified_texts([p, q])
        a, b = texts.get(p), texts.get(q)
        if not a or not b:
            return False
        return judge(str(q), links.compare(a, b), None, links.params, (common.rarity(a), common.rarity(b))) is not None

    return verify


def _positions_by_id(keys: Sequence[Key]) -> dict[str, list[int]]:
    """Positions by bare id (the last part of a key): what :meth:`Store.part_candidates` names candidates by."""
    out: dict[str, list[int]] = defaultdict(list)
    for p, key in enumerate(keys):
        out[key[-1]].append(p)
    return out


def _candidates_by_position(found: Sequence[PartCandidate], by_id: Mapping[str, list[int]], query: int
                            ) -> list[PartCandidate]:
    """``found`` renamed to the positions (as strings) of the documents they are, ``query`` itself left out.

    A bare id that several documents share (one per index of a pattern) stands for
    each of them but ``query``; ids the scan did not read (written since) are dropped.
    """
    out: dict[int, PartCandidate] = {}
    for c in found:
        for q in by_id.get(c.id, ()):
            if q != query and q not in out:
                out[q] = dataclasses.replace(c, id=str(q))
    return list(out.values())


def update_groups(
    store: Store,
    *,
    k: int = 3,
    similarity: Callable[[str, str], float] | None = None,
    threshold: float = DEFAULT_THRESHOLD,
    text_field: str | None = None,
    prepare_text: Callable[[str], str] = str,
    partial: PartialLinks | None = None,
    dry_run: bool = False,
    on_progress: Progress | None = None,
) -> GroupsSummary:
    """Find the duplicate groups of ``store`` and write them onto its documents.

    Reads every fingerprint (no ids), finds the pairs among the distinct ones,
    then reads the ids of only the documents in groups (and of those that had
    one), all from one snapshot (:meth:`Store.scan`). ``similarity`` (two texts,
    after ``prepare_text``, to a share between 0 and 1) turns the comparison
    matrix on: pairs below ``threshold`` are dropped. ``partial`` also joins
    documents linked by a partial copy (see the module docstring). ``dry_run`` computes and
    counts but writes nothing. On an Elasticsearch store whose index is an alias
    or a pattern, pairs may cross indices. ``on_progress`` hears of each phase
    (:data:`Progress`), and of each pair compared and document looked up.
    """
    summary = GroupsSummary()
    store.refresh()
    clock = Clock(summary.seconds, on_progress)
    with store.scan() as scan:
        with clock("read"):
            fps, codes, names = scan.fingerprints()
        with clock("join"):
            node_fps, node_codes, counts = distinct(fps, codes)
            del fps, codes
            i, j, _ = near_pairs(node_fps, node_codes, k)
            # With partial copies every document may join a group: read them all.
            nodes = np.arange(len(counts)) if partial is not None else grouped_nodes(i, j, counts)
            node_of = {(fp, names[code]): n for n, fp, code in
                       zip(nodes.tolist(), node_fps[nodes].tolist(), node_codes[nodes].tolist())}
        summary.fingerprinted, summary.distinct, summary.versions = int(counts.sum()), len(counts), len(names)
        summary.pairs = len(i)
        summary.exact = int(counts[counts >= 2].sum())
        with clock("members"):
            docs = scan.members(node_of, every=partial is not None)
        summary.members = len(docs.keys)

    node_pairs = zip(i.tolist(), j.tolist())
    if similarity is not None:
        with clock("matrix"):
            pairs = doc_pairs(docs.nodes, node_pairs, every=True)
            texts = cached_texts(store, docs, text_field, prepare_text)
            confirmed = confirm_pairs(pairs, texts, similarity, threshold, on_done=clock.counter("matrix", None))
            summary.compared, summary.no_text = confirmed.compared, confirmed.no_text
            summary.confirmed = len(confirmed.pairs)
            kept = confirmed.pairs
    else:
        kept = list(doc_pairs(docs.nodes, node_pairs))
    links: list[tuple[int, int]] = []
    if partial is not None:
        with clock("partial"):
            versions = [names[node_codes[n]] if n >= 0 else "" for n in docs.nodes]
            links = _partial_groups(store, docs, versions, kept, partial, text_field, summary,
                                    clock.counter("partial", len(docs.keys)))
    with clock("components"):
        groups = assign_groups(docs.keys, kept + links)
        kinds = link_kinds(kept, links)
        desired = {pos: (group, size, kinds[pos]) for pos, (group, size) in groups.items()}
        plan = plan_writes(docs.current, desired)
        sizes = dict(groups.values())
        summary.groups, summary.grouped = len(sizes), len(desired)
        summary.largest = max(sizes.values(), default=0)
        summary.kinds = dict(sorted(Counter(kinds.values()).items()))
        summary.unchanged = plan.unchanged

    with clock("write"):
        if dry_run:
            summary.set, summary.cleared = len(plan.set), len(plan.clear)
        else:
            _write_plan(store, docs, plan, summary)
    return summary


@dataclass(frozen=True)
class StoredGroup:
    """A duplicate group as the store keeps it (:func:`stored_groups`)."""

    id: str
    members: list[Key]
    """The members' keys (``(index, _id)``, or ``(id,)`` embedded), in order."""
    kinds: list[str | None]
    """Each member's ``dup_kind``, in the order of ``members``."""
    size: int | None
    """The ``dup_group_size`` written (``len(members)`` unless documents changed since)."""

    @property
    def kind(self) -> str:
        """``near-duplicate`` or ``partial`` when every member has that kind, else ``mixed``."""
        kinds = set(self.kinds)
        return str(kinds.pop()) if len(kinds) == 1 and None not in kinds else "mixed"


def stored_groups(store: Store) -> list[StoredGroup]:
    """The duplicate groups written in ``store``, largest first (then by id), members in key order.

    Read through :meth:`Store.scan` (the documents that have a group now), so it lists what the
    last ``simdup groups`` wrote, in any store.
    """
    store.refresh()
    with store.scan() as scan:
        docs = scan.members({})
    by_group: dict[str, list[tuple[Key, str | None, int | None]]] = defaultdict(list)
    for pos, (group, size, kind) in docs.current.items():
        if group is not None:
            by_group[group].append((docs.keys[pos], kind, size))
    out = []
    for group, members in by_group.items():
        members.sort(key=lambda m: m[0])
        sizes = {size for _, _, size in members}
        out.append(StoredGroup(group, [key for key, _, _ in members], [kind for _, kind, _ in members],
                               sizes.pop() if len(sizes) == 1 else None))
    out.sort(key=lambda g: (-len(g.members), g.id))
    return out


def _partial_groups(store: Store, docs: Members, versions: Sequence[str], kept: list[tuple[int, int]],
                    partial: PartialLinks, text_field: str | None, summary: GroupsSummary,
                    on_done: Callable[[int], None] | None = None) -> list[tuple[int, int]]:
    """Pairs of positions that join the partial groups (:mod:`simdup_es.partial_groups`) of the near-duplicate
    groups ``kept`` makes and the other documents; counts in ``summary``."""
    roots = components(kept)
    unit_of: dict[int, int] = {}
    first: list[int] = []  # each unit's first position
    units = [unit_of.setdefault(roots.get(p, p), len(unit_of)) for p in range(len(docs.keys))]
    for p, u in enumerate(units):
        if u == len(first):
            first.append(p)
    found = partial_copies(store, docs, versions, partial, text_field, units, on_done)
    summary.partial = len(found.links)
    judge_pair = pair_judge(store, docs, partial, found, text_field)

    def verify(a: int, b: int) -> bool:
        summary.verified += 1
        return judge_pair(first[a], first[b])

    groups = complete_link(len(first), [Link(units[a], units[b], s) for a, b, s in found.links], verify)
    return group_pairs(groups, first)


def _write_plan(store: Store, docs: Members, plan: Plan, summary: GroupsSummary) -> None:
    """Write ``plan`` onto the members (groups set, then cleared) and count what happened in ``summary``."""
    for writes, count in (([(docs.refs[p], *fields) for p, *fields in plan.set], "set"),
                          ([(docs.refs[p], None, None, None) for p in plan.clear], "cleared")):
        report = store.write_groups(writes)
        setattr(summary, count, report.written)
        summary.gone += report.missing
        summary.failed += report.failed
    store.refresh()


#: ``(phase, done, total)``: a phase of :func:`update_groups` started (done 0) or went on;
#: ``total`` is ``None`` when the phase does not know it.
Progress = Callable[[str, int, "int | None"], None]


class Clock:
    """``with clock("phase"):`` adds the block's wall time to ``seconds["phase"]`` and tells ``on_progress``."""

    def __init__(self, seconds: dict[str, float], on_progress: Progress | None = None) -> None:
        self.seconds, self.on_progress = seconds, on_progress

    def counter(self, phase: str, total: int | None) -> Callable[[int], None] | None:
        """A callback for how many of ``total`` items of ``phase`` are done, or ``None`` without ``on_progress``."""
        report = self.on_progress
        if report is None:
            return None
        return lambda done: report(phase, done, total)

    @contextmanager
    def __call__(self, phase: str) -> Iterator[None]:
        if self.on_progress is not None:
            self.on_progress(phase, 0, None)
        started = time.perf_counter()
        try:
            yield
        finally:
            self.seconds[phase] = self.seconds.get(phase, 0.0) + time.perf_counter() - started
            log.info("phase %s: %.1f s", phase, self.seconds[phase])


__all__ = [
    "DEFAULT_THRESHOLD",
    "Clock",
    "Confirmed",
    "GroupsSummary",
    "NEAR_DUPLICATE",
    "PARTIAL",
    "PartialCopies",
    "PartialLinks",
    "Progress",
    "Members",
    "Plan",
    "StoredGroup",
    "UnionFind",
    "assign_groups",
    "cached_texts",
    "copied_share",
    "components",
    "confirm_pairs",
    "distinct",
    "doc_pairs",
    "group_id",
    "grouped_nodes",
    "link_kinds",
    "near_pairs",
    "pair_judge",
    "partial_copies",
    "plan_writes",
    "stored_groups",
    "update_groups",
]
