"""Size per document of each ``simdup index --levels`` choice, in Elasticsearch and in the embedded store.

Indexes the zh corpus ($SIMDUP_DATA/zh-docs.jsonl, or its first --docs documents) with
``--levels all``, ``keys`` and ``document`` into a fresh index of the node at --url,
force-merged to one segment (primary store size), and into a fresh embedded store
(its folder). Texts and titles are included in both.

    SIMDUP_TEST_ES_URL=http://127.0.0.1:9299 python benchmarks/bench_levels_size.py [--docs N]
"""

from __future__ import annotations

import argparse
import itertools
import os
import shutil
import tempfile
from pathlib import Path

from elasticsearch import Elasticsearch

from simdup_es import default_fingerprinter
from simdup_es.indexer import LEVELS, index_items
from simdup_es.sources import Fields, read_paths
from simdup_es.store.elasticsearch import ElasticsearchStore
from simdup_es.store.local import LocalStore

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--url", default=os.environ.get("SIMDUP_TEST_ES_URL", "http://127.0.0.1:9200"))
    ap.add_argument("--docs", type=int, help="only the first N documents")
    args = ap.parse_args()
    source = Path(os.environ.get("SIMDUP_DATA", ROOT / "data")) / "zh-docs.jsonl"
    if not source.exists():
        raise SystemExit(f"{source} is missing: run scripts/fetch-corpus, or set SIMDUP_DATA")
    fingerprinter = default_fingerprinter()
    client = Elasticsearch(args.url, request_timeout=300)

    def items():  # type: ignore[no-untyped-def]
        return itertools.islice(read_paths([source], Fields()), args.docs)

    for levels in LEVELS:
        index = f"simdup-bench-size-{levels}"
        client.options(ignore_status=404).indices.delete(index=index)
        store = ElasticsearchStore(client, index)
        store.setup()
        n = index_items(items(), store, fingerprinter, on_reject=print, levels=levels).indexed
        client.indices.forcemerge(index=index, max_num_segments=1)
        client.indices.refresh(index=index)
        es_bytes = client.indices.stats(index=index, metric="store")["indices"][index]["primaries"]["store"]["size_in_bytes"]
        client.indices.delete(index=index)
        folder = Path(tempfile.mkdtemp(prefix="simdup-bench-"))
        with LocalStore(folder / "store") as local:
            local.setup()
            index_items(items(), local, fingerprinter, on_reject=print, levels=levels)
        local_bytes = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())
        shutil.rmtree(folder)
        print(f"--levels {levels:9s} {n} documents: Elasticsearch {es_bytes / n:6,.0f} B/doc, "
              f"embedded store {local_bytes / n:6,.0f} B/doc")
    client.close()


if __name__ == "__main__":
    main()
