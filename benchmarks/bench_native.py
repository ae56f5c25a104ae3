"""The compiled core against the Python modules: microseconds per document of about 745 characters.

In one process, on --docs documents of the zh corpus ($SIMDUP_DATA/zh-docs.jsonl, text and title)
whose text is 745 ± 100 characters, in batches of 64, each implementation on a fingerprinter of its
own (made before the clock starts; its word cache fills in the first round, as in an index pass):

  1. the fingerprint with every level (``PartPrinter._items_many``; unify included), the Python
     modules and the compiled core, and their ratio; ``stored``: the same with what the Elasticsearch
     store writes of each document's levels (its ``simdup`` members in the 8x8 layout, the kept parts
     and keys as numbers: ``encode``), which is what each worker of ``simdup index`` runs;
     ``levels native, OpenCC``: the compiled core with OpenCC's C++ library converting the scripts
     in unification (as the core did before it converted them itself);
  2. the document fingerprint alone (``Fingerprinter.fingerprint_many``), both;
  3. ``unify_many`` (the scripts converted by OpenCC on the Python path, by the core on the native one;
     the rest of unification is Python either way) and jieba-rs's cut alone (rjieba, on the unified texts);
  4. the compiled core alone on the unified texts (``simdup_es.native.levels``);
  5. the sentence scan a stored text gets at its first comparison with a query (``sentences.scan``: its
     sentences, units and words), both;
  6. the unit codes a stored text's common text is told by, from that scan
     (``commontext.codes_of_scan``), both.

Rounds interleave the measurements, so load from other processes hits them alike; each figure is
the best round, of wall time and of this process's CPU time. Both implementations' results are
compared first (they must be identical).

    python benchmarks/bench_native.py [--docs 2000] [--rounds 7]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any
from unittest import mock

import simdup_es.tokens as tokens_module
from simdup_es import native
from simdup_es.commontext import codes_of_scan
from simdup_es.fingerprint import Doc, Fingerprinter
from simdup_es.keys import EIGHT_BY_EIGHT
from simdup_es.parts import PartPrinter
from simdup_es.sentences import DEFAULT_MIN_UNITS, Scan
import simdup_es.text as text_module
from simdup_es.text import unify_many

ROOT = Path(__file__).resolve().parent.parent
BATCH = 64
ENCODE = (EIGHT_BY_EIGHT,)  # what simdup index's workers make for an Elasticsearch index of the default layout
SIZE, SPREAD = 745, 100


def load(docs: int) -> list[Doc]:
    corpus = Path(os.environ.get("SIMDUP_DATA", ROOT / "data")) / "zh-docs.jsonl"
    if not corpus.exists():
        raise SystemExit(f"{corpus} is missing: run scripts/fetch-corpus or set SIMDUP_DATA")
    with open(corpus, encoding="utf-8") as f:
        records = [r for r in map(json.loads, f) if abs(len(r["text"]) - SIZE) <= SPREAD]
    return [Doc(r["text"], r.get("title")) for r in records[:docs]]


@contextmanager
def implementation(compiled: Any | None, opencc: bool = False) -> Iterator[None]:
    """The compiled core (``compiled``) or the Python modules (``None``; jieba-rs through rjieba) compute; with
    ``opencc``, OpenCC's C++ library converts the scripts whichever does."""
    jieba = tokens_module._rjieba_class()() if compiled is None else compiled.Jieba()
    with (mock.patch.multiple(native, _MODULE=compiled, _WHY=""), mock.patch.object(tokens_module, "_rust", jieba),
          mock.patch.object(text_module, "native_script", lambda shortcuts: None) if opencc else nullcontext()):
        yield


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--docs", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=7)
    args = ap.parse_args()
    try:
        import simdup_es._native as compiled
    except ImportError as exc:
        raise SystemExit(f"the compiled core is not installed ({exc}): install the package with cargo on PATH") from None
    if compiled.REVISION != native.REVISION:
        raise SystemExit("the compiled core is stale: reinstall the package (pip install -e .)")
    docs = load(args.docs)
    batches = [docs[i : i + BATCH] for i in range(0, len(docs), BATCH)]
    printers: dict[str, PartPrinter] = {}
    for name, module in (("python", None), ("native", compiled)):
        with implementation(module):
            printers[name] = PartPrinter(Fingerprinter())
            printers[name].fingerprinter.fingerprint("預熱")  # dictionaries and tables loaded before the clock starts
    check(printers, batches, compiled)

    unified = [unify_many([d.text for d in batch]) for batch in batches]
    rjieba = tokens_module._rjieba_class()()
    pipeline = printers["native"].fingerprinter.native_pipeline()
    texts = [[d.text for d in b] + [d.title for d in b if d.title] for b in batches]
    with implementation(compiled):
        scans = [native.scan((t, DEFAULT_MIN_UNITS)) for u in unified for t in u]
    work: dict[str, tuple[Any | None, bool, Callable[[], object]]] = {
        "levels python": (None, False, lambda: [printers["python"]._items_many(b) for b in batches]),
        "levels native": (compiled, False, lambda: [printers["native"]._items_many(b) for b in batches]),
        "levels native, OpenCC": (compiled, True, lambda: [printers["native"]._items_many(b) for b in batches]),
        "stored python": (None, False, lambda: [printers["python"]._items_many(b, texts=False, encode=ENCODE)
                                                for b in batches]),
        "stored native": (compiled, False, lambda: [printers["native"]._items_many(b, texts=False, encode=ENCODE)
                                                    for b in batches]),
        "document python": (None, False, lambda: [printers["python"].fingerprinter.fingerprint_many(b) for b in batches]),
        "document native": (compiled, False, lambda: [printers["native"].fingerprinter.fingerprint_many(b)
                                                      for b in batches]),
        "unify_many python": (None, False, lambda: [unify_many(t) for t in texts]),
        "unify_many native": (compiled, False, lambda: [unify_many(t) for t in texts]),
        "scan python": (None, False, lambda: [native.scan((t, DEFAULT_MIN_UNITS)) for u in unified for t in u]),
        "scan native": (compiled, False, lambda: [native.scan((t, DEFAULT_MIN_UNITS)) for u in unified for t in u]),
        "codes python": (None, False, lambda: [codes_of_scan(*s[1:4]) for s in scans]),
        "codes native": (compiled, False, lambda: [codes_of_scan(*s[1:4]) for s in scans]),
        "rjieba cut": (None, False, lambda: [rjieba.cut(t, True) for u in unified for t in u]),
        "native core": (compiled, False, lambda: [native.levels(pipeline, u, [""] * len(u), printers["native"].params,
                                                                with_document=True, part_max_bytes=None) for u in unified]),
    }
    wall = {name: float("inf") for name in work}
    cpu = dict(wall)
    for _ in range(args.rounds):
        for name, (module, opencc, fn) in work.items():
            with implementation(module, opencc):
                w, c = time.perf_counter(), time.process_time()
                fn()
                wall[name] = min(wall[name], time.perf_counter() - w)
                cpu[name] = min(cpu[name], time.process_time() - c)
    report(docs, args.rounds, {k: v / len(docs) * 1e6 for k, v in wall.items()}, {k: v / len(docs) * 1e6 for k, v in cpu.items()})


def check(printers: dict[str, PartPrinter], batches: list[list[Doc]], compiled: Any) -> None:
    """Both implementations give the same unified texts, fingerprints, levels, stored keys and scans on the documents
    measured."""
    found = {}
    for name, module in (("python", None), ("native", compiled)):
        with implementation(module):
            found[name] = [(r.fingerprint, lv, stored) for b in batches
                           for r, lv, _, stored in printers[name]._items_many(b, encode=ENCODE)]
            found[name + " unified"] = [unify_many([d.text for d in b] + [d.title for d in b if d.title]) for b in batches]
            scans = [native.scan((t, DEFAULT_MIN_UNITS)) for u in found[name + " unified"] for t in u]
            found[name + " scans"] = [_plain(s) for s in scans]
            found[name + " codes"] = [codes_of_scan(*s[1:4]).tolist() for s in scans]
    if any(found[name] != found[name.replace("python", "native")]
           for name in ("python", "python unified", "python scans", "python codes")):
        raise SystemExit("the compiled core and the Python modules disagree on these documents")


def _plain(scanned: Scan) -> tuple[object, ...]:
    sentences, unit_points, word_at, words, lengths = scanned
    return tuple(sentences), unit_points.tolist(), word_at.tolist(), words, lengths.tolist()


def report(docs: list[Doc], rounds: int, wall: dict[str, float], cpu: dict[str, float]) -> None:
    size = statistics.mean(len(d.text) for d in docs)
    print(f"{len(docs)} zh documents of {SIZE} ± {SPREAD} characters (mean {size:.0f}), batches of {BATCH}, "
          f"best of {rounds} rounds; load average {os.getloadavg()[0]:.1f}; identical results")
    print(f"{'us per document':34} {'wall':>8} {'cpu':>8}")
    for name in wall:
        print(f"  {name:32} {wall[name]:8.0f} {cpu[name]:8.0f}")
    for what in ("levels", "stored", "document", "scan", "codes"):
        print(f"  {what}: native / python  wall {wall[what + ' native'] / wall[what + ' python']:.2f}x, "
              f"cpu {cpu[what + ' native'] / cpu[what + ' python']:.2f}x")
    print(f"  levels native / levels native with OpenCC converting: wall {wall['levels native'] / wall['levels native, OpenCC']:.2f}x, "
          f"cpu {cpu['levels native'] / cpu['levels native, OpenCC']:.2f}x; unify_many native / python: wall "
          f"{wall['unify_many native'] / wall['unify_many python']:.2f}x, cpu {cpu['unify_many native'] / cpu['unify_many python']:.2f}x")
    print(f"  fingerprint with every level, native: {wall['levels native']:.0f} us wall (goal <= 150); of it unify_many "
          f"{wall['unify_many native']:.0f} ({wall['unify_many python']:.0f} with OpenCC converting), the core "
          f"{wall['native core']:.0f} (jieba-rs's cut alone {wall['rjieba cut']:.0f})")


if __name__ == "__main__":
    main()
