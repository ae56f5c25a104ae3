"""Duplicate groups that stay current: ``index`` and ``delete`` update the groups of the documents they touch.

:class:`GroupKeeper` keeps the document-level groups (what ``simdup groups`` writes without
``--matrix`` or ``--partial``) current by looking only at the groups a batch touches
(docs/groups.md, "Groups that stay current"). That is exact: let ``S`` hold the batch's new
documents, every stored document within ``k`` of one (:meth:`Store.candidates_many`), and
every member of a group one of those, or a replaced or deleted document, is in. An old
document next to a member of ``S`` was in its group already, and one next to a new document
is its candidate, so ``S`` is closed and the components of its pairs are components of the
whole graph; ids, sizes and kinds follow the full job's rules
(:func:`~simdup_es.groups.assign_groups`, :func:`~simdup_es.groups.plan_writes`). The
argument needs the stored groups to be right: where a killed run left a group half
rewritten (:func:`inconsistent_labels`), the keeper walks the true graph instead.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from .errors import ConfigError
from .groups import NEAR_DUPLICATE, PARTIAL, Plan, assign_groups, near_pairs, plan_writes
from .keys import check_k
from .common import BulkReport
from .store.base import GroupRow, Key, Store, StoredDoc

log = logging.getLogger(__name__)


# --- pure -----------------------------------------------------------------------------------


def regroup(rows: Sequence[GroupRow], k: int) -> Plan:
    """The writes that make the groups of ``rows`` the components of their pairs within ``k``.

    ``rows`` must be closed (no document outside them is within ``k`` of one of
    them, or in a group with one); positions in the plan are indices of ``rows``.
    The same pairs, ids, sizes and kind as :func:`simdup_es.groups.update_groups`
    without the matrix or partial copies.
    """
    names = sorted({row.version for row in rows})
    code = {name: n for n, name in enumerate(names)}
    fps = np.fromiter((row.fingerprint for row in rows), np.uint64, len(rows))
    codes = np.fromiter((code[row.version] for row in rows), np.int64, len(rows))
    i, j, _ = near_pairs(fps, codes, k)
    groups = assign_groups([row.key for row in rows], zip(i.tolist(), j.tolist()))
    desired = {pos: (group, size, NEAR_DUPLICATE) for pos, (group, size) in groups.items()}
    current = {pos: (row.group, row.size, row.kind) for pos, row in enumerate(rows)
               if (row.group, row.size, row.kind) != (None, None, None)}
    return plan_writes(current, desired)


def inconsistent_labels(rows: Iterable[GroupRow], left: Iterable[GroupRow] = ()) -> set[str]:
    """Group ids whose members are not as many as the ``dup_group_size`` each of them carries.

    The members are those among ``rows`` plus the group each of ``left`` had (documents
    that left their group by this write: replaced or deleted). Only meaningful when
    ``rows`` hold every member of each group id they name.
    """
    rows = list(rows)
    count = Counter(row.group for row in rows if row.group is not None)
    count.update(row.group for row in left if row.group is not None)
    return {row.group for row in rows if row.group is not None and row.size != count[row.group]}


def within(fingerprint: int, others: Iterable[int], k: int) -> list[bool]:
    """Whether each of ``others`` is within Hamming distance ``k`` of ``fingerprint``."""
    return [(int(fingerprint) ^ int(other)).bit_count() <= k for other in others]


# --- over a store ---------------------------------------------------------------------------


@dataclass
class LiveSummary:
    """What incremental group updates looked at and wrote (summed over the batches of a run)."""

    updates: int = 0
    """Batches (of ``put`` or ``delete``) whose groups were updated."""
    looked_at: int = 0
    """Documents whose groups were recomputed (the touched groups and the new documents)."""
    lookups: int = 0
    """Near-duplicate lookups (fingerprints asked of :meth:`Store.candidates_many`)."""
    set: int = 0
    cleared: int = 0
    unchanged: int = 0
    walked: int = 0
    """Updates that found stored groups not right (a killed run) and walked the true graph."""
    gone: int = 0
    failed: list[tuple[str, str]] = field(default_factory=list)
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        out = {k: v for k, v in self.__dict__.items() if k != "failed"}
        out["failed"] = len(self.failed)
        out["seconds"] = round(self.seconds, 3)
        return out


class GroupKeeper:
    """Keeps a store's document-level duplicate groups current through its writes (module docstring).

    Parameters
    ----------
    store:
        The store.
    k:
        Largest distance of a near-duplicate pair (0 to 7; ``simdup groups`` takes 3 by default): the groups
        are the ones ``simdup groups -k`` makes.
    plan_first:
        Work out the groups of a :meth:`put` before writing it, and write the new
        documents' group fields with them (the default); ``False`` writes first and
        regroups from the store, as before (measured against in ``benchmarks/bench_live_groups.py``).
    """

    def __init__(self, store: Store, *, k: int = 3, plan_first: bool = True) -> None:
        self.store = store
        self.plan_first = plan_first
        self.k = check_k(k)
        self.summary = LiveSummary()

    @classmethod
    def for_store(cls, store: Store, wanted: bool | None, **kwargs: Any) -> GroupKeeper | None:
        """A keeper when groups are ``wanted`` (``None``: when the store has groups already), else ``None``.

        Raises :class:`ConfigError` when they are wanted but the store's groups hold
        ``partial`` members (``simdup groups --partial``), which the keeper cannot keep.
        """
        if wanted is False:
            return None
        kinds = store.group_kinds()
        if kinds.get(PARTIAL):
            if wanted:
                raise ConfigError(f"{kinds[PARTIAL]} documents are in groups by partial copies ('simdup groups "
                                  "--partial'), which incremental groups cannot keep: give --no-groups, then "
                                  "run 'simdup groups --partial' again")
            log.warning("the store's groups hold partial copies: they are not updated incrementally; run "
                        "'simdup groups --partial' after this change")
            return None
        if wanted or kinds:
            return cls(store, **kwargs)
        return None

    # -- the writes ---------------------------------------------------------------------------

    def put(self, docs: Sequence[StoredDoc]) -> BulkReport:
        """:meth:`Store.put` the documents with their groups, then update the other documents they touch.

        The groups are worked out before the write (the new documents' fingerprints
        are known here; their stored near-duplicates are searched for first), so a new
        document's group fields go in with it: on Elasticsearch a partial update
        afterwards would index the whole document a second time. When the store cannot
        name a new document's key before writing it (an alias), or some documents are
        refused, the groups are worked out after the write instead.
        """
        started = time.perf_counter()
        report = self._put_planned(docs) if self.plan_first else None
        if report is None:
            report = self._put_then_group(docs)
        self.summary.seconds += time.perf_counter() - started
        return report

    def _put_then_group(self, docs: Sequence[StoredDoc]) -> BulkReport:
        ids = list(dict.fromkeys(doc.id for doc in docs))
        old = self.store.group_rows(ids=ids)
        report = self.store.put(docs)
        self.store.refresh()
        failed = {doc_id for doc_id, _ in report.failed}
        new = self.store.group_rows(ids=[i for i in ids if i not in failed]) if report.written else []
        left = [row for row in old if row.id not in failed]  # replaced: they left their groups
        self._update(new, {row.group for row in old if row.group is not None}, seek=new, left=left)
        return report

    def _put_planned(self, docs: Sequence[StoredDoc]) -> BulkReport | None:
        """:meth:`put` with the groups worked out first; ``None`` when the store cannot name the keys."""
        batch = {doc.id: doc for doc in docs if doc.problem() is None}  # the last of an id wins, as in put
        keys = self.store.put_keys(list(batch)) if batch else None
        if keys is None:
            return None
        old = self.store.group_rows(ids=list(batch))
        new = [GroupRow(key, None, int(doc.fingerprint), doc.version) for key, doc in zip(keys, batch.values())]
        labels = {row.group for row in old if row.group is not None}
        # The stored documents of the batch's ids are about to be replaced: the new rows stand for them
        # (``found`` keeps the first row of a key), and ``left`` holds them as they were.
        members, plan = self._plan(new, labels, seek=new, left=old)
        fresh = {row.key for row in new}
        fields = {members[p].id: (group, size, kind) for p, group, size, kind in plan.set if members[p].key in fresh}
        nothing = (None, None, None)
        report = self.store.put([replace(doc, **dict(zip(("group", "group_size", "group_kind"), fields.get(doc.id, nothing))))
                                 for doc in docs], with_groups=True)
        if batch.keys() & {doc_id for doc_id, _ in report.failed}:  # refused: the plan counted them
            # Regroup what is stored under the batch's ids by walking the near-duplicate graph: the written
            # documents carry groups counted with the refused ones (and an id may be both written and
            # refused, by two documents of the batch).
            log.info("%d documents were refused: walking the near-duplicates of the batch", len(report.failed))
            self.store.refresh()
            new = self.store.group_rows(ids=list(batch))
            self._update(new, labels | {group for group, _, _ in fields.values()}, seek=new, left=old, walk=True)
            return report
        self.summary.set += len(fields)
        self._apply(members, plan, skip=fresh)
        self.store.refresh()
        return report

    def delete(self, ids: Sequence[str]) -> BulkReport:
        """Update the groups as if the documents were gone, then :meth:`Store.delete` them."""
        started = time.perf_counter()
        old = self.store.group_rows(ids=[i for i in ids if isinstance(i, str) and i])
        labels = {row.group for row in old if row.group is not None}
        self._update([], labels, drop={row.key for row in old}, left=old)
        report = self.store.delete(ids)
        self.store.refresh()
        failed = {doc_id for doc_id, _ in report.failed}
        kept = [row for row in old if row.id in failed]
        if kept:  # not deleted after all: they join their groups again
            self._update(self.store.group_rows(ids=[row.id for row in kept]), labels, seek=kept)
        self.summary.seconds += time.perf_counter() - started
        return report

    # -- the update ---------------------------------------------------------------------------

    def _update(self, rows: Sequence[GroupRow], labels: set[str], *, seek: Sequence[GroupRow] = (),
                drop: set[Key] = frozenset(), left: Sequence[GroupRow] = (),  # type: ignore[assignment]
                walk: bool = False) -> None:
        """Recompute and write the groups of ``rows``, the near-duplicates of ``seek`` and the groups ``labels``."""
        if not rows and not labels and not seek:
            return
        members, plan = self._plan(rows, labels, seek=seek, drop=drop, left=left, walk=walk)
        if self._apply(members, plan):
            self.store.refresh()

    def _plan(self, rows: Sequence[GroupRow], labels: set[str], *, seek: Sequence[GroupRow] = (),
              drop: set[Key] = frozenset(), left: Sequence[GroupRow] = (),  # type: ignore[assignment]
              walk: bool = False) -> tuple[list[GroupRow], Plan]:
        """The closed set of ``rows``, the near-duplicates of ``seek`` and the groups ``labels`` (sorted by
        key), and the writes that regroup it.

        Documents keyed in ``drop`` are left out (about to be deleted); ``left`` are the
        documents (as they were) that this write takes out of their groups. A row of
        ``rows`` stands for any stored document of its key (a new version about to replace it).
        With ``walk`` the true graph is walked whatever the stored labels say.
        """
        found: dict[Key, GroupRow] = {row.key: row for row in rows if row.key not in drop}
        self._add(found, self._near(seek), drop)
        self._close(found, labels, drop)
        if walk or inconsistent_labels([row for key, row in found.items() if key not in drop], left):
            if not walk:
                log.warning("stored duplicate groups are not right (a killed run?): walking the near-duplicates "
                            "of %d documents", len(found))
            self.summary.walked += 1
            self._walk(found, drop)
        members = sorted(found.values(), key=lambda row: row.key)
        plan = regroup(members, self.k)
        self.summary.updates += 1
        self.summary.looked_at += len(members)
        self.summary.unchanged += plan.unchanged
        return members, plan

    def _apply(self, members: Sequence[GroupRow], plan: Plan, skip: set[Key] = frozenset()) -> bool:  # type: ignore[assignment]
        """Write ``plan`` (but not to the documents keyed in ``skip``); whether anything was written."""
        writes = [(members[p].ref, *fields) for p, *fields in plan.set if members[p].key not in skip]
        sets = len(writes)
        writes += [(members[p].ref, None, None, None) for p in plan.clear if members[p].key not in skip]
        if not writes:
            return False
        report = self.store.write_groups(writes)  # one call: one transaction in the embedded store
        summary = self.summary
        summary.set += min(report.written, sets)
        summary.cleared += max(0, report.written - sets)
        summary.gone += report.missing
        summary.failed += report.failed
        return True

    def _near(self, seek: Sequence[GroupRow]) -> list[GroupRow]:
        """The stored documents within ``k`` of each of ``seek`` (same version), themselves included."""
        if not seek:
            return []
        store, k = self.store, self.k
        found = store.candidates_many([(row.fingerprint, row.version) for row in seek], k=k)
        hits = [[i for i, ok in zip(ids, within(row.fingerprint, fps.tolist(), k)) if ok]
                for row, (ids, fps) in zip(seek, found)]
        self.summary.lookups += len(seek)
        queries: dict[str, list[GroupRow]] = {}
        for row, ids in zip(seek, hits):
            for doc_id in ids:
                queries.setdefault(doc_id, []).append(row)
        # On an index pattern an id may name a document in several indices: keep those near a query.
        return [row for row in store.group_rows(ids=list(queries))
                if any(q.version == row.version and within(q.fingerprint, [row.fingerprint], k)[0]
                       for q in queries[row.id])]

    def _close(self, found: dict[Key, GroupRow], labels: set[str], drop: set[Key]) -> None:
        """Add every member of every group named by ``labels`` or by a document in ``found``, until none is new."""
        asked: set[str] = set()
        wanted = set(labels) | {row.group for row in found.values() if row.group is not None}
        while wanted - asked:
            todo = sorted(wanted - asked)
            asked.update(todo)
            for row in self.store.group_rows(groups=todo):
                if row.key not in drop:
                    found.setdefault(row.key, row)
                if row.group is not None:
                    wanted.add(row.group)

    def _walk(self, found: dict[Key, GroupRow], drop: set[Key]) -> None:
        """Grow ``found`` by the near-duplicates of its documents (and the members of their groups, which
        may have to be rewritten) until no new document turns up."""
        seen: set[Key] = set()
        while True:
            todo = [row for key, row in found.items() if key not in seen]
            if not todo:
                return
            seen.update(row.key for row in todo)
            self._add(found, self._near(todo), drop)
            self._close(found, set(), drop)

    @staticmethod
    def _add(found: dict[Key, GroupRow], rows: Iterable[GroupRow], drop: set[Key]) -> None:
        for row in rows:
            if row.key not in drop:
                found.setdefault(row.key, row)


__all__ = ["GroupKeeper", "LiveSummary", "inconsistent_labels", "regroup", "within"]
