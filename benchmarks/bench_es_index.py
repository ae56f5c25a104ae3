"""Indexing wall time: ``simdup index`` (every level) against plain ``helpers.bulk`` of the same documents.

The goal: ``simdup index`` into Elasticsearch <= 3x the wall time of plain
``helpers.bulk`` of the same documents, the embedded store no slower than that.
For each ``--sizes`` N (the first N documents of $SIMDUP_DATA/zh-docs.jsonl, the
corpus repeated with distinct ids past its end) and each round it times

reference
  plain        ``helpers.bulk`` (chunks of 500) of id, title and text into an index
               mapped with just ``title``/``text``, plus a refresh;
the real path (document fingerprint, part quads and fingerprints, winnowed keys ``simdup.sk``)
  index        :func:`simdup_es.indexer.index_items` into an :class:`ElasticsearchStore`
               (the library call of ``simdup index``; the fingerprinter is loaded
               before the clock starts), plus a refresh;
  index-cli    ``simdup index FILE --es-url ... --workers W`` in a subprocess, wall
               time including the process start;
  index-keys   ``index`` with ``levels="keys"`` (``simdup index --levels keys``: the
               sentence keys without the parts);
  index-doc    ``index`` with ``levels="document"`` (``--levels document``: the
               document fingerprint alone), and index-doc-cli its CLI run;
  store        ``index_items`` into a new :class:`LocalStore` (the embedded store);
  store-cli    ``simdup index FILE --store DIR --workers W``;
breakdown
  fingerprint  ``PartPrinter.map_stored`` alone (every level and what the store writes of
               them, W workers, no store; ``map_items`` for a package without it);
  put          ``ElasticsearchStore.put`` of the precomputed documents and levels in
               batches of 500, plus a refresh (the node's and the client's share);
  put-keys     the same without the parts (sentence keys only): the cost of the nested parts;
  put-doc      the same, document level only (``levels=None``): the cost of all levels;
  put-store    ``LocalStore.put`` of the precomputed documents and levels.

The variants run in fresh subprocesses (the library call, the breakdown) or are the
CLI, so each starts alike; they rotate their order every round, and ``plain`` runs
right before each of these steps: each ratio pairs a variant with that run (the
machine is shared; its load drifts). Printed: median seconds, median ratio to
``plain``, and CPU per 1,000 documents in the node (from /proc, or ``_nodes/stats``;
requests of other clients of the node count too) and in the client (its processes
and workers; ``parent`` the feeding process alone, not for the CLI runs), which
depends less on the load than wall time does, and the bytes per document each leaves
(Elasticsearch: the index's primary store force-merged to one segment, after the timed run;
the embedded store: its folder). Before the first round, plain bulk and the
library call run once untimed (``--no-warmup`` to skip): the node's first bulk requests after
it starts take several times the CPU of later ones.
``--ref DIR`` also times the package in DIR (e.g. the main branch) in the same
rounds, so a change is seen before/after against the same reference;
``--implementations native python`` times each package on the compiled core and on the
Python modules (``SIMDUP_IMPLEMENTATION``), in the same rounds.

    SIMDUP_DATA=/work/main/data SIMDUP_TEST_ES_URL=http://127.0.0.1:9299 \\
        .venv/bin/python benchmarks/bench_es_index.py [--sizes 4000 20000] [--rounds 3] [--ref /work/main] \\
        [--implementations native python]
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from statistics import median
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PREFIX = "simdup-bench-index"
BATCH = 500  # documents per bulk request of the reference, and per put of the breakdown (index's default batch)
CLI = "import sys; from simdup_es.cli import main; sys.argv[0] = 'simdup'; main()"


# --- measuring ---------------------------------------------------------------------------------


def es_cpu_ms(client: Any) -> float:
    """CPU milliseconds the Elasticsearch node(s) have used so far.

    From /proc when the node runs on this machine (exact); else from the nodes
    stats API, which refreshes its figure only once a second.
    """
    info = client.nodes.info(metric="process", filter_path="nodes.*.process.id")
    pids = [node["process"]["id"] for node in info["nodes"].values()]
    try:
        total = 0.0
        for pid in pids:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK") * 1000  # utime + stime
        return total
    except OSError:
        stats = client.nodes.stats(metric="process", filter_path="nodes.*.process.cpu.total_in_millis")
        return float(sum(node["process"]["cpu"]["total_in_millis"] for node in stats["nodes"].values()))


def own_cpu_ms() -> tuple[float, float]:
    """CPU milliseconds of this process and its threads, and of its finished children (fingerprint workers, the CLI)."""
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return (me.ru_utime + me.ru_stime) * 1000, (kids.ru_utime + kids.ru_stime) * 1000


def timed(client: Any, fn: Callable[[], int], *, cli: bool = False) -> dict[str, float]:
    """Wall seconds and CPU (node; client: this process and its children) of ``fn``, which returns the
    documents it wrote; ``parent`` is the CPU of this process alone (the feeding process of index), but
    for a ``cli`` run, whose feeding process is a child (then ``nan``)."""
    es0, (me0, kids0), t = es_cpu_ms(client), own_cpu_ms(), time.perf_counter()
    written = fn()
    seconds = time.perf_counter() - t
    me, kids = own_cpu_ms()
    return {"seconds": seconds, "written": written, "node_ms": es_cpu_ms(client) - es0,
            "client_ms": me - me0 + kids - kids0, "parent_ms": float("nan") if cli else me - me0}


def index_bytes(client: Any, index: str, docs: int) -> float:
    """Bytes per document of ``index``'s primaries, force-merged to one segment (as after a bulk load)."""
    client.indices.forcemerge(index=index, max_num_segments=1)
    stats = client.indices.stats(index=index, metric="store")
    return stats["indices"][index]["primaries"]["store"]["size_in_bytes"] / docs


def folder_bytes(folder: Path, docs: int) -> float:
    """Bytes per document of the files in ``folder`` (an embedded store)."""
    return sum(f.stat().st_size for f in folder.rglob("*") if f.is_file()) / docs


def fresh_index(client: Any, index: str, mappings: dict[str, Any] | None = None) -> None:
    client.options(ignore_status=404).indices.delete(index=index)
    if mappings is not None:
        client.indices.create(index=index, mappings=mappings, settings={"number_of_replicas": 0})


# --- the variants, each in its own process ----------------------------------------------------


def load(path: Path) -> list[dict[str, Any]]:
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def plain(client: Any, path: Path) -> dict[str, float]:
    from elasticsearch import helpers

    docs = load(path)
    index = f"{PREFIX}-plain"
    fresh_index(client, index, {"properties": {"title": {"type": "text"}, "text": {"type": "text"}}})

    def run() -> int:
        ok, _ = helpers.bulk(client, ({"_index": index, "_id": d["id"], "title": d.get("title"), "text": d["text"]}
                                      for d in docs), chunk_size=BATCH)
        client.indices.refresh(index=index)
        return ok

    out = timed(client, run)
    out["bytes"] = index_bytes(client, index, len(docs))
    fresh_index(client, index)
    return out


def library(client: Any, path: Path, workers: int, skip: Sequence[str] = ()) -> dict[str, dict[str, float]]:
    """``index`` and ``store``: the library call of ``simdup index``, into each store."""
    from simdup_es import default_fingerprinter
    from simdup_es.indexer import index_items
    from simdup_es.sources import Fields, read_paths
    from simdup_es.store.elasticsearch import ElasticsearchStore
    from simdup_es.store.local import LocalStore

    fingerprinter = default_fingerprinter()
    fingerprinter.fingerprint("預熱")  # tables loaded before the clock starts, as in a running CLI
    out = {}
    # index-keys, index-doc: `simdup index --levels keys|document` (a package without the option has no such variants)
    names = ("index", "store") + (("index-keys", "index-doc") if "levels" in inspect.signature(index_items).parameters
                                  else ())
    for name in (n for n in names if n not in skip):
        folder = Path(tempfile.mkdtemp(prefix="simdup-bench-"))
        index = f"{PREFIX}-lib"
        fresh_index(client, index)
        store = LocalStore(folder) if name == "store" else ElasticsearchStore(client, index)
        store.setup()
        options = {"index-keys": {"levels": "keys"}, "index-doc": {"levels": "document"}}.get(name, {})

        def run() -> int:
            rejects: list[Any] = []
            summary = index_items(read_paths([path], Fields()), store, fingerprinter, workers=workers,
                                  on_reject=rejects.append, **options)
            store.refresh()
            assert not rejects, rejects[:3]
            return summary.indexed

        out[name] = timed(client, run)
        out[name]["bytes"] = (folder_bytes(folder, out[name]["written"]) if name == "store"
                              else index_bytes(client, index, out[name]["written"]))
        fresh_index(client, index)
        shutil.rmtree(folder)
    return out


def breakdown(client: Any, path: Path, workers: int, skip: Sequence[str] = ()) -> dict[str, dict[str, float]]:
    """``fingerprint`` alone, then ``put``, ``put-keys``, ``put-doc`` and ``put-store`` of what it computed (with
    what the workers made of its keys for the Elasticsearch store where the package makes it)."""
    from dataclasses import replace

    from simdup_es import default_fingerprinter
    from simdup_es.fingerprint import Doc
    from simdup_es.parts import PartPrinter
    from simdup_es.store.base import StoredDoc
    from simdup_es.store.elasticsearch import ElasticsearchStore
    from simdup_es.store.local import LocalStore

    records = load(path)
    printer = PartPrinter(default_fingerprinter())
    printer.fingerprinter.fingerprint("預熱")
    done: list[Any] = []

    def to_doc(r: dict[str, Any]) -> Doc:
        return Doc(r["text"], r.get("title"))

    def fingerprint() -> int:
        if hasattr(printer, "map_stored"):
            done.extend(printer.map_stored(records, to_doc, layout="8x8", workers=workers))
        else:
            done.extend((*found, None) for found in printer.map_items(records, to_doc, workers=workers))
        return len(done)

    out = {"fingerprint": timed(client, fingerprint)}
    # A package whose map_stored gives the unified text too keeps it with the document (as ``simdup index`` does).
    docs = [StoredDoc(r["id"], res.unwrap().value, res.unwrap().version, r["text"], r.get("title"), levels=levels,
                      **({"stored": stored} if stored is not None else {}), **({"unified": u[0]} if u else {}))
            for r, res, levels, stored, *u in done]
    variants = {
        "put": docs,
        "put-keys": [replace(d, levels=replace(d.levels, parts=(), fingerprints=())) for d in docs],
        "put-doc": [replace(d, levels=None) for d in docs],
        "put-store": docs,
    }
    for name, batch in ((n, b) for n, b in variants.items() if n not in skip):
        folder = Path(tempfile.mkdtemp(prefix="simdup-bench-"))
        index = f"{PREFIX}-put"
        fresh_index(client, index)
        store = LocalStore(folder) if name == "put-store" else ElasticsearchStore(client, index)
        store.setup()

        def run() -> int:
            written = sum(store.put(batch[i : i + BATCH]).written for i in range(0, len(batch), BATCH))
            store.refresh()
            return written

        out[name] = timed(client, run)
        fresh_index(client, index)
        shutil.rmtree(folder)
    return out


def cli(client: Any, path: Path, workers: int, tree: tuple[str, dict[str, str]], url: str, embedded: bool,
        *extra: str) -> dict[str, float]:
    """``simdup index`` of the file in a subprocess (the package of ``tree``: its folder, and its environment),
    process start included."""
    folder = Path(tempfile.mkdtemp(prefix="simdup-bench-"))
    index = f"{PREFIX}-cli"
    fresh_index(client, index)
    where = ["--store", str(folder / "store")] if embedded else ["--es-url", url, "--index", index]
    command = [sys.executable, "-c", CLI, "index", str(path), *where, "--workers", str(workers),
               "--rejects", str(folder / "rejects.jsonl"), *extra]
    env = os.environ | tree[1] | {"PYTHONPATH": tree[0], "SIMDUP_ES_URL": ""}

    def run() -> int:
        done = subprocess.run(command, env=env, cwd=folder, capture_output=True, text=True)
        if done.returncode:
            raise SystemExit(f"{' '.join(command)} failed:\n{done.stderr}")
        return int(done.stderr.rsplit("indexed ", 1)[1].split()[0].rstrip(","))

    out = timed(client, run, cli=True)
    out["bytes"] = folder_bytes(folder / "store", out["written"]) if embedded else index_bytes(client, index, out["written"])
    fresh_index(client, index)
    shutil.rmtree(folder)
    return out


def one(kind: str, url: str, path: Path, workers: int, skip: Sequence[str]) -> None:
    """Run one subprocess's variants (this package on ``sys.path``) and print their figures as JSON."""
    from elasticsearch import Elasticsearch

    client = Elasticsearch(url, request_timeout=300)
    print(json.dumps((library if kind == "library" else breakdown)(client, path, workers, skip)))


# --- the rounds -----------------------------------------------------------------------------------


def corpus(n: int, folder: Path) -> Path:
    """The first ``n`` documents of zh-docs.jsonl as JSON Lines (id, title, text), repeated with new ids past its end."""
    source = Path(os.environ.get("SIMDUP_DATA", ROOT / "data")) / "zh-docs.jsonl"
    if not source.exists():
        raise SystemExit(f"{source} is missing: run scripts/fetch-corpus, or set SIMDUP_DATA")
    records = load(source)
    path = folder / f"docs-{n}.jsonl"
    with open(path, "w", encoding="utf-8") as f:
        for i in range(n):
            r = records[i % len(records)]
            copy = i // len(records)
            doc = {"id": r["id"] if not copy else f"{r['id']}~{copy}", "title": r.get("title"), "text": r["text"]}
            f.write(json.dumps(doc, ensure_ascii=False) + "\n")
    return path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--url", default=os.environ.get("SIMDUP_TEST_ES_URL", "http://127.0.0.1:9200"))
    ap.add_argument("--sizes", type=int, nargs="+", default=[4000, 20000])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="fingerprinting processes")
    ap.add_argument("--ref", help="source folder of a reference simdup_es (e.g. the main branch), timed beside this one")
    ap.add_argument("--implementations", nargs="+", choices=["native", "python"],
                    help="time each package on these implementations (SIMDUP_IMPLEMENTATION; default: as the environment says)")
    ap.add_argument("--skip", nargs="*", default=[], help="variants not to run (e.g. put-doc store-cli)")
    ap.add_argument("--no-warmup", action="store_true",
                    help="time from the first run (by default plain bulk and the library call run once, untimed, on up "
                         "to 4,000 documents first: a node that just started takes 2-5x the CPU while its JIT warms up)")
    ap.add_argument("--one", choices=["library", "breakdown"], help=argparse.SUPPRESS)
    ap.add_argument("--file", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        one(args.one, args.url, args.file, args.workers, args.skip)
        return

    from elasticsearch import Elasticsearch

    client = Elasticsearch(args.url, request_timeout=300)
    folders = {"this": str(ROOT)} | ({"ref": str(Path(args.ref).resolve())} if args.ref else {})
    # label -> (folder, environment): each package on each implementation asked for
    trees = {label if not args.implementations else f"{label}/{impl}":
             (folder, {} if not args.implementations else {"SIMDUP_IMPLEMENTATION": impl})
             for label, folder in folders.items() for impl in (args.implementations or [""])}
    print(f"{os.cpu_count()} cores, {args.workers} workers; load average at start {os.getloadavg()}")
    work = Path(tempfile.mkdtemp(prefix="simdup-bench-"))

    def sub(kind: str, tree: tuple[str, dict[str, str]], path: Path) -> Callable[[], dict[str, dict[str, float]]]:
        """``kind``'s variants on ``path`` in a subprocess with the package of ``tree``."""
        def run() -> dict[str, dict[str, float]]:
            done = subprocess.run(
                [sys.executable, __file__, "--one", kind, "--file", str(path), "--url", args.url,
                 "--workers", str(args.workers), "--skip", *args.skip],
                env=os.environ | tree[1] | {"PYTHONPATH": tree[0]}, cwd=tree[0], capture_output=True, text=True)
            if done.returncode:
                raise SystemExit(f"{kind} in {tree} failed:\n{done.stderr}")
            return json.loads(done.stdout.splitlines()[-1])
        return run

    try:
        if not args.no_warmup:
            path = corpus(min(args.sizes[0], 4000), work)
            plain(client, path)
            for tree in trees.values():
                sub("library", tree, path)()
            print("warmed up: plain bulk and the library call once each, untimed")
        for n in args.sizes:
            path = corpus(n, work)
            runs: dict[str, list[dict[str, float]]] = {}

            steps: list[tuple[str, Callable[[], dict[str, dict[str, float]]]]] = []
            for label, tree in trees.items():
                steps += [
                    (f"{label}:library", lambda k=sub("library", tree, path), p=f"{label}:": {p + a: b for a, b in k().items()}),
                    (f"{label}:index-cli", lambda t=tree, p=f"{label}:": {
                        p + "index-cli": cli(client, path, args.workers, t, args.url, embedded=False)}),
                    (f"{label}:store-cli", lambda t=tree, p=f"{label}:": {
                        p + "store-cli": cli(client, path, args.workers, t, args.url, embedded=True)}),
                    (f"{label}:breakdown", lambda k=sub("breakdown", tree, path), p=f"{label}:": {
                        p + a: b for a, b in k().items()}),
                ]
                if "--levels" in (Path(tree[0]) / "simdup_es" / "cli" / "store_cmds.py").read_text(encoding="utf-8"):
                    steps.append((f"{label}:index-doc-cli", lambda t=tree, p=f"{label}:": {
                        p + "index-doc-cli": cli(client, path, args.workers, t, args.url, False, "--levels", "document")}))
            steps = [(name, step) for name, step in steps if name.split(":")[-1] not in args.skip]
            ratios: dict[str, list[float]] = {}
            for rnd in range(args.rounds):
                shift = rnd % len(steps)
                for _, step in steps[shift:] + steps[:shift]:
                    # The reference right before each step: the load of a shared machine drifts within a round.
                    reference = plain(client, path)
                    for name, run in {"plain": reference, **step()}.items():
                        if name.split(":")[-1] in args.skip:
                            continue
                        runs.setdefault(name, []).append(run)
                        ratios.setdefault(name, []).append(run["seconds"] / reference["seconds"])
                        assert run["written"] == n, (name, run["written"], n)
                        print(f"  {n} docs, round {rnd + 1}: {name:22s} {run['seconds']:7.2f} s, {ratios[name][-1]:5.2f}x "
                              f"plain; CPU per 1k docs: node {run['node_ms'] / n * 1000:6.0f} ms, "
                              f"client {run['client_ms'] / n * 1000:6.0f} ms (parent {run['parent_ms'] / n * 1000:4.0f}); "
                              f"{run.get('bytes', float('nan')):6.0f} B/doc; load {os.getloadavg()[0]:.1f}", flush=True)
            print(f"\n{n} documents, {args.rounds} rounds, load average now {os.getloadavg()}; median seconds, median "
                  "ratio to the plain helpers.bulk run just before, median CPU ms per 1,000 documents")
            print(f"  {'':22s} {'seconds':>8s} {'x plain':>8s} | {'node':>6s} {'client':>7s} {'parent':>7s} | {'B/doc':>6s}")
            for name, rs in runs.items():
                cpu = {k: median(r.get(k, float("nan")) for r in rs) / n * 1000 for k in ("node_ms", "client_ms", "parent_ms")}
                size = median(r.get("bytes", float("nan")) for r in rs)
                print(f"  {name:22s} {median(r['seconds'] for r in rs):8.2f} {median(ratios[name]):7.2f}x | "
                      f"{cpu['node_ms']:6.0f} {cpu['client_ms']:7.0f} {cpu['parent_ms']:7.0f} | {size:6.0f}"
                      f"   (runs: {', '.join(f'{x:.2f}' for x in ratios[name])})")
            for label in trees:
                for name in ("index", "index-cli", "store", "store-cli", "index-keys", "index-doc", "index-doc-cli"):
                    if f"{label}:{name}" in runs:
                        ratio = median(ratios[f"{label}:{name}"])
                        print(f"  goal {label}:{name} <= 3x plain: {ratio:.2f}x -> {'met' if ratio <= 3 else 'NOT met'}")
            print(flush=True)
    finally:
        shutil.rmtree(work)
        client.close()


if __name__ == "__main__":
    main()
