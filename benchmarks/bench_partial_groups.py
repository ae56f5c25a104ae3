"""Partial groups on a mosaic corpus: complete link (what ``simdup groups --partial`` does) against single link.

The corpus: ``--docs`` documents (2,000), each ``--mix`` sentences (4 to 12) drawn at random
from one pool of ``--pool`` sentences (741) of the project corpus (data/zh-docs.jsonl):
every document copies passages from many others and shares nothing with most, the case that
chained 1,869 of 2,000 documents into one group. Besides them, ``--near`` near-duplicate
pairs (a document of the corpus and a copy with two characters deleted), so the near-duplicate
groups can be checked to stay as they are.

One embedded store, filled as ``simdup index`` fills it; then, in one run, the part lookups
and the comparison matrix of ``groups --partial`` once (:func:`simdup_es.groups.partial_copies`),
and from the same confirmed copies both groupings:

- single link: connected components of the near-duplicate pairs and the copies (the rule before);
- complete link: :func:`simdup_es.partial_groups.complete_link` (the rule now), with the pairs
  no lookup judged judged when a group needs them.

For each: groups, documents grouped, the largest group, and the groups that hold two members
sharing nothing (no character 8-shingle of the unified text in common) or two that the
evaluation's oracle does not take for copies of each other (``benchmarks/copy_oracle.py``: a
fifth of the smaller side's 8-shingles shared, or a shared run of 30 characters of rare text,
counted over the mosaic corpus). Last, whether the
near-duplicate groups (document distance <= 3) are the same in both and in a plain
``simdup groups``.

    SIMDUP_DATA=data python benchmarks/bench_partial_groups.py [--docs 2000] [--pool 741] [--seed 1]
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import random
import re
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import copy_oracle  # noqa: E402

from simdup_es import default_fingerprinter  # noqa: E402
from simdup_es.groups import (  # noqa: E402
    GroupsSummary, PartialLinks, pair_judge, distinct, doc_pairs, near_pairs, partial_copies, update_groups,
)
from simdup_es.indexer import index_items  # noqa: E402
from simdup_es.join import components  # noqa: E402
from simdup_es.multilevel import MultiParams  # noqa: E402
from simdup_es.parts import PartPrinter  # noqa: E402
from simdup_es.partial_groups import Link, complete_link  # noqa: E402
from simdup_es.search import comparer  # noqa: E402
from simdup_es.sources import Record  # noqa: E402
from simdup_es.store import open_store  # noqa: E402
from simdup_es.text import unify_many  # noqa: E402

DATA = Path(os.environ.get("SIMDUP_DATA") or ROOT / "data")
_SENTENCE = re.compile(r"[^。！？\n]{15,80}[。！？]")


def corpus(docs: int, pool: int, mix: tuple[int, int], near: int, seed: int) -> dict[str, str]:
    rng = random.Random(seed)
    sentences: list[str] = []
    with open(DATA / "zh-docs.jsonl", encoding="utf-8") as f:
        for line in f:
            sentences.extend(_SENTENCE.findall(json.loads(line)["text"]))
    sentences = rng.sample(sorted(set(sentences)), pool)
    out = {f"m{i:05d}": "".join(rng.sample(sentences, rng.randint(*mix))) for i in range(docs)}
    for i in range(near):  # a copy with two characters of one sentence deleted
        text = out[f"m{i:05d}"]
        at = rng.randrange(len(text) - 2)
        out[f"m{i:05d}~near"] = text[:at] + text[at + 2 :]
    return out


def groups_of(pairs: list[tuple[int, int]]) -> list[list[int]]:
    by_root: dict[int, list[int]] = defaultdict(list)
    for p, root in components(pairs).items():
        by_root[root].append(p)
    return [sorted(g) for g in by_root.values()]


def check(groups: list[list[int]], texts: list[copy_oracle.Text], index: copy_oracle.ShingleIndex) -> dict[str, int]:
    """Groups, documents, the largest, and the groups with a pair of members sharing nothing, or a pair the oracle does
    not take for copies. The pairs that share something are found through the shingles (each held by a few
    members), not pair by pair; a group with a pair sharing nothing needs no verdict."""
    nothing = below = 0
    for group in groups:
        holders: dict[int, list[int]] = defaultdict(list)
        for member in group:
            for gram in texts[member].distinct.tolist():
                holders[gram].append(member)
        shared = {pair for members in holders.values() for pair in itertools.combinations(members, 2)}
        apart = len(shared) < len(group) * (len(group) - 1) // 2
        nothing += apart
        below += apart or any(copy_oracle.verdict(texts[a], texts[b], index).reason is None for a, b in shared)
    sizes = [len(g) for g in groups]
    return {"groups": len(groups), "grouped": sum(sizes), "largest": max(sizes, default=0),
            "with two members sharing nothing": nothing, "with two members the oracle takes for no copies": below}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--docs", type=int, default=2000)
    ap.add_argument("--pool", type=int, default=741)
    ap.add_argument("--mix", type=int, nargs=2, default=(4, 12))
    ap.add_argument("--near", type=int, default=50)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()
    texts = corpus(args.docs, args.pool, tuple(args.mix), args.near, args.seed)
    fingerprinter = default_fingerprinter()
    printer = PartPrinter(fingerprinter)
    links = PartialLinks(printer, comparer(), MultiParams(), args.workers)
    with tempfile.TemporaryDirectory() as folder, open_store(path=folder, create=True) as store:
        started = time.perf_counter()
        index_items([Record(t, i, i) for i, t in texts.items()], store, fingerprinter, workers=args.workers,
                    on_reject=lambda r: print("rejected", r, file=sys.stderr))
        print(f"{len(texts)} documents indexed in {time.perf_counter() - started:.1f} s", file=sys.stderr)
        store.refresh()
        with store.scan() as scan:
            fps, codes, names = scan.fingerprints()
            node_fps, node_codes, counts = distinct(fps, codes)
            i, j, _ = near_pairs(node_fps, node_codes, 3)
            node_of = {(fp, names[c]): n for n, (fp, c) in enumerate(zip(node_fps.tolist(), node_codes.tolist()))}
            docs = scan.members(node_of, every=True)
        kept = list(doc_pairs(docs.nodes, zip(i.tolist(), j.tolist())))
        versions = [names[node_codes[n]] if n >= 0 else "" for n in docs.nodes]
        roots = components(kept)
        unit_index: dict[int, int] = {}
        units = [unit_index.setdefault(roots.get(p, p), len(unit_index)) for p in range(len(docs.keys))]
        first = [units.index(u) for u in range(len(unit_index))]
        started = time.perf_counter()
        found = partial_copies(store, docs, versions, links, None, units)
        lookups = time.perf_counter() - started
        oracle_texts = [copy_oracle.Text.of(u) for u in unify_many([texts[key[-1]] for key in docs.keys])]
        oracle_index = copy_oracle.ShingleIndex(oracle_texts)
        single = groups_of(kept + [(a, b) for a, b, _ in found.links])
        judge = pair_judge(store, docs, links, found, None)
        verified = [0]

        def verify(a: int, b: int) -> bool:
            verified[0] += 1
            return judge(first[a], first[b])

        started = time.perf_counter()
        unit_groups = complete_link(len(first), [Link(units[a], units[b], s) for a, b, s in found.links], verify)
        clustering = time.perf_counter() - started
        members = defaultdict(list)
        for p, u in enumerate(units):
            members[u].append(p)
        complete = [sorted(p for u in g for p in members[u]) for g in unit_groups]
        complete += [members[u] for u in range(len(first)) if len(members[u]) > 1
                     and not any(u in g for g in unit_groups)]
        near_groups = sorted(map(tuple, groups_of(kept)))
        near_in = {"single": all(any(set(g) <= set(h) for h in single) for g in near_groups),
                   "complete": all(any(set(g) <= set(h) for h in complete) for g in near_groups)}
        summary: GroupsSummary = update_groups(store, dry_run=True)
    print(f"mosaic: {args.docs} documents of {args.mix[0]}-{args.mix[1]} sentences from a pool of {args.pool}, "
          f"{args.near} near-duplicate pairs, seed {args.seed}")
    print(f"part lookups and matrix: {len(found.links)} copies confirmed in {lookups:.1f} s; complete link "
          f"{clustering:.1f} s, {verified[0]} more pairs judged")
    print(f"near-duplicate groups (distance <= 3): {len(near_groups)}, plain 'simdup groups' {summary.groups}; "
          f"each kept whole: single link {near_in['single']}, complete link {near_in['complete']}")
    rows = {name: check(groups, oracle_texts, oracle_index) for name, groups in (("single link", single), ("complete link", complete))}
    print("| rule | " + " | ".join(rows["single link"]) + " |")
    print("|---" * (len(rows["single link"]) + 1) + "|")
    for name, row in rows.items():
        print(f"| {name} | " + " | ".join(str(v) for v in row.values()) + " |")
    print(f"complete-link group sizes: {np.bincount([len(g) for g in complete]).tolist()}")


if __name__ == "__main__":
    main()
