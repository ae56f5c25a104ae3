"""What each field of a document's ``simdup`` object costs the Elasticsearch node to index.

The documents ``simdup index`` writes (every level; the first N of $SIMDUP_DATA/zh-docs.jsonl, as
``bench_es_index.py`` makes them) are indexed once, read back from ``_source``, and then written again
by ``helpers.bulk`` (chunks of 500, plus a refresh) into a fresh index, once whole and once without
each field in turn (its mapping kept), beside plain bulk of their title and text alone, in rotating
order every round. What one leaves out is what it costs the node (CPU from /proc, or ``_nodes/stats``).
Two mapping variants are timed too: the winnowed keys (``sk``) and part quads (``pq``) as one string
each, split by a ``whitespace`` analyzer into a ``text`` field (one field value, not an array of
keywords: the same terms).

    SIMDUP_DATA=data SIMDUP_TEST_ES_URL=http://127.0.0.1:9200 python benchmarks/bench_es_fields.py \\
        [--docs 20000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import copy
import os
import statistics
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_es_index as bench  # noqa: E402  (its corpus, timing and index helpers)

INDEX = f"{bench.PREFIX}-fields"
LEFT_OUT = {"without sk": ("sk",), "without pq": ("pq",), "without pf": ("pf",), "without unified": ("unified",),
            "without b0-b7": tuple(f"b{j}" for j in range(8))}
AS_TEXT = {"sk, pq as text": ("sk", "pq")}


def written(client: Any, n: int) -> tuple[list[tuple[str, dict[str, Any]]], dict[str, Any]]:
    """The ``_id`` and ``_source`` of each of ``n`` documents as ``simdup index`` writes them, and the index's mapping."""
    from elasticsearch import helpers

    from simdup_es import default_fingerprinter
    from simdup_es.indexer import index_items
    from simdup_es.sources import Fields, read_paths
    from simdup_es.store.elasticsearch import ElasticsearchStore

    source = f"{bench.PREFIX}-fields-source"
    bench.fresh_index(client, source)
    store = ElasticsearchStore(client, source)
    store.setup()
    rejects: list[Any] = []
    with tempfile.TemporaryDirectory(prefix="simdup-bench-") as folder:
        index_items(read_paths([bench.corpus(n, Path(folder))], Fields()), store, default_fingerprinter(),
                    on_reject=rejects.append)
    assert not rejects, rejects[:3]
    store.refresh()
    docs = [(h["_id"], h["_source"]) for h in helpers.scan(client, index=source, query={"query": {"match_all": {}}})]
    mapping = client.indices.get_mapping(index=source)[source]["mappings"]
    bench.fresh_index(client, source)
    return docs, mapping


def variant(name: str, docs: list[tuple[str, dict[str, Any]]], mapping: dict[str, Any]
            ) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The bulk actions and the mapping of one variant."""
    if name == "plain":
        return ([{"_index": INDEX, "_id": i, "title": s.get("title"), "text": s["text"]} for i, s in docs],
                {"properties": {"title": {"type": "text"}, "text": {"type": "text"}}})
    mapping = copy.deepcopy(mapping)
    fields = mapping["properties"]["simdup"]["properties"]
    for field in AS_TEXT.get(name, ()):
        fields[field] = {"type": "text", "analyzer": "whitespace", "index_options": "docs", "norms": False}

    def source(s: dict[str, Any]) -> dict[str, Any]:
        simdup = {k: v for k, v in s["simdup"].items() if k not in LEFT_OUT.get(name, ())}
        simdup.update({k: " ".join(simdup[k]) for k in AS_TEXT.get(name, ()) if k in simdup})
        return {**s, "simdup": simdup}

    return [{"_index": INDEX, "_id": i, "_source": source(s)} for i, s in docs], mapping


def rotated(names: list[str], rounds: int) -> Iterator[tuple[int, str]]:
    for r in range(rounds):
        for name in names[r % len(names):] + names[: r % len(names)]:
            yield r, name


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--url", default=os.environ.get("SIMDUP_TEST_ES_URL", "http://127.0.0.1:9200"))
    ap.add_argument("--docs", type=int, default=20000)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()

    from elasticsearch import Elasticsearch, helpers

    client = Elasticsearch(args.url, request_timeout=300)
    docs, mapping = written(client, args.docs)
    names = ["whole", "plain", *LEFT_OUT, *AS_TEXT]
    runs: dict[str, list[dict[str, float]]] = {name: [] for name in names}
    print(f"{len(docs)} documents as simdup index writes them; {args.rounds} rounds, load average {os.getloadavg()}")
    try:
        for r, name in rotated(names, args.rounds):
            actions, mappings = variant(name, docs, mapping)
            bench.fresh_index(client, INDEX, mappings)

            def run(actions: list[dict[str, Any]] = actions) -> int:
                ok, _ = helpers.bulk(client, actions, chunk_size=bench.BATCH)
                client.indices.refresh(index=INDEX)
                return ok

            got = bench.timed(client, run)
            got["bytes"] = bench.index_bytes(client, INDEX, len(docs))
            runs[name].append(got)
            print(f"  round {r + 1}: {name:16s} node {got['node_ms'] / len(docs) * 1000:5.0f} ms per 1,000 documents, "
                  f"{got['seconds']:5.2f} s, {got['bytes']:5.0f} B/doc; load {os.getloadavg()[0]:.1f}", flush=True)
    finally:
        bench.fresh_index(client, INDEX)

    def node(name: str) -> float:
        return statistics.median(g["node_ms"] for g in runs[name]) / len(docs) * 1000

    extra = node("whole") - node("plain")
    print(f"\nmedian node CPU, ms per 1,000 documents (the simdup object's share: whole {node('whole'):.0f} - plain "
          f"{node('plain'):.0f} = {extra:.0f}); load average now {os.getloadavg()}")
    for name in names:
        saved = node("whole") - node(name)
        share = f"  saves {saved:4.0f} ({saved / extra:4.0%} of the object's share)" if name not in ("whole", "plain") \
            else ""
        print(f"  {name:16s} {node(name):5.0f}   {statistics.median(g['bytes'] for g in runs[name]):6.0f} B/doc{share}")


if __name__ == "__main__":
    main()
