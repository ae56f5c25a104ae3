"""How the winnowed keys (``simdup.sk``) are written: the node's indexing CPU and the key search, per encoding.

The keys are most of what a document with every level costs the node: about 100 near-unique
terms per corpus document. This benchmark bulk-indexes the same documents, fingerprinted once
beforehand (so the client's share is nothing but sending), with the keys written five ways,
each into its own one-shard index, the variants rotated over ``--rounds``:

plain        title and text only (``helpers.bulk``'s reference of ``bench_es_index.py``);
hex          today's layout: a ``keyword`` array of 16 hex digits per key;
one string   the same keys joined by spaces in one ``text`` value (``whitespace`` analyzer, docs only);
base64       a ``keyword`` array of 11 URL-safe base64 characters per key;
long         a ``long`` array (the key as a signed 64-bit number; points, no doc values);
no keys      the document without its keys (what they cost).

Printed per variant and round: wall seconds, node CPU per 1,000 documents (from /proc), and
index bytes per document. Then the key search of ``hex`` against ``long`` (a named
``constant_score`` ``term`` clause per query key, as :func:`simdup_es.es.bodies.part_search`
asks, on ``--queries`` stored documents, both indices force-merged): took p50 and node CPU per
query, the variants alternated over three passes, and whether both return the same hits with
the same matched keys.

    SIMDUP_TEST_ES_URL=http://127.0.0.1:9400 SIMDUP_DATA=data python benchmarks/bench_key_encodings.py [--docs 20000]
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import random
import statistics
import struct
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_es_index import corpus, es_cpu_ms, load  # noqa: E402

PREFIX = "simdup-bench-keys"
Doc = tuple[str, str | None, str, int, str, int, list[int], list[int], int]
"""id, title, text, fingerprint, version, units, part fingerprints, keys, parts cut."""


def prepared(n: int) -> list[Doc]:
    """The first ``n`` corpus documents with every level, as the Elasticsearch store writes them."""
    from simdup_es import default_fingerprinter
    from simdup_es.fingerprint import Doc as Text
    from simdup_es.parts import PartPrinter
    from simdup_es.store.base import stored_levels

    records = load(corpus(n, Path(tempfile.mkdtemp(prefix="simdup-bench-"))))
    printer = PartPrinter(default_fingerprinter())
    out = []
    for r, result, levels in printer.map_items(records, lambda r: Text(r["text"], r.get("title")), workers=2):
        value = result.unwrap()
        parts, keys, cut = stored_levels(levels)
        out.append((r["id"], r.get("title"), r["text"], int(value.value), value.version, levels.units,
                    list(parts), list(keys), cut))
    return out


def signed(key: int) -> int:
    return key - (1 << 64) if key >= 1 << 63 else key


def encodings() -> dict[str, tuple[dict[str, Any], Callable[[Doc], str]]]:
    """Variant name -> (mappings, the document's JSON)."""
    from simdup_es import schema
    from simdup_es.config import BlockLayout
    from simdup_es.es import bodies
    from simdup_es.es.mappings import index_mappings

    hex_mappings = index_mappings((BlockLayout(),), schema.QUADS)

    def with_keys(field: dict[str, Any]) -> dict[str, Any]:
        m = json.loads(json.dumps(hex_mappings))
        m["properties"][schema.ROOT]["properties"][schema.KEYS_NAME] = field
        return m

    def source(d: Doc, keys: str | None = None) -> str:
        doc_id, title, text, fp, version, units, parts, key_values, cut = d
        out = bodies.document_json(fp, version, text, title, (BlockLayout(),), (doc_id, units, parts, key_values, cut),
                                   schema.QUADS)
        if keys is None:
            return out
        return out.replace(f'"{schema.KEYS_NAME}":[{schema.key_terms_json(key_values)}]', f'"{schema.KEYS_NAME}":{keys}')

    def b64(k: int) -> str:
        return '"' + base64.urlsafe_b64encode(struct.pack(">Q", k))[:11].decode() + '"'

    docs_only = {"type": "keyword", "index_options": "docs", "norms": False, "doc_values": False}
    return {
        "plain": ({"properties": {"title": {"type": "text"}, "text": {"type": "text"}}},
                  lambda d: json.dumps({"title": d[1], "text": d[2]}, ensure_ascii=False)),
        "hex": (hex_mappings, source),
        "one string": (with_keys({"type": "text", "analyzer": "whitespace", "index_options": "docs", "norms": False}),
                       lambda d: source(d, '"' + " ".join(schema.key_terms(d[7])) + '"')),
        "base64": (with_keys(docs_only), lambda d: source(d, "[" + ",".join(map(b64, d[7])) + "]")),
        "long": (with_keys({"type": "long", "doc_values": False}),
                 lambda d: source(d, "[" + ",".join(str(signed(k)) for k in d[7]) + "]")),
        "no keys": (hex_mappings, lambda d: source(d, "[]")),
    }


def bulk_bodies(docs: list[Doc], write: Callable[[Doc], str], batch: int = 500) -> list[str]:
    return ["".join(json.dumps({"index": {"_id": d[0]}}) + "\n" + write(d) + "\n" for d in docs[i : i + batch])
            for i in range(0, len(docs), batch)]


def load_index(client: Any, index: str, mappings: dict[str, Any], chunks: list[str]) -> tuple[float, float]:
    """Create ``index`` and bulk ``chunks`` into it, one request at a time; (wall seconds, node CPU ms)."""
    client.options(ignore_status=404).indices.delete(index=index)
    client.indices.create(index=index, mappings=mappings, settings={"number_of_shards": 1, "number_of_replicas": 0})
    cpu, t = es_cpu_ms(client), time.perf_counter()
    for chunk in chunks:
        answer = client.bulk(index=index, operations=chunk)
        if answer["errors"]:
            raise SystemExit(f"bulk into {index} failed: {next(i for i in answer['items'] if 'error' in i['index'])}")
    client.indices.refresh(index=index)
    return time.perf_counter() - t, es_cpu_ms(client) - cpu


def key_search(client: Any, docs: list[Doc], queries: int) -> None:
    """The named key clauses of a search on ``hex`` and ``long`` indices of the same documents."""
    from simdup_es import schema
    from simdup_es.store.base import query_terms

    names = {"hex": f"{PREFIX}-q-hex", "long": f"{PREFIX}-q-long"}
    variants = encodings()
    for name, index in names.items():
        mappings, write = variants[name]
        load_index(client, index, mappings, bulk_bodies(docs, write))
        client.indices.forcemerge(index=index, max_num_segments=1)
    asked = random.Random(1).sample(docs, min(queries, len(docs)))

    def body(d: Doc, name: str) -> dict[str, Any]:
        _, keys = query_terms([], d[7])
        should = [{"constant_score": {"filter": {"term": {schema.KEYS: signed(k) if name == "long" else schema.key_term(k)}},
                                      "_name": f"k{i}"}} for i, k in keys]
        return {"query": {"bool": {"should": should, "minimum_should_match": 1}}, "size": 100, "_source": False,
                "sort": [{"_score": "desc"}, {schema.ID: "asc"}]}

    seen: dict[str, list[Any]] = {}
    rows: dict[str, list[str]] = {name: [] for name in names}
    for r in range(3):
        for name in names if r % 2 == 0 else list(names)[::-1]:
            cpu, took, hits = es_cpu_ms(client), [], []
            for d in asked:
                answer = client.search(index=names[name], body=body(d, name))
                took.append(answer["took"])
                hits.append([(h["_id"], sorted(h.get("matched_queries", []))) for h in answer["hits"]["hits"]])
            seen.setdefault(name, hits)
            rows[name].append(f"took p50 {statistics.median(took):.0f} ms, node {(es_cpu_ms(client) - cpu) / len(asked):.1f} ms")
    print(f"\nkey search, {len(asked)} queries (named term clauses per query key), three passes:")
    for name, cells in rows.items():
        print(f"  {name:5s} " + "; ".join(cells))
    print(f"  same hits and matched keys: {seen['hex'] == seen['long']}")
    for index in names.values():
        client.indices.delete(index=index)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--url", default=os.environ.get("SIMDUP_TEST_ES_URL", "http://127.0.0.1:9200"))
    ap.add_argument("--docs", type=int, default=20_000)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--queries", type=int, default=200)
    args = ap.parse_args()

    from elasticsearch import Elasticsearch

    client = Elasticsearch(args.url, request_timeout=600)
    docs = prepared(args.docs)
    print(f"{len(docs)} documents, {statistics.mean(len(d[7]) for d in docs):.1f} keys and "
          f"{statistics.mean(len(d[6]) for d in docs):.1f} parts each; load average {os.getloadavg()}")
    variants = encodings()
    chunks = {name: bulk_bodies(docs, write) for name, (_, write) in variants.items()}
    for name in ("plain", "hex"):  # the node's JIT warms up on its first bulk requests
        load_index(client, f"{PREFIX}-warmup", variants[name][0], chunks[name][:8])
    client.indices.delete(index=f"{PREFIX}-warmup")
    rows: dict[str, list[str]] = {name: [] for name in variants}
    for r in range(args.rounds):
        for name in variants if r % 2 == 0 else list(variants)[::-1]:
            index = f"{PREFIX}-{name.replace(' ', '-')}"
            wall, cpu = load_index(client, index, variants[name][0], chunks[name])
            size = client.indices.stats(index=index, metric="store")["_all"]["primaries"]["store"]["size_in_bytes"]
            client.indices.delete(index=index)
            rows[name].append(f"{wall:5.1f} s, node {1000 * cpu / len(docs):4.0f} ms/1000, {size / len(docs):5.0f} B/doc")
    print("\nbulk of the prepared documents (one request at a time), per round:")
    for name, cells in rows.items():
        sent = sum(len(c.encode()) for c in chunks[name]) / len(docs)
        print(f"  {name:10s} " + " | ".join(cells) + f"   (sent {sent:.0f} B/doc)")
    key_search(client, docs, args.queries)


if __name__ == "__main__":
    main()
