"""Elasticsearch layouts for multilevel retrieval: index size and query latency (issue 11).

Indexes the first --docs documents of data/zh-docs.jsonl ($SIMDUP_DATA) with their
levels (simdup_es.parts) in each layout, on its own indices (deleted afterwards):

- ``doc``: the document fingerprint only (simdup.fp, version, b0..b7: today's mapping),
  the reference for size;
- ``keys``: plus ``simdup.sk``, a keyword array of sentence keys (16 hex digits), and
  ``simdup.units``;
- ``nested``: plus ``simdup.parts``, nested documents with b0..b7 each, so the 5-of-8
  rule holds within one part;
- ``parts index``: ``keys`` plus a second index with one document per part
  (parent id, b0..b7).

A flat keyword array of "block position:value" for all parts of a document is not
measured: it loses which part a block came from, so 5 of 8 would no longer mean one
part within distance 3.

Queries are --queries corpus documents (they find themselves and their copies). Each
asks in one request (``nested``: one ``bool``; ``parts index``: one ``_msearch`` of two
searches) for documents sharing any sentence key or any part (5 of 8 blocks), with a
named clause per query key and part, so the client learns which of the query's keys
and parts matched (``matched_queries``), as :class:`simdup_es.multilevel.PartStore`
requires. It prints index bytes per document (after a force-merge) and p50/p95 latency
(client included), and checks that the layouts return the same candidates as
:class:`simdup_es.multilevel.MemoryPartIndex`.

    SIMDUP_TEST_ES_URL=http://127.0.0.1:9299 SIMDUP_DATA=/work/main/data \\
        .venv/bin/python benchmarks/bench_es_parts.py [--docs 3000] [--queries 200]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np
from elasticsearch import Elasticsearch, helpers

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from simdup_es import simhash as sh  # noqa: E402
from simdup_es.fingerprint import Fingerprinter  # noqa: E402
from simdup_es.multilevel import MemoryPartIndex  # noqa: E402
from simdup_es.parts import PartPrinter  # noqa: E402
from simdup_es.text import unify  # noqa: E402

DATA = Path(os.environ.get("SIMDUP_DATA") or ROOT / "data")
PREFIX = "bench-parts-"
BLOCKS = {f"b{j}": {"type": "keyword"} for j in range(8)}
DOC = {"fp": {"type": "keyword"}, "version": {"type": "keyword"}, **BLOCKS}
LIMIT = 100


def mapping(layout: str) -> dict:
    props: dict = dict(DOC)
    if layout in ("keys", "nested", "parts index"):
        props.update(sk={"type": "keyword"}, units={"type": "integer"})
    if layout == "nested":
        props["parts"] = {"type": "nested", "properties": dict(BLOCKS)}
    return {"properties": {"id": {"type": "keyword"}, "simdup": {"properties": props}}}


def hexb(v: int) -> str:
    return f"{v:02x}"


def source(doc_id: str, fp: int, levels, layout: str) -> dict:  # type: ignore[no-untyped-def]
    s: dict = {"fp": sh.to_hex(fp), "version": levels.version, **{f"b{j}": hexb(b) for j, b in enumerate(sh.blocks(fp))}}
    fps, keys = levels.stored()
    if layout != "doc":
        s.update(sk=[f"{k:016x}" for k in keys], units=levels.units)
    if layout == "nested":
        s["parts"] = [{f"b{j}": hexb(b) for j, b in enumerate(sh.blocks(f))} for f in fps]
    return {"id": doc_id, "simdup": s}


def part_clause(f: int, field: str, name: str) -> dict:
    return {"bool": {"should": [{"term": {f"{field}.b{j}": hexb(b)}} for j, b in enumerate(sh.blocks(f))],
                     "minimum_should_match": 5, "_name": name}}


def key_clauses(keys: list[int]) -> list[dict]:
    return [{"constant_score": {"filter": {"term": {"simdup.sk": f"{k:016x}"}}, "_name": f"k{i}"}} for i, k in enumerate(keys)]


def nested_body(parts, keys, version):  # type: ignore[no-untyped-def]
    should = key_clauses(keys) + [
        {"nested": {"path": "simdup.parts", "score_mode": "max", "query": {"constant_score": {"filter": part_clause(f, "simdup.parts", f"p{i}")}}, "_name": f"p{i}"}}
        for i, f in enumerate(parts) if f is not None
    ]
    return {"query": {"bool": {"should": should, "minimum_should_match": 1, "filter": [{"term": {"simdup.version": version}}]}},
            "size": LIMIT, "_source": ["id", "simdup.units"], "sort": ["_score", {"id": "asc"}], "track_total_hits": False}


def keys_body(keys, version):  # type: ignore[no-untyped-def]
    return {"query": {"bool": {"should": key_clauses(keys), "minimum_should_match": 1, "filter": [{"term": {"simdup.version": version}}]}},
            "size": LIMIT, "_source": ["id", "simdup.units"], "sort": ["_score", {"id": "asc"}], "track_total_hits": False}


def parts_body(parts):  # type: ignore[no-untyped-def]
    should = [{"constant_score": {"filter": part_clause(f, "simdup", f"p{i}")}} for i, f in enumerate(parts) if f is not None]
    return {"query": {"bool": {"should": should or [{"match_none": {}}], "minimum_should_match": 1}},
            "size": 2000, "_source": ["parent"], "track_total_hits": False}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--docs", type=int, default=3000)
    ap.add_argument("--queries", type=int, default=200)
    args = ap.parse_args()
    es = Elasticsearch(os.environ.get("SIMDUP_TEST_ES_URL", "http://127.0.0.1:9200"), request_timeout=120)
    rows = [json.loads(line) for line, _ in zip(open(DATA / "zh-docs.jsonl", encoding="utf-8"), range(args.docs))]
    fp = Fingerprinter()
    printer = PartPrinter(fp)
    texts = [unify(r["text"]) for r in rows]
    t0 = time.perf_counter()
    fps = [r.fingerprint.value if r.fingerprint else 0 for r in fp.map(texts_as_docs(texts), workers=2, unified=True)]
    levels = list(printer.map(texts, workers=2, unified=True))
    print(f"{len(rows)} documents, levels in {time.perf_counter() - t0:.0f} s; "
          f"{np.mean([len(x.stored()[0]) for x in levels]):.1f} parts and {np.mean([len(x.stored()[1]) for x in levels]):.1f} keys per document")
    ref = MemoryPartIndex()
    for r, f, lv in zip(rows, fps, levels):
        ref.put_levels(r["id"], lv, f)
    rng = np.random.default_rng(5)
    qs = rng.choice(len(rows), min(args.queries, len(rows)), replace=False)
    sizes: dict[str, float] = {}
    lat: dict[str, list[float]] = {}
    agree: dict[str, int] = {}
    try:
        for layout in ("doc", "keys", "nested", "parts index"):
            name = PREFIX + layout.replace(" ", "-")
            for i in (name, name + "-parts"):
                es.options(ignore_status=404).indices.delete(index=i)
            es.indices.create(index=name, mappings=mapping(layout), settings={"number_of_shards": 1, "number_of_replicas": 0, "refresh_interval": -1})
            helpers.bulk(es, ({"_index": name, "_id": r["id"], "_source": source(r["id"], f, lv, layout)} for r, f, lv in zip(rows, fps, levels)), chunk_size=1000)
            indices = [name]
            if layout == "parts index":
                pname = name + "-parts"
                es.indices.create(index=pname, mappings={"properties": {"parent": {"type": "keyword"}, "simdup": {"properties": dict(BLOCKS)}}},
                                  settings={"number_of_shards": 1, "number_of_replicas": 0, "refresh_interval": -1})
                helpers.bulk(es, ({"_index": pname, "_source": {"parent": r["id"], "simdup": {f"b{j}": hexb(b) for j, b in enumerate(sh.blocks(f))}}}
                                  for r, lv in zip(rows, levels) for f in lv.stored()[0]), chunk_size=2000)
                indices.append(pname)
            for i in indices:
                es.indices.refresh(index=i)
                es.indices.forcemerge(index=i, max_num_segments=1)
            stats = es.indices.stats(index=indices, metric="store")
            sizes[layout] = sum(stats["indices"][i]["primaries"]["store"]["size_in_bytes"] for i in indices) / len(rows)
            if layout == "doc":
                continue
            times, same, checked = [], 0, 0
            for q in qs:
                lv = levels[q]
                parts = list(lv.fingerprints)
                keys = [k.key for k in lv.keys]
                t = time.perf_counter()
                got: dict[str, tuple[set, set]] = {}
                if layout == "nested":
                    hits = es.search(index=name, **nested_body(parts, keys, lv.version))["hits"]["hits"]
                    for h in hits:
                        mq = h.get("matched_queries", [])
                        got[h["_source"]["id"]] = ({int(m[1:]) for m in mq if m[0] == "p"}, {int(m[1:]) for m in mq if m[0] == "k"})
                elif layout == "parts index":
                    res = es.msearch(searches=[{"index": name}, keys_body(keys, lv.version), {"index": name + "-parts"}, parts_body(parts)])
                    k_hits, p_hits = (r["hits"]["hits"] for r in res["responses"])
                    for h in k_hits:
                        got.setdefault(h["_source"]["id"], (set(), set()))[1].update(int(m[1:]) for m in h.get("matched_queries", []))
                    for h in p_hits:
                        got.setdefault(h["_source"]["parent"], (set(), set()))[0].update(int(m[1:]) for m in h.get("matched_queries", []))
                else:  # keys only
                    hits = es.search(index=name, **keys_body(keys, lv.version))["hits"]["hits"]
                    for h in hits:
                        got[h["_source"]["id"]] = (set(), {int(m[1:]) for m in h.get("matched_queries", [])})
                times.append(time.perf_counter() - t)
                want = ref.part_candidates(parts if layout != "keys" else [], keys, lv.version, limit=10**6)
                if layout == "parts index" and len(want) > LIMIT:
                    continue  # its two searches are cut separately: compared only below the limit
                want_map = {c.id: (set(c.parts), set(c.keys)) for c in want[:LIMIT]}
                same += got == want_map
                checked += 1
            lat[layout] = times
            agree[layout] = (same, checked)
    finally:
        for layout in ("doc", "keys", "nested", "parts index"):
            name = PREFIX + layout.replace(" ", "-")
            for i in (name, name + "-parts"):
                es.options(ignore_status=404).indices.delete(index=i)
    print(f"\n{'layout':<14}{'bytes/doc':>12}{'vs doc':>9}{'p50 ms':>9}{'p95 ms':>9}{'same as reference':>20}")
    for layout, b in sizes.items():
        t = lat.get(layout)
        p50 = f"{1000 * np.percentile(t, 50):9.1f}{1000 * np.percentile(t, 95):9.1f}" if t else f"{'':>18}"
        print(f"{layout:<14}{b:>12.0f}{b / sizes['doc']:>8.2f}x{p50}{(f'{agree[layout][0]}/{agree[layout][1]}') if t else '':>20}")


def texts_as_docs(texts):  # type: ignore[no-untyped-def]
    from simdup_es.fingerprint import Doc

    return (Doc(t) for t in texts)


if __name__ == "__main__":
    main()
