"""The part search on both stores at 100,000 documents: latency per 2 kB query, and bytes per document.

Both :class:`~simdup_es.store.local.LocalStore` and
:class:`~simdup_es.store.elasticsearch.ElasticsearchStore` filled with --docs documents
(default 100,000) with their levels, and beside them the same documents without
levels (the document level alone) for bytes per document. Per 2 kB query document
(--queries corpus documents cut to 2 kB of UTF-8, one line in five dropped) it prints
p50/p95 of the document-level query (``near_duplicates``), ``part_candidates`` and
``find_copies`` (the comparison matrix on the best candidates, texts read from the
store), in the same run. The stored documents are the corpus's zh documents (real
levels) plus synthetic edits of them made at the level of their fingerprints, which
is what retrieval sees: each keeps a random 70-100 % of its source's sentence keys
(the rest replaced by new keys), flips 1-4 bits in half of its part fingerprints
(some still match 6 of 8 blocks, some no longer), takes one or two keys and a part
from another document (shared sentences), and has its source's text with one line
in ten dropped (so the matrix compares texts of real size). The result sets of the
two stores are compared with each other on every query.

    SIMDUP_TEST_ES_URL=http://127.0.0.1:9299 SIMDUP_DATA=/work/main/data \\
        .venv/bin/python benchmarks/bench_es_parts.py [--docs 100000] [--queries 200]

To compare two versions of the library, run it with each in one sitting: the library is the
checkout the script is in (the first line says which).

Measured (100,000 documents, 200 queries, shared 2-core machine, node 8.19 with a 1 GB
heap; about 4 minutes): p50 (p95) ms per query, embedded: document level 0.02 (0.07),
part_candidates 0.31 (0.75), find_copies 3.24 (6.14), all three 3.59 (6.96);
Elasticsearch: document level 1.60 (5.66), part_candidates 6.39 (15.39), find_copies 9.31
(16.55), all three 17.95 (31.61). Same candidates and copies from both stores on 200/200
queries. Bytes per document, document level alone -> with levels: embedded 1,498 -> 2,002
(+503), Elasticsearch 1,642 -> 2,584 (+942), texts included in both.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np
from elasticsearch import Elasticsearch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from simdup_es.fingerprint import Fingerprinter  # noqa: E402
from simdup_es.parts import PartPrinter  # noqa: E402
from simdup_es.text import UnifiedText, unify  # noqa: E402

DATA = Path(os.environ.get("SIMDUP_DATA") or ROOT / "data")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--docs", type=int, default=100_000)
    ap.add_argument("--queries", type=int, default=200)
    args = ap.parse_args()
    import simdup_es

    print(f"simdup_es from {Path(simdup_es.__file__).parent}", flush=True)
    stores_main(args.docs, args.queries)


def _fingerprinted(texts):  # type: ignore[no-untyped-def]
    """The fingerprinter, its part printer, and the fingerprints and levels of unified ``texts`` (2 workers)."""
    fp = Fingerprinter()
    printer = PartPrinter(fp)
    fps = [r.fingerprint.value if r.fingerprint else 0 for r in fp.map(texts_as_docs(texts), workers=2)]
    return fp, printer, fps, list(printer.map(map(UnifiedText, texts), workers=2))


def texts_as_docs(texts):  # type: ignore[no-untyped-def]
    from simdup_es.fingerprint import Doc

    return (Doc(UnifiedText(t)) for t in texts)


STORE_INDEX = "bench-multi2-stores"


def synthetic(levels, fp: int, text: str, other, rng):  # type: ignore[no-untyped-def]
    """An edit of a document made on its levels (see the module docstring): ``(fp, levels, text)``."""
    from simdup_es.levels import Key, Levels

    keep = rng.uniform(0.7, 1.0)
    keys = [k.key if rng.random() < keep else int(rng.integers(0, 2**63)) for k in levels.keys]
    keys += [k.key for k in other.keys[: int(rng.integers(1, 3))]]
    parts = []
    for f in levels.fingerprints:
        if f is not None and rng.random() < 0.5:
            for b in rng.choice(64, size=int(rng.integers(1, 5)), replace=False).tolist():
                f ^= 1 << b
        parts.append(f)
    parts += [f for f in other.fingerprints[:1] if f is not None]
    for b in rng.choice(64, size=int(rng.integers(0, 7)), replace=False).tolist():
        fp ^= 1 << b
    lines = text.split("\n")
    text = "\n".join(line for i, line in enumerate(lines) if i % 10 != int(rng.integers(0, 10)))
    lv = Levels(levels.version, levels.units, (), (), tuple(parts), tuple(Key(k, 0) for k in keys))
    return fp, lv, text


def percentile_ms(times: list[float]) -> str:
    return f"{1000 * np.percentile(times, 50):8.2f}{1000 * np.percentile(times, 95):8.2f}"


def stores_main(n_docs: int, n_queries: int) -> None:  # noqa: C901 - one linear script
    import shutil
    import tempfile

    from simdup_es.compare import CachedSegmenter, CompareParams, compare
    from simdup_es.fingerprint import Fingerprint
    from simdup_es.multilevel import MultiParams, StoredText, find_copies
    from simdup_es.search import near_duplicates
    from simdup_es.store.base import StoredDoc
    from simdup_es.store.elasticsearch import ElasticsearchStore
    from simdup_es.store.local import LocalStore
    from simdup_es.tokens import dictionary_words

    es = Elasticsearch(os.environ.get("SIMDUP_TEST_ES_URL", "http://127.0.0.1:9200"), request_timeout=300)
    rows = [json.loads(line) for line in open(DATA / "zh-docs.jsonl", encoding="utf-8")]
    texts = [unify(r["text"]) for r in rows]
    t0 = time.perf_counter()
    fp, printer, fps, levels = _fingerprinted(texts)
    print(f"{len(rows)} corpus documents fingerprinted with levels in {time.perf_counter() - t0:.0f} s", flush=True)
    version = levels[0].version
    rng = np.random.default_rng(11)

    def batches(with_levels: bool, size: int = 2000):  # type: ignore[no-untyped-def]
        r = np.random.default_rng(12)  # the same documents every time
        batch = []
        for i in range(n_docs):
            if i < len(rows):
                f, lv, text = fps[i], levels[i], texts[i]
            else:
                src = int(r.integers(0, len(rows)))
                f, lv, text = synthetic(levels[src], fps[src], texts[src], levels[int(r.integers(0, len(rows)))], r)
            batch.append(StoredDoc(f"d{i}", f, version, text, None, levels=lv if with_levels else None))
            if len(batch) == size:
                yield batch
                batch = []
        if batch:
            yield batch

    tmp = Path(tempfile.mkdtemp(prefix="bench-multi2-"))
    names = {True: STORE_INDEX, False: STORE_INDEX + "-doc"}
    stores: dict[str, object] = {}
    size: dict[str, float] = {}
    try:
        for with_levels in (False, True):
            local = LocalStore(tmp / f"local-{with_levels}")
            local.setup()
            es.options(ignore_status=404).indices.delete(index=names[with_levels])
            remote = ElasticsearchStore(es, names[with_levels])
            remote.setup()
            es.indices.put_settings(index=names[with_levels], settings={"refresh_interval": -1, "number_of_replicas": 0})
            t = time.perf_counter()
            written = [0, 0]
            for batch in batches(with_levels):
                for j, store in enumerate((local, remote)):
                    report = store.put(batch)
                    assert not report.failed, report.failed[:3]
                    written[j] += report.written
            remote.refresh()
            es.indices.forcemerge(index=names[with_levels], max_num_segments=1)
            stats = es.indices.stats(index=names[with_levels], metric="store")
            label = "levels" if with_levels else "document"
            size[f"es {label}"] = stats["indices"][names[with_levels]]["primaries"]["store"]["size_in_bytes"] / n_docs
            local.close()
            local = LocalStore(tmp / f"local-{with_levels}")
            with local._sql() as conn:  # noqa: SLF001 - a benchmark may look inside
                conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            size[f"local {label}"] = sum(p.stat().st_size for p in (tmp / f"local-{with_levels}").iterdir()) / n_docs
            print(f"{label}: wrote {written} documents (local, elasticsearch) in {time.perf_counter() - t:.0f} s", flush=True)
            stores[f"local {label}"], stores[f"es {label}"] = local, remote

        # 2 kB queries: corpus documents cut to 2 kB of UTF-8, one line in five dropped.
        picks = rng.choice(len(rows), n_queries, replace=False)
        queries = []
        for q in picks.tolist():
            lines, got = [], 0
            for i, line in enumerate(texts[q].split("\n")):
                if got > 2048:
                    break
                if i % 5 != 4:
                    lines.append(line)
                    got += len(line.encode("utf-8")) + 1
            text = "\n".join(lines)
            queries.append(text)
        qtexts = queries
        qfps = [r.fingerprint.value if r.fingerprint else 0 for r in fp.map(texts_as_docs(qtexts), workers=1)]
        t = time.perf_counter()
        qlevels = [printer.levels(UnifiedText(x)) for x in qtexts]
        levels_ms = 1000 * (time.perf_counter() - t) / len(qtexts)
        params = MultiParams()
        segment = CachedSegmenter(dictionary_words)
        cparams = CompareParams()

        def cmp(a: str, b: str):  # type: ignore[no-untyped-def]
            return compare(a, b, cparams, segment=segment)

        t = time.perf_counter()
        stores["local levels"].part_candidates([1], [1], version)  # type: ignore[attr-defined]
        build_s = time.perf_counter() - t  # the first lookup reads the level tables into memory
        results: dict[str, list] = {}
        lines_out = []
        for name in ("local", "es"):
            store = stores[f"{name} levels"]
            doc_store = stores[f"{name} document"]
            lat: dict[str, list[float]] = {"document level (doc-only store)": [], "document level": [],
                                           "part_candidates": [], "find_copies": [],
                                           "all three (document + parts + copies)": []}
            results[name] = []
            for rnd in range(2):  # the first round warms caches; the second is measured
                for text, qfp, lv in zip(qtexts, qfps, qlevels):
                    t = time.perf_counter()
                    near_duplicates(doc_store, Fingerprint(qfp, version))  # type: ignore[arg-type]
                    t1 = time.perf_counter()
                    near = [(m.id, m.distance) for m in near_duplicates(store, Fingerprint(qfp, version))]  # type: ignore[arg-type]
                    t2 = time.perf_counter()
                    found = store.part_candidates(list(lv.fingerprints), [k.key for k in lv.keys], version,  # type: ignore[attr-defined]
                                                  limit=params.store_limit)
                    t3 = time.perf_counter()
                    texts_of = lambda ids: {d.id: StoredText(d.text) for d in store.get(ids) if d.text}  # type: ignore[attr-defined]  # noqa: E731
                    hits = find_copies(text, lv, near, found, texts_of, cmp, params=params)
                    t4 = time.perf_counter()
                    if rnd:
                        for key, v in zip(lat, (t1 - t, t2 - t1, t3 - t2, t4 - t3, t4 - t1)):
                            lat[key].append(v)
                        results[name].append((found, [(m.id, m.kind) for m in hits]))
            for key, times in lat.items():
                lines_out.append(f"{name:<7}{key:<40}{percentile_ms(times)}")
        same = sum(a == b for a, b in zip(results["local"], results["es"]))
        print(f"\n{n_docs} stored documents, {len(qtexts)} queries of ~2 kB; query levels computed in "
              f"{levels_ms:.1f} ms per query (not in the figures below); local level index read in {build_s:.1f} s")
        print(f"{'store':<7}{'per query':<40}{'p50 ms':>8}{'p95 ms':>8}")
        print("\n".join(lines_out))
        print(f"\nlocal and Elasticsearch: same part candidates and copies on {same}/{len(qtexts)} queries")
        print(f"{'bytes per document':<28}{'document level':>16}{'with levels':>14}{'growth':>10}")
        for name in ("local", "es"):
            a, b = size[f"{name} document"], size[f"{name} levels"]
            print(f"{name:<28}{a:>16.0f}{b:>14.0f}{b - a:>+10.0f}")
    finally:
        for store in stores.values():
            store.close()  # type: ignore[attr-defined]
        for index in names.values():
            es.options(ignore_status=404).indices.delete(index=index)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
