"""``simdup dedup`` on a Dask cluster: the decisions of :func:`simdup_es.dedup.dedup_records`, spread over workers.

The phases (tasks; each part's records stay in its worker's memory until the writes):

1. **read**: one task per input file (JSON Lines): its records, fingerprinted, with their
   texts; the rejects.
2. **join**: the distinct fingerprints shuffled to buckets, then Manku's block join by
   tables (:func:`simdup_es.dask_groups.join_nodes`, the groups job's code): every pair of
   fingerprints within ``k``, once.
3. **components**: the records whose fingerprints pair (or repeat) are named, on the client,
   and the candidate pairs between them cut into connected components.
4. **choose**: each bin of components goes to one task with its records' texts, which runs
   :func:`simdup_es.dedup.choose` in the keep rule's order. The choice inside a component
   depends only on its own records (a record is compared only with its candidates), so the
   removed records and their twins are those of the single-machine run.
5. **write**: each part writes its file's kept lines, as they were, to ``OUTPUT/part-NNNNN.jsonl``.

Every worker must read the input files and write the output folder (a shared file system).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from .compare import CompareParams
from .config import FingerprintParams
from .dedup import DedupParams, DedupSummary, Entry, KeepRule, Removed, choose, copy_check, neighbours, priority
from .errors import ConfigError
from .fingerprint import Fingerprinter
from .join import components

Gid = tuple[int, int]  # (part, position in the part)
Matrix = tuple[CompareParams, "str | None"]  # the comparison matrix's parameters and synonym file, sent to workers


@dataclass
class Part:
    """One input file's records on a worker: what :mod:`simdup_es.dask_groups`' join reads (``fps``, ``codes``),
    and what the choice and the writes need."""

    path: str
    entries: list[Entry] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    fps: np.ndarray = field(default_factory=lambda: np.empty(0, np.uint64))
    codes: np.ndarray = field(default_factory=lambda: np.empty(0, np.int64))
    rejects: list[tuple[str, str, str | None]] = field(default_factory=list)
    read: int = 0

    def __sizeof__(self) -> int:  # what Dask weighs a part by
        return int(sum(len(t) for t in self.texts) * 2 + 200 * len(self.entries))


@lru_cache(maxsize=4)
def _fingerprinter(params: FingerprintParams) -> Fingerprinter:
    return Fingerprinter(params)  # once per worker process (its tables are memory-mapped from the cache folder)


@lru_cache(maxsize=4)
def _comparer(params: CompareParams, synonym_file: str | None) -> Any:
    from .search import comparer

    return comparer(params, Path(synonym_file) if synonym_file else None)  # once per worker process (the thesaurus)


def read_part(path: str, fields: Any, params: FingerprintParams) -> Part:
    """Phase 1: the records of one JSON Lines file, fingerprinted (one process: the cluster is the parallelism)."""
    from .sources import Record, record_doc, read_jsonl
    from .text import unify

    fingerprinter = _fingerprinter(params)
    part = Part(path)
    records = []
    with open(path, "rb") as f:
        for item in read_jsonl(f, path, fields):
            part.read += 1
            if isinstance(item, Record):
                records.append(item)
            else:
                part.rejects.append((item.source, item.reason, item.id))
    fps = []
    for record, result in fingerprinter.map_items(records, record_doc, workers=1):
        if result.error is not None:
            part.rejects.append((record.source, result.reason, record.id))
            continue
        part.entries.append(Entry(record.key, record.source, len(record.text), record.extra))
        part.texts.append(unify(record.text))
        fps.append(result.unwrap().value)
    part.fps = np.array(fps, dtype=np.uint64)
    part.codes = np.zeros(len(fps), np.int64)
    return part


def paired_positions(part: Part, wanted: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Phase 3: the positions of the part's records whose fingerprint is in ``wanted`` (sorted), and those fingerprints."""
    at = np.flatnonzero(np.isin(part.fps, wanted))
    return at, part.fps[at]


def part_pieces(part: Part, index: int, bins: dict[int, int], n_bins: int) -> list[dict[Gid, tuple[Entry, str]]]:
    """Phase 4's shuffle: the part's records in components, by the bin of their component (``bins[position]``)."""
    out: list[dict[Gid, tuple[Entry, str]]] = [{} for _ in range(n_bins)]
    for pos, b in bins.items():
        out[b][(index, pos)] = (part.entries[pos], part.texts[pos])
    return out


def choose_bin(pieces: Sequence[dict[Gid, tuple[Entry, str]]], packed: Any, rule: KeepRule, params: DedupParams,
               matrix: Matrix) -> tuple[dict[Gid, tuple[Gid, int, tuple[float, float]]], dict[Gid, Entry], int]:
    """Phase 4: :func:`~simdup_es.dedup.choose` over the components of one bin (their candidate pairs ``packed``
    in a :class:`~simdup_es.dask_groups.Packed`): the removed records with their twins, the entries of both, and
    how many pairs the matrix judged."""
    pairs: list[tuple[Gid, Gid, int]] = packed.value
    records = {gid: rec for piece in pieces for gid, rec in piece.items()}
    gids = sorted(records)
    local = {gid: n for n, gid in enumerate(gids)}
    entries = [records[g][0] for g in gids]
    texts = [records[g][1] for g in gids]
    near = neighbours(*(np.array(x, dtype=np.int64) for x in zip(*[(local[a], local[b], d) for a, b, d in pairs])))
    check = copy_check(_comparer(*matrix), params)
    compared = [0]

    def is_copy(kept: int, other: int) -> tuple[float, float] | None:
        compared[0] += texts[kept] != texts[other]
        return check(texts[kept], texts[other])

    removed = choose(priority(entries, rule), near, is_copy)
    out = {gids[p]: (gids[r.twin], r.distance, r.shares) for p, r in removed.items()}
    named = {g: records[g][0] for g in {*out, *(t for t, _, _ in out.values())}}
    return out, named, compared[0]


def write_part(part: Part, removed: set[int], output: str, index: int) -> int:
    """Phase 5: the part's file with its removed and rejected records left out, as ``output/part-NNNNN.jsonl``."""
    from .sources import bounded_lines

    kept = {e.source for pos, e in enumerate(part.entries) if pos not in removed}
    dest = Path(output) / f"part-{index:05d}.jsonl"
    written = 0
    with open(part.path, "rb") as f, open(dest, "w", encoding="utf-8") as out:
        for n, raw in enumerate(bounded_lines(f), 1):
            if raw is not None and f"{part.path}:{n}" in kept:
                out.write(raw.decode("utf-8-sig" if n == 1 else "utf-8").rstrip("\r\n") + "\n")
                written += 1
    return written


# --- the job -------------------------------------------------------------------------------


@dataclass
class DaskDeduplicated:
    """What :func:`dask_dedup` did: the summary, the removed records with their twins, the rejects."""

    summary: DedupSummary
    removed: list[tuple[Entry, Entry, Removed]]
    rejects: list[tuple[str, str, str | None]]


def dask_dedup(client: Any, files: Sequence[str], output: Path, fields: Any, fingerprinter: Any, *,
               rule: KeepRule = KeepRule(), params: DedupParams = DedupParams(), matrix: Matrix = (CompareParams(), None),
               buckets: int | None = None, bins: int | None = None) -> DaskDeduplicated:
    """Deduplicate JSON Lines ``files`` on the Dask cluster of ``client`` into the folder ``output`` (made here),
    comparing with the matrix of ``matrix`` (its parameters, and a synonym file every worker reads)."""
    from .dask_groups import join_nodes
    from .groups import Clock

    threads = sum(client.nthreads().values()) or 1
    buckets, bins = buckets or 2 * threads, bins or 2 * threads
    summary = DedupSummary()
    clock = Clock(summary.seconds)
    with clock("fingerprint"):
        parts = [client.submit(read_part, str(f), fields, fingerprinter.params, pure=False) for f in files]
        counts = client.gather([client.submit(lambda p: (p.read, len(p.entries), p.rejects), p) for p in parts])
    summary.read = sum(c[0] for c in counts)
    rejects = [r for c in counts for r in c[2]]
    with clock("pairs"):
        _, pair_futures, exact_futures = join_nodes(client, parts, params.k, buckets)
        node_pairs = client.gather(pair_futures)
        exact = client.gather(exact_futures)
        record_pairs = _record_pairs(client, parts, node_pairs, exact)
    summary.pairs = len(record_pairs)
    with clock("compare"):
        found, named, compared = _choose(client, parts, record_pairs, (rule, params, matrix), bins)
    summary.compared = compared
    with clock("write"):
        output.mkdir(parents=True, exist_ok=True)
        by_part: dict[int, set[int]] = defaultdict(set)
        for part, pos in found:
            by_part[part].add(pos)
        written = client.gather([client.submit(write_part, p, by_part.get(i, set()), str(output), i)
                                 for i, p in enumerate(parts)])
    summary.kept, summary.removed = sum(written), len(found)
    summary.rejected = len(rejects)
    removed = [(named[g], named[t], Removed(-1, d, shares)) for g, (t, d, shares) in sorted(found.items())]
    return DaskDeduplicated(summary, removed, rejects)


def _record_pairs(client: Any, parts: list[Any], node_pairs: list[tuple[np.ndarray, ...]],
                  exact: list[tuple[np.ndarray, ...]]) -> list[tuple[Gid, Gid, int]]:
    """Phase 3: the candidate pairs of records ``(gid, gid, distance)``: of paired fingerprints, and of records
    sharing one."""
    a = np.concatenate([p[0] for p in node_pairs] + [np.empty(0, np.uint64)])
    b = np.concatenate([p[1] for p in node_pairs] + [np.empty(0, np.uint64)])
    wanted = np.unique(np.concatenate([a, b] + [e[0] for e in exact] + [np.empty(0, np.uint64)]))
    holders: dict[int, list[Gid]] = defaultdict(list)
    for index, (at, fps) in enumerate(client.gather([client.submit(paired_positions, p, wanted) for p in parts])):
        for pos, fp in zip(at.tolist(), fps.tolist()):
            holders[fp].append((index, pos))
    out = [(x, y, 0) for gids in holders.values() for n, x in enumerate(gids) for y in gids[n + 1 :]]
    for fa, fb in zip(a.tolist(), b.tolist()):
        distance = (fa ^ fb).bit_count()
        out.extend((x, y, distance) for x in holders[fa] for y in holders[fb])
    return out


def _choose(client: Any, parts: list[Any], pairs: list[tuple[Gid, Gid, int]],
            how: tuple[KeepRule, DedupParams, Matrix], n_bins: int
            ) -> tuple[dict[Gid, tuple[Gid, int, tuple[float, float]]], dict[Gid, Entry], int]:
    """Phase 4: components of the candidate pairs, in bins, each chosen on a worker with its records."""
    from .dask_groups import Packed

    index = {g: n for n, g in enumerate(sorted({g for x, y, _ in pairs for g in (x, y)}))}
    gids = sorted(index, key=index.__getitem__)
    roots = components((index[x], index[y]) for x, y, _ in pairs)
    bin_of = {gid: hash(roots.get(n, n)) % n_bins for n, gid in enumerate(gids)}
    part_bins: dict[int, dict[int, int]] = defaultdict(dict)
    for (part, pos), b in bin_of.items():
        part_bins[part][pos] = b
    bin_pairs: list[list[tuple[Gid, Gid, int]]] = [[] for _ in range(n_bins)]
    for x, y, d in pairs:
        bin_pairs[bin_of[x]].append((x, y, d))
    pieces = [client.submit(part_pieces, p, i, part_bins.get(i, {}), n_bins) for i, p in enumerate(parts)]
    results = client.gather([client.submit(choose_bin, [client.submit(_item, piece, b) for piece in pieces],
                                           Packed(bin_pairs[b]), *how) for b in range(n_bins) if bin_pairs[b]])
    found: dict[Gid, tuple[Gid, int, tuple[float, float]]] = {}
    named: dict[Gid, Entry] = {}
    compared = 0
    for removed, entries, n in results:
        found.update(removed)
        named.update(entries)
        compared += n
    return found, named, compared


def _item(value: Any, index: int) -> Any:
    return value[index]


def jsonl_files(inputs: Sequence[str]) -> list[str]:
    """The JSON Lines files of INPUTS (files, and the ``.jsonl``/``.ndjson`` files of folders, in sorted order)."""
    out: list[str] = []
    for name in inputs:
        path = Path(name)
        if path.is_dir():
            out.extend(str(p) for p in sorted(path.rglob("*")) if p.suffix.lower() in (".jsonl", ".ndjson")
                       and not any(part.startswith(".") for part in p.relative_to(path).parts))
        elif path.suffix.lower() in (".jsonl", ".ndjson") and path.is_file():
            out.append(str(path))
        else:
            raise ConfigError(f"{name}: dedup on Dask reads JSON Lines files (or folders of them); convert it, or "
                              "run without --dask")
    return out
