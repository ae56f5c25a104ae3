"""Duplicate groups on a Dask cluster: the job of :func:`simdup_es.groups.update_groups`, spread over workers.

The same document-level groups as the single-process job, in five phases of tasks (read
slices of a point in time; shuffle the distinct ``(fingerprint, version)`` nodes; Manku's
block join, :func:`simdup_es.join.table_pairs`, one table at a time; components on one
worker; each slice writes its differences), described in docs/groups.md, "How the work is
cut". A killed job writes nothing before the last phase, whose writes are final values.
"""

from __future__ import annotations

import hashlib
import logging
from collections import defaultdict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import keys
from .errors import ConfigError
from .es import io
from .es.connection import ConnectionSettings
from .es.mappings import GROUP_FIELDS
from .groups import NEAR_DUPLICATE, Clock, GroupsSummary, group_id, plan_writes
from .join import components, join_blocks, table_key, table_pairs, tables
from .store.base import Key

log = logging.getLogger(__name__)


# --- pure -----------------------------------------------------------------------------------


def version_code(version: str) -> int:
    """A version's number in every task without asking anyone: 62 bits of its SHA-1."""
    return int.from_bytes(hashlib.sha1(version.encode("utf-8")).digest()[:8], "big") >> 2


def mix(values: np.ndarray) -> np.ndarray:
    """SplitMix64's finaliser over ``uint64``: a hash that spreads keys evenly over buckets."""
    z = np.asarray(values, dtype=np.uint64).copy()
    with np.errstate(over="ignore"):
        z ^= z >> np.uint64(30)
        z *= np.uint64(0xBF58476D1CE4E5B9)
        z ^= z >> np.uint64(27)
        z *= np.uint64(0x94D049BB133111EB)
        z ^= z >> np.uint64(31)
    return z


def node_buckets(fps: np.ndarray, codes: np.ndarray, buckets: int) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """A slice's distinct ``(fingerprint, code)`` nodes and their document counts, by bucket (``codes < 0``: none)."""
    keep = codes >= 0
    pairs = np.stack([fps[keep], codes[keep].astype(np.uint64)], axis=1)
    nodes, counts = np.unique(pairs, axis=0, return_counts=True) if len(pairs) else (pairs, np.empty(0, np.int64))
    where = (mix(nodes[:, 0] ^ mix(nodes[:, 1])) % np.uint64(buckets)).astype(np.int64) if len(nodes) else \
        np.empty(0, np.int64)
    return [(nodes[where == b, 0], nodes[where == b, 1].astype(np.int64), counts[where == b]) for b in range(buckets)]


def merge_nodes(pieces: Sequence[tuple[np.ndarray, np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One bucket's nodes from the pieces the slices sent it, document counts summed."""
    fps, codes, counts = (np.concatenate([p[n] for p in pieces]) if pieces else np.empty(0, np.int64) for n in range(3))
    if not len(fps):
        return fps.astype(np.uint64), codes.astype(np.int64), counts.astype(np.int64)
    nodes, inverse = np.unique(np.stack([fps, codes.astype(np.uint64)], axis=1), axis=0, return_inverse=True)
    total = np.bincount(inverse.reshape(-1), weights=counts, minlength=len(nodes)).astype(np.int64)
    return nodes[:, 0].copy(), nodes[:, 1].astype(np.int64), total


def table_buckets(fps: np.ndarray, codes: np.ndarray, k: int, blocks: int, buckets: int
                  ) -> list[list[tuple[int, np.ndarray, np.ndarray]]]:
    """Where one bucket's nodes go for the join: ``out[b]`` holds ``(table, fingerprints, codes)`` for bucket ``b``.

    A node goes to one bucket per table, by a hash of its key there and its version,
    so nodes with equal keys in a table (and the same version) meet in one bucket.
    """
    out: list[list[tuple[int, np.ndarray, np.ndarray]]] = [[] for _ in range(buckets)]
    for t, combo in enumerate(tables(blocks, k)):
        key = table_key(fps, blocks, combo)
        where = (mix(key ^ mix(codes.astype(np.uint64) + np.uint64(t))) % np.uint64(buckets)).astype(np.int64)
        for b in range(buckets):
            sel = where == b
            if sel.any():
                out[b].append((t, fps[sel], codes[sel]))
    return out


def bucket_pairs(pieces: Sequence[Sequence[tuple[int, np.ndarray, np.ndarray]]], k: int, blocks: int
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The pairs one join bucket holds: ``(fingerprints a, fingerprints b, codes)``, each pair once."""
    by_table: dict[tuple[int, int], list[np.ndarray]] = defaultdict(list)
    for piece in pieces:
        for t, fps, codes in piece:
            for code in np.unique(codes).tolist():
                by_table[(t, code)].append(fps[codes == code])
    out_a, out_b, out_c = [], [], []
    for (t, code), parts in by_table.items():
        fps = np.concatenate(parts)
        i, j, _ = table_pairs(fps, k, blocks, t)
        out_a.append(fps[i])
        out_b.append(fps[j])
        out_c.append(np.full(len(i), code, np.int64))
    if not out_a:
        return np.empty(0, np.uint64), np.empty(0, np.uint64), np.empty(0, np.int64)
    return np.concatenate(out_a), np.concatenate(out_b), np.concatenate(out_c)


def node_roots(pairs: Sequence[tuple[np.ndarray, np.ndarray, np.ndarray]],
               exact: Sequence[tuple[np.ndarray, np.ndarray]]) -> dict[tuple[int, int], int]:
    """``{(fingerprint, code): component}`` for every node in a pair or shared by two or more documents."""
    a = np.concatenate([p[0] for p in pairs] + [np.empty(0, np.uint64)])
    b = np.concatenate([p[1] for p in pairs] + [np.empty(0, np.uint64)])
    c = np.concatenate([p[2] for p in pairs] + [np.empty(0, np.int64)]).astype(np.uint64)
    ef = np.concatenate([e[0] for e in exact] + [np.empty(0, np.uint64)])
    ec = np.concatenate([e[1] for e in exact] + [np.empty(0, np.int64)]).astype(np.uint64)
    every = np.concatenate([np.stack([a, c], 1), np.stack([b, c], 1), np.stack([ef, ec], 1)])
    if not len(every):
        return {}
    nodes, inverse = np.unique(every, axis=0, return_inverse=True)
    inverse = inverse.reshape(-1)
    n = len(a)
    roots = components(zip(inverse[:n].tolist(), inverse[n : 2 * n].tolist()))
    return {(int(fp), int(code)): roots.get(pos, pos) for pos, (fp, code) in enumerate(nodes.tolist())}


# --- tasks: one slice of the index ---------------------------------------------------------------


@dataclass
class Slice:
    """The documents of one slice, kept in a worker's memory for the whole job."""

    fps: np.ndarray
    codes: np.ndarray
    """:func:`version_code` of each document's version, ``-1`` without a fingerprint."""
    # Ids as a list of str and index names by number, not a tuple or dict per document: the
    # garbage collector walks every container object, and millions of them made each phase crawl.
    ids: list[str] = field(default_factory=list)
    index_of: list[int] = field(default_factory=list)
    indices: list[str] = field(default_factory=list)
    routing: dict[int, str] = field(default_factory=dict)

    def __sizeof__(self) -> int:
        # What Dask weighs a slice by (sys.getsizeof): without it a slice looks like 50 bytes, and the
        # scheduler moved whole slices to the worker that held a small map rather than the map to them.
        return int(self.fps.nbytes + self.codes.nbytes + 80 * len(self.ids) + 200 * len(self.current))

    def key(self, pos: int) -> Key:
        return self.indices[self.index_of[pos]], self.ids[pos]

    def ref(self, pos: int) -> dict[str, Any]:
        """Bulk metadata of the document at ``pos``, as :meth:`ElasticsearchStore.write_groups` takes it."""
        return {"_index": self.indices[self.index_of[pos]], "_id": self.ids[pos], "_routing": self.routing.get(pos)}
    current: dict[int, tuple[Any, ...]] = field(default_factory=dict)


def read_slice(settings: ConnectionSettings, index: str, pit: str, keep_alive: str, slice_id: int, slices: int,
               page_size: int) -> Slice:
    """Every document with a fingerprint or a group in slice ``slice_id`` of ``slices`` of the point in time."""
    from .store.elasticsearch import ElasticsearchStore

    store = ElasticsearchStore(settings, index)
    try:
        return _read(store.client, index, pit, keep_alive, slice_id, slices, page_size)
    finally:
        store.close()


def _read(client: Any, index: str, pit: str, keep_alive: str, slice_id: int, slices: int, page_size: int) -> Slice:
    fields = [keys.FP, keys.VERSION, *GROUP_FIELDS]
    body: dict[str, Any] = {
        "query": {"bool": {"should": [{"exists": {"field": keys.FP}}, {"exists": {"field": keys.GROUP}}],
                           "minimum_should_match": 1}},
        "size": page_size, "sort": ["_shard_doc"], "_source": False, "docvalue_fields": fields,
        "track_total_hits": False, "pit": {"id": pit, "keep_alive": keep_alive},
    }
    if slices > 1:
        body["slice"] = {"id": slice_id, "max": slices}
    fps: list[int] = []
    codes: list[int] = []
    out = Slice(np.empty(0, np.uint64), np.empty(0, np.int64))
    names: dict[str, int] = {}
    index_numbers: dict[str, int] = {}
    while True:
        with io.translated(client, f"reading slice {slice_id} of {index!r}"):
            response = client.search(body=body, allow_partial_search_results=False)
        io.check_complete(response, f"reading slice {slice_id} of {index!r}")
        hits = response["hits"]["hits"]
        for hit in hits:
            values = hit.get("fields", {})
            fp, version = values.get(keys.FP), values.get(keys.VERSION)
            pos = len(out.ids)
            out.ids.append(hit["_id"])
            out.index_of.append(index_numbers.setdefault(hit["_index"], len(index_numbers)))
            if hit.get("_routing") is not None:
                out.routing[pos] = hit["_routing"]
            if fp and version:
                fps.append(int(fp[0], 16))
                codes.append(names.setdefault(version[0], version_code(version[0])))
            else:
                fps.append(0)
                codes.append(-1)
            group, size, kind = (values.get(name) for name in GROUP_FIELDS)
            if group or size or kind:
                out.current[pos] = (group[0] if group else None, int(size[0]) if size else None,
                                    kind[0] if kind else None)
        if len(hits) < page_size:
            break
        body["search_after"] = hits[-1]["sort"]
        body["pit"]["id"] = response.get("pit_id", body["pit"]["id"])
    out.fps, out.codes = np.array(fps, np.uint64), np.array(codes, np.int64)
    out.indices = list(index_numbers)
    return out


def slice_nodes(part: Any, buckets: int) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    return node_buckets(part.fps, part.codes, buckets)


def slice_roots(part: Slice, roots: dict[tuple[int, int], int]) -> np.ndarray:
    """Each document's component (``-1``: in no group)."""
    return np.array([roots.get((fp, code), -1) if code >= 0 else -1
                     for fp, code in zip(part.fps.tolist(), part.codes.tolist())], np.int64)


def slice_firsts(part: Slice, roots: np.ndarray) -> dict[int, tuple[Key, int]]:
    """Each group's first key and member count in this slice."""
    out: dict[int, tuple[Key, int]] = {}
    for pos in np.flatnonzero(roots >= 0).tolist():
        root = int(roots[pos])
        key, count = out.get(root, (part.key(pos), 0))
        out[root] = (min(key, part.key(pos)), count + 1)
    return out


def slice_write(part: Slice, roots: np.ndarray, groups: dict[int, tuple[str, int]], settings: ConnectionSettings,
                index: str, dry_run: bool) -> dict[str, Any]:
    """Write this slice's differences; counts of what was set, cleared, unchanged, gone and failed."""
    from .store.elasticsearch import ElasticsearchStore

    desired = {pos: (*groups[int(roots[pos])], NEAR_DUPLICATE) for pos in np.flatnonzero(roots >= 0).tolist()}
    plan = plan_writes(part.current, desired)
    writes = [(part.ref(p), *fields) for p, *fields in plan.set] + [(part.ref(p), None, None, None) for p in plan.clear]
    out: dict[str, Any] = {"set": len(plan.set), "cleared": len(plan.clear), "unchanged": plan.unchanged, "gone": 0,
                           "failed": []}
    if writes and not dry_run:
        store = ElasticsearchStore(settings, index)
        try:
            report = store.write_groups(writes)
        finally:
            store.close()
        out["gone"], out["failed"] = report.missing, report.failed
    return out


# --- the job -------------------------------------------------------------------------------


@contextmanager
def dask_client(address: str) -> Iterator[Any]:
    """A :class:`distributed.Client` of the scheduler at ``address``, or of a new ``LocalCluster``
    for ``local`` (one worker process a core) or ``local:N`` (``N`` worker processes)."""
    try:
        from distributed import Client, LocalCluster
    except ImportError as exc:
        raise ConfigError("the distributed groups job needs Dask: pip install 'simdup-es[dask]' (in a checkout of simdup-es: "
                          "pip install '.[dask]')") from exc
    if address == "local" or address.startswith("local:"):
        workers = address.partition(":")[2]
        if workers and not (workers.isdigit() and int(workers) > 0):
            raise ConfigError(f"--dask local:N needs a number of workers, got {address!r}")
        with LocalCluster(n_workers=int(workers) if workers else None, threads_per_worker=1, processes=True,
                          dashboard_address=":0") as cluster, Client(cluster) as client:
            yield client
    else:
        with Client(address) as client:
            yield client


def dask_update_groups(client: Any, settings: ConnectionSettings, index: str, *, k: int = 3, slices: int | None = None,
                       buckets: int | None = None, page_size: int = 10_000, keep_alive: str = "10m",
                       dry_run: bool = False) -> GroupsSummary:
    """:func:`~simdup_es.groups.update_groups` (no matrix, no partial copies) on the Dask cluster of ``client``.

    ``client`` is a :class:`distributed.Client`; ``settings`` and ``index`` name the
    Elasticsearch index, which every worker must reach. ``slices`` (the reads) and
    ``buckets`` (the shuffles) default to twice the workers' threads.
    """
    from .store.elasticsearch import ElasticsearchStore

    keys.check_k(k)
    threads = sum(client.nthreads().values()) or 1
    slices, buckets = slices or 2 * threads, buckets or 2 * threads
    summary = GroupsSummary()
    clock = Clock(summary.seconds)
    store = ElasticsearchStore(settings, index)
    try:
        store.refresh()
        pit = io.PointInTime(store.client, index, keep_alive)
        if pit.id is None:
            raise ConfigError("the distributed groups job reads a sliced point in time, which this engine has not: "
                              "run 'simdup groups' without --dask")
        try:
            with clock("read"):
                parts = [client.submit(read_slice, settings, index, pit.id, keep_alive, s, slices, page_size,
                                       pure=False) for s in range(slices)]
                sizes = client.gather([client.submit(lambda p: (len(p.ids), int((p.codes >= 0).sum())), p)
                                       for p in parts])
            log.info("read %d documents in %d slices", sum(s for s, _ in sizes), slices)
        finally:
            pit.close()
        summary.fingerprinted = sum(f for _, f in sizes)
        with clock("join"):
            summary_nodes, pairs, exact = join_nodes(client, parts, k, buckets)
            summary.pairs, summary.exact = map(sum, zip(*client.gather(
                [client.submit(_counts, p, e) for p, e in zip(pairs, exact)])))
        summary.distinct, summary.versions = summary_nodes
        log.info("%d pairs within distance %d among %d distinct fingerprints", summary.pairs, k, summary.distinct)
        with clock("components"):
            # On a worker, and passed between workers: shipping the map through the client (scatter) took seconds.
            roots = client.submit(_roots, pairs, exact)
            part_roots = [client.submit(_slice_roots, p, roots) for p in parts]
            groups = client.submit(_merge_firsts, [client.submit(_slice_firsts, p, r) for p, r in zip(parts, part_roots)])
            sizes = client.gather(client.submit(lambda g: sorted(c for _, c in g.value.values()), groups))
        summary.groups, summary.grouped, summary.largest = len(sizes), sum(sizes), max(sizes, default=0)
        summary.kinds = {NEAR_DUPLICATE: summary.grouped} if summary.grouped else {}
        with clock("write"):
            for done in client.gather([client.submit(_slice_write, p, r, groups, settings, index, dry_run)
                                       for p, r in zip(parts, part_roots)]):
                for name in ("set", "cleared", "unchanged", "gone", "failed"):
                    setattr(summary, name, getattr(summary, name) + done[name])
            if not dry_run:
                store.refresh()
        summary.members = summary.grouped + summary.cleared
        return summary
    finally:
        store.close()


def join_nodes(client: Any, parts: list[Any], k: int, buckets: int) -> tuple[tuple[int, int], list[Any], list[Any]]:
    """Phases 2 and 3 over futures of parts that have ``fps`` and ``codes`` (as :class:`Slice`): ``((distinct
    nodes, versions), futures of pairs by bucket, futures of exact-copy nodes by bucket)``."""
    pieces = [client.submit(slice_nodes, p, buckets) for p in parts]
    nodes = [client.submit(merge_nodes, [client.submit(_item, piece, b) for piece in pieces]) for b in range(buckets)]
    counts = client.gather([client.submit(lambda n: (len(n[0]), set(np.unique(n[1]).tolist())), n) for n in nodes])
    distinct = sum(c for c, _ in counts)
    versions = len(set().union(*(v for _, v in counts))) if counts else 0
    blocks = join_blocks(distinct, k)
    sent = [client.submit(table_buckets, client.submit(_item, n, 0), client.submit(_item, n, 1), k, blocks, buckets)
            for n in nodes]
    pairs = [client.submit(bucket_pairs, [client.submit(_item, s, b) for s in sent], k, blocks) for b in range(buckets)]
    exact = [client.submit(_exact, n) for n in nodes]
    return (distinct, versions), pairs, exact


def _counts(pairs: tuple[np.ndarray, ...], exact: tuple[np.ndarray, ...]) -> tuple[int, int]:
    """Pairs in a bucket, and documents whose value another document shares."""
    return len(pairs[0]), int(exact[2].sum())


class Packed:
    """A big dict sent between workers as one pickle: Dask serialises a bare dict item by item, which
    took seconds for 20,000 entries."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value

    def __sizeof__(self) -> int:
        return 100 * len(self.value)


def _roots(pairs: list[tuple[np.ndarray, ...]], exact: list[tuple[np.ndarray, ...]]) -> Packed:
    return Packed(node_roots(pairs, [(e[0], e[1]) for e in exact]))  # type: ignore[arg-type]


def _slice_roots(part: Slice, roots: Packed) -> np.ndarray:
    return slice_roots(part, roots.value)


def _slice_firsts(part: Slice, roots: np.ndarray) -> Packed:
    return Packed(slice_firsts(part, roots))


def _merge_firsts(found: Sequence[Packed]) -> Packed:
    return Packed(merge_firsts([f.value for f in found]))


def _slice_write(part: Slice, roots: np.ndarray, groups: Packed, settings: ConnectionSettings, index: str,
                 dry_run: bool) -> dict[str, Any]:
    return slice_write(part, roots, groups.value, settings, index, dry_run)


def merge_firsts(found: Sequence[dict[int, tuple[Key, int]]]) -> dict[int, tuple[str, int]]:
    """``{component: (group id, size)}`` from each slice's first key and count per component."""
    firsts: dict[int, tuple[Key, int]] = {}
    for part in found:
        for root, (key, count) in part.items():
            first, total = firsts.get(root, (key, 0))
            firsts[root] = (min(first, key), total + count)
    return {root: (group_id(key), count) for root, (key, count) in firsts.items()}


def _item(value: Any, index: int) -> Any:
    return value[index]


def _exact(nodes: tuple[np.ndarray, np.ndarray, np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    fps, codes, counts = nodes
    keep = counts >= 2
    return fps[keep], codes[keep], counts[keep]


__all__ = ["bucket_pairs", "dask_client", "dask_update_groups", "join_nodes", "merge_nodes", "mix", "node_buckets",
           "node_roots", "table_buckets", "version_code"]
