"""Near-duplicate licence texts among ScanCode's licence rules: simdup beside MinHash LSH.

What it measures
----------------
ScanCode's licence rules (``*/rules/*.RULE`` members of the scancode-toolkit 32.3.0
wheel, read straight from the zip: a YAML front matter between ``---`` lines with
``license_expression:``, then the rule text) are natural near-duplicates: the same
licence or notice as many projects word it. Rules of 200-3,000 characters are kept
(false-positive rules, which have no ``license_expression``, are left out).

- Labelled pairs: two stored texts of the same ``license_expression`` whose character
  5-shingle Jaccard (lower-cased, white space collapsed) is at least 0.5; and each
  edited copy with its original.
- Edited copies: ``--copies`` (300) random rules, each with 2 random words replaced (by
  words of the rules' vocabulary) and one sentence deleted when it has 3 or more
  (``eval_copies.delete_sentence``); stored beside the original, with its expression.
- Queries: up to ``--queries`` (600) rules that have a labelled partner among the
  rules (seeded sample), plus the edited copies. Every query is also stored (its own
  copy is left out of its results); every kept rule is stored (the others are
  distractors).

Rows (recall = found labelled partners / labelled partners): ``natural variants``
(a rule asks, a rule is the partner), ``edited copy`` (a copy asks for its original),
``other pairs with copies`` (a rule asking for another rule's edited copy, a copy for
its original's other partners). Precision is over all hits of all queries: ``strict``
counts a hit right when it is a labelled partner of the query, ``oracle`` also when
at least 20 % of the smaller side's character 8-shingles are shared
(``eval_copies.shingles`` / ``shared_share`` / ``oracle_copy`` on unified text).
``ceiling`` is the recall a method returning at most ``limit`` (100) hits could reach:
a query with more labelled partners than that loses the rest whatever it does (by row,
in proportion to the query's partners in that row: a method that puts an edited copy's
original first beats it in that row). A second table keeps the queries with at most
``limit`` partners, where the cut is not what decides.

simdup: the texts are indexed into a fresh embedded store (a temporary folder) with
``simdup_es.indexer.index_items`` and each query goes through
``simdup_es.search.find_copies`` as ``eval_copies.run_simdup`` does (default
``MultiParams``, ``limit`` ``eval_copies.LIMIT``, the query's own id excluded); then the
same queries with nothing common (``MultiParams(common=10**9)``), ``MultiParams(max_misses=20)`` and
``MultiParams(store_limit=1000)``, on the same store, to see which rule costs recall.
The peer: MinHash LSH (datasketch, threshold 0.5, 128 permutations) over ``eval_copies.minhash_tokens``, which for English
text (the licences row of eval_copies) is the set of character 5-grams of the
lower-cased, space-collapsed text: the very measure the natural pairs are labelled by.
It returns every hit; ``its best 100`` is the same list cut at ``limit``, most similar
(estimated Jaccard) first, as a list of that length. Time per query: p50 wall clock,
one process (MinHash of the query and the LSH lookup).

Misses: up to ``--diagnose`` missed (query, partner) pairs of the default run, of queries
whose list is not full (and a sixth as many of full lists; seeded, at most 3 per query
while there are others) are followed through the pipeline for that query: was the
partner a store candidate (``store_limit`` 100, and without that cut), did
``rank_candidates`` keep it, was it judged before ``max_misses`` or ``limit`` ended the
judging, and if judged, what ``judge`` said of the comparison matrix (with and without
the common text the store counts; a copy judged can still be cut when more than ``limit``
were found), and whether ``find_copies`` with ``limit`` and ``store_limit`` of 1,000
finds it. Fifteen of them are printed one by one, and all of them counted by cause.

How to run
----------

    python benchmarks/probe_scancode.py [--seed 7] [--wheel PATH]
    python benchmarks/probe_scancode.py --limit 1000 --variants default --diagnose 0 --show 0

Without ``--wheel`` the wheel is looked for in ``--cache`` (data/cache/scancode) and
fetched there when missing (``python -m pip download --no-deps scancode-toolkit==32.3.0``).
Prints markdown tables to stdout, progress to stderr; ``--out DIR`` also writes every
figure, the followed misses and every query's hits as JSON. The default took 10 minutes
on a shared 2-core machine (labels 0.5, indexing 0.05, each simdup pass about 2, the
miss diagnosis 1); deterministic for a seed. ``--limit`` sets the hits per query of simdup and
of MinHash's best list (a simdup pass at 1,000 takes about 15 minutes: it judges a thousand
candidates a query); ``--variants`` the MultiParams changes run beside the defaults.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path
from types import SimpleNamespace

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import eval_copies  # noqa: E402  (oracle shingles, MinHash tokens, sentence deletion, LIMIT)

from simdup_es.text import unify  # noqa: E402

VERSION = "32.3.0"
RULE_GLOB = "*/rules/*.RULE"
LENGTHS = (200, 3000)
JACCARD = 0.5
JACCARD_N = 5
LIMIT = eval_copies.LIMIT
ROWS = ("natural variants", "edited copy", "other pairs with copies")
VARIANTS = {"default": {}, "nothing common": {"common": 10**9}, "max_misses=20": {"max_misses": 20},
            "store_limit=1000": {"store_limit": 1000}}
PER_QUERY = 3  # missed pairs followed per query at most (a query of a large family misses hundreds)
BIG = 1000  # limit and store_limit of the diagnostic search

_FRONT = re.compile(r"\A---\n(.*?)\n---\n?(.*)\Z", re.S)
_EXPRESSION = re.compile(r"^license_expression:\s*(.+?)\s*$", re.M)
_WORD = re.compile(r"\b[A-Za-z]{4,}\b")


# ------------------------------------------------------------------ data


def wheel_path(wheel: Path | None, cache: Path, log: Callable[[str], None]) -> Path:
    """The scancode-toolkit wheel: ``wheel`` if given, else the one in ``cache``, fetched there if missing."""
    if wheel is not None:
        return wheel
    found = sorted(cache.glob(f"scancode_toolkit-{VERSION}-*.whl"))
    if not found:
        cache.mkdir(parents=True, exist_ok=True)
        log(f"fetching scancode-toolkit=={VERSION} into {cache}")
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", f"scancode-toolkit=={VERSION}",
                        "-d", str(cache)], check=True, stdout=sys.stderr)
        found = sorted(cache.glob(f"scancode_toolkit-{VERSION}-*.whl"))
    if not found:
        raise SystemExit(f"no scancode_toolkit-{VERSION} wheel in {cache}")
    return found[0]


def read_rules(wheel: Path) -> tuple[dict[str, str], dict[str, str], Counter]:
    """Rule id (its file name without .RULE) -> text and -> license_expression, for rules of
    ``LENGTHS`` characters; and counts of what was left out, by reason."""
    texts: dict[str, str] = {}
    expressions: dict[str, str] = {}
    skipped: Counter = Counter()
    with zipfile.ZipFile(wheel) as z:
        for name in sorted(n for n in z.namelist() if fnmatch.fnmatch(n, RULE_GLOB)):
            raw = z.read(name).decode("utf-8", errors="replace").replace("\r\n", "\n")
            m = _FRONT.match(raw)
            expr = _EXPRESSION.search(m.group(1)) if m else None
            if expr is None:
                skipped["no license_expression (false-positive rule)"] += 1
                continue
            text = m.group(2).strip()
            if not LENGTHS[0] <= len(text) <= LENGTHS[1]:
                skipped["length"] += 1
                continue
            rid = name.rsplit("/", 1)[1][: -len(".RULE")]
            if rid in texts:
                skipped["duplicate name"] += 1
                continue
            texts[rid] = text
            expressions[rid] = expr.group(1).strip("'\"")
    return texts, expressions, skipped


def jaccard_shingles(text: str, n: int = JACCARD_N) -> frozenset[str]:
    """Character ``n``-shingles of the lower-cased text with white space collapsed."""
    s = " ".join(text.lower().split())
    return frozenset(s[i : i + n] for i in range(max(1, len(s) - n + 1)))


def jaccard_pairs(groups: Mapping[str, Sequence[str]], texts: Mapping[str, str],
                  threshold: float = JACCARD) -> set[tuple[str, str]]:
    """``(a, b)`` with ``a < b`` of one group whose shingle Jaccard is at least ``threshold``.

    Sets of sizes x <= y have a Jaccard of at most x / y, so a text is compared only with
    those at most ``1 / threshold`` times its size."""
    out: set[tuple[str, str]] = set()
    for members in groups.values():
        sets = sorted(((jaccard_shingles(texts[i]), i) for i in members), key=lambda x: (len(x[0]), x[1]))
        for k, (a, i) in enumerate(sets):
            for b, j in sets[k + 1 :]:
                if len(a) < threshold * len(b):
                    break
                inter = len(a & b)
                if inter >= threshold * (len(a) + len(b) - inter):
                    out.add((min(i, j), max(i, j)))
    return out


def edited_copy(text: str, vocab: Sequence[str], rng: random.Random) -> str:
    """``text`` with 2 random words (4 letters or more) replaced by other words of ``vocab``,
    then one sentence (not the first) deleted when it has 3 or more (eval_copies.delete_sentence)."""
    words = list(_WORD.finditer(text))
    out, at = [], 0
    for m in sorted(rng.sample(words, min(2, len(words))), key=lambda m: m.start()):
        new = m.group(0)
        while new.lower() == m.group(0).lower():
            new = rng.choice(vocab)
        out += [text[at : m.start()], new]
        at = m.end()
    out.append(text[at:])
    return eval_copies.delete_sentence("".join(out), rng)


@dataclass
class Query:
    id: str
    kind: str  # "rule" or "copy"
    partners: dict[str, str] = field(default_factory=dict)  # partner id -> row


@dataclass
class Probe:
    stored: dict[str, str]  # id -> text
    expression: dict[str, str]
    original: dict[str, str]  # edited copy id -> its rule
    queries: list[Query]
    pairs: set[tuple[str, str]]  # every labelled pair, (a, b) with a < b
    skipped: Counter


def build(wheel: Path, seed: int, n_queries: int, n_copies: int, log: Callable[[str], None]) -> Probe:
    texts, expression, skipped = read_rules(wheel)
    rng = random.Random(seed)
    rules = sorted(texts)
    vocab = sorted({w.lower() for t in texts.values() for w in _WORD.findall(t)})
    stored, original = dict(texts), {}
    for rid in sorted(rng.sample(rules, min(n_copies, len(rules)))):
        cid = f"{rid}~edited"
        stored[cid] = edited_copy(texts[rid], vocab, random.Random(f"{seed}:copy:{rid}"))
        expression[cid], original[cid] = expression[rid], rid
    groups: dict[str, list[str]] = defaultdict(list)
    for i in sorted(stored):
        groups[expression[i]].append(i)
    t = time.perf_counter()
    pairs = jaccard_pairs(groups, stored) | {(min(c, r), max(c, r)) for c, r in original.items()}
    log(f"{len(texts)} rules of {LENGTHS[0]}-{LENGTHS[1]} characters in {len(groups)} expressions "
        f"(left out: {dict(skipped)}), {len(original)} edited copies; {len(pairs)} labelled pairs "
        f"({time.perf_counter() - t:.0f} s)")
    partners: dict[str, set[str]] = defaultdict(set)
    for a, b in pairs:
        partners[a].add(b)
        partners[b].add(a)

    def row(q: str, p: str) -> str:
        if q in original:
            return "edited copy" if original[q] == p else "other pairs with copies"
        return "other pairs with copies" if p in original else "natural variants"

    with_rule_partner = [r for r in rules if any(p not in original for p in partners[r])]
    asking = sorted(rng.sample(with_rule_partner, min(n_queries, len(with_rule_partner)))) + sorted(original)
    queries = [Query(q, "copy" if q in original else "rule", {p: row(q, p) for p in sorted(partners[q])})
               for q in asking]
    return Probe(stored, expression, original, queries, pairs, skipped)


# ------------------------------------------------------------------ running


@cache
def shared() -> SimpleNamespace:
    """The fingerprinter, part printer and comparer, made once (the comparer's segmenter cache is shared)."""
    from simdup_es import default_fingerprinter
    from simdup_es.parts import PartPrinter
    from simdup_es.search import comparer

    fingerprinter = default_fingerprinter()
    return SimpleNamespace(fingerprinter=fingerprinter, printer=PartPrinter(fingerprinter), compare=comparer())


def index_store(store, stored: Mapping[str, str], workers: int, log: Callable[[str], None]) -> float:
    from simdup_es.indexer import index_items
    from simdup_es.sources import Record

    t0 = time.perf_counter()
    rejects: list = []
    summary = index_items((Record(text, "probe-scancode", i) for i, text in stored.items()), store,
                          shared().fingerprinter, on_reject=rejects.append, workers=workers)
    store.refresh()
    seconds = time.perf_counter() - t0
    log(f"simdup: indexed {summary.indexed} documents ({len(rejects)} rejected) in {seconds:.0f} s")
    for r in rejects[:5]:
        log(f"  rejected {r.id}: {r.reason}")
    return seconds


def run_minhash(stored: Mapping[str, str], queries: Sequence[Query], log: Callable[[str], None]) -> tuple[dict, dict]:
    """MinHash LSH over the stored texts: every query's hits, and the same hits cut at ``LIMIT``, best first."""
    from datasketch import MinHashLSH

    t0 = time.perf_counter()
    lsh = MinHashLSH(threshold=0.5, num_perm=128)
    sigs = {}  # kept to rank the hits by estimated Jaccard
    with lsh.insertion_session() as session:
        for doc_id, text in stored.items():
            sigs[doc_id] = eval_copies.minhash(text)
            session.insert(doc_id, sigs[doc_id])
    out: dict = {"hits": {}, "ms": [], "index_seconds": time.perf_counter() - t0}
    top: dict = {"hits": {}, "ms": out["ms"]}
    log(f"minhash: indexed {len(stored)} documents in {out['index_seconds']:.0f} s")
    for q in queries:
        t = time.perf_counter()
        m = eval_copies.minhash(stored[q.id])
        got = lsh.query(m)
        out["ms"].append(1000 * (time.perf_counter() - t))
        out["hits"][q.id] = sorted(i for i in got if i != q.id)
        # The same hits cut at LIMIT, most similar first (estimated Jaccard, then id), as a list a user is shown.
        estimate = {i: m.jaccard(sigs[i]) for i in out["hits"][q.id]} if len(out["hits"][q.id]) > LIMIT else {}
        top["hits"][q.id] = sorted(out["hits"][q.id], key=lambda i: (-estimate.get(i, 1.0), i))[:LIMIT]
    return out, top


# ------------------------------------------------------------------ scoring


class Oracle:
    """eval_copies's oracle: 8-shingles of the unified text, cached by id."""

    def __init__(self, stored: Mapping[str, str]) -> None:
        self.stored = stored
        self._cache: dict[str, set[str]] = {}

    def shingles(self, doc_id: str) -> set[str]:
        if doc_id not in self._cache:
            self._cache[doc_id] = eval_copies.shingles(unify(self.stored[doc_id]))
        return self._cache[doc_id]

    def share(self, a: str, b: str) -> float:
        return eval_copies.shared_share(self.shingles(a), self.shingles(b))

    def copy(self, a: str, b: str) -> bool:
        return eval_copies.oracle_copy(self.shingles(a), self.shingles(b))


def score(queries: Sequence[Query], run: dict, oracle: Oracle) -> dict:
    found: dict[str, list[int]] = {row: [0, 0] for row in (*ROWS, "all")}
    hits = strict = right = 0
    for q in queries:
        got = run["hits"][q.id]
        for p, row in q.partners.items():
            for r in (row, "all"):
                found[r][0] += p in got
                found[r][1] += 1
        for h in got:
            hits += 1
            if h in q.partners:
                strict += 1
                right += 1
            else:
                right += oracle.copy(q.id, h)
    ms = np.array(run["ms"])
    return {"recall": {r: (f / n if n else float("nan")) for r, (f, n) in found.items()},
            "hits": hits, "precision_strict": strict / hits if hits else float("nan"),
            "precision_oracle": right / hits if hits else float("nan"),
            "ms_p50": float(np.median(ms)), "ms_p95": float(np.percentile(ms, 95)),
            "full": sum(len(h) >= LIMIT for h in run["hits"].values())}


def hit_kinds(queries: Sequence[Query], hits: Mapping[str, Sequence[str]], expression: Mapping[str, str]) -> tuple[float, ...]:
    """Shares of all hits that are labelled partners, of the query's expression but no partner, of another expression."""
    c = Counter("labelled" if h in q.partners else "same" if expression[h] == expression[q.id] else "other"
                for q in queries for h in hits[q.id])
    n = sum(c.values()) or 1
    return c["labelled"] / n, c["same"] / n, c["other"] / n


def pair_counts(queries: Sequence[Query]) -> dict[str, dict[str, int]]:
    """By row: queries, labelled pairs, and the pairs a method returning ``LIMIT`` hits could find."""
    out = {row: {"queries": 0, "pairs": 0, "reachable": 0} for row in (*ROWS, "all")}
    for q in queries:
        cap = min(1.0, LIMIT / len(q.partners)) if q.partners else 1.0
        by_row = Counter(q.partners.values())
        for row, n in (*by_row.items(), ("all", len(q.partners))):
            out[row]["queries"] += 1
            out[row]["pairs"] += n
            out[row]["reachable"] += n * cap  # the share of its partners a limited list can hold
    return out


# ------------------------------------------------------------------ misses


def diagnose(store, probe: Probe, q: Query, missed: Sequence[str], hits: Sequence[str], oracle: Oracle,
             minhash_hits: Sequence[str]) -> list[dict]:
    """Follow the ``missed`` partners of query ``q`` through the default pipeline (see the module docstring)."""
    from simdup_es import simhash as sh
    from simdup_es.multilevel import CommonText, MultiParams, StoredText, copied_shares, judge, rank_candidates
    from simdup_es.search import counted_keys
    from simdup_es.multilevel import find_copies as judge_copies
    from simdup_es.search import find_copies, rerank

    params = MultiParams()
    text = probe.stored[q.id]
    unified = unify(text)
    fp = shared().fingerprinter.fingerprint(unified)
    levels = shared().printer.levels(unified)
    keys = [k.key for k in levels.keys]
    (ids, fps), found = store.copy_candidates(fp.value, levels.fingerprints, keys, levels.version, k=params.k, exclude_id=q.id,
                                              limit=params.store_limit)
    near = [(m.id, m.distance) for m in rerank(fp.value, ids, fps, params.k)]
    found_all = store.part_candidates(levels.fingerprints, keys, levels.version, exclude_id=q.id, limit=100_000)
    ranked = [c.id for c in rank_candidates(levels, found, params)]
    order_all = {c.id: n for n, c in enumerate(found_all)}
    common = CommonText.of(store.key_frequencies(counted_keys(levels.key_values())), params)
    query_side = common.rarity(unified)
    judged: list[str] = []

    class Recording(dict):
        def get(self, key, default=None):  # find_copies reads each text with get() as it judges it
            judged.append(key)
            return super().get(key, default)

    def texts(want: Sequence[str]) -> Mapping[str, StoredText]:
        docs = {d.id: d for d in store.get(want)}
        return Recording({i: StoredText(unify(d.text), d.fingerprint if d.version == fp.version else None)
                          for i, d in docs.items() if d.text})

    replay = judge_copies(unified, levels, near, found, texts, shared().compare, common=common, query_fingerprint=fp.value,
                          params=params, limit=LIMIT)
    replay_ok = sorted(m.id for m in replay[:LIMIT]) == sorted(hits)  # find_copies cuts at limit after judging
    big = {m.id for m in find_copies(store, text, printer=shared().printer, compare=shared().compare,
                                     params=replace(params, store_limit=BIG), limit=BIG, exclude_id=q.id)}
    out = []
    for p in missed:
        ptext = probe.stored[p]
        punified = unify(ptext)
        distance = sh.hamming(fp.value, shared().fingerprinter.fingerprint(punified).value)
        comparison = shared().compare(unified, punified)
        sides = (query_side, common.rarity(punified))
        with_bp = judge(p, comparison, distance, params, sides)
        without_bp = judge(p, comparison, distance, params, None)
        cq, cm, common_q, *_ = copied_shares(comparison, params, sides)
        cq0, cm0, *_ = copied_shares(comparison, params, None)
        # The first step of the pipeline the partner did not pass (a near-duplicate is always judged).
        if p in judged:
            stage = ("judged a copy, cut at limit" if with_bp is not None
                     else "judged: rejected, common text" if without_bp is not None
                     else "judged: rejected by the matrix")
        elif p not in order_all:
            stage = "no shared part or key"
        elif p not in {c.id for c in found}:
            stage = "cut by store_limit"
        elif p not in ranked:
            stage = "evidence < min_coverage"
        elif len(hits) >= LIMIT:
            stage = "not judged: list full at limit"
        else:
            stage = "not judged: max_misses stop"
        mine = found_all[order_all[p]] if p in order_all else None
        out.append({
            "query": q.id, "partner": p, "row": q.partners[p], "expression": probe.expression[q.id],
            "len_query": len(text), "len_partner": len(ptext), "share8": oracle.share(q.id, p),
            "jaccard5": _jaccard(text, ptext), "stage": stage, "hits": len(hits), "replay_ok": replay_ok,
            "candidates": len(found), "candidates_all": len(found_all), "store_rank": order_all.get(p),
            "rank": ranked.index(p) if p in ranked else None, "near": p in dict(near),
            "matched": len(mine.parts) + len(mine.keys) if mine else 0,
            "matched_at_cut": len(found[-1].parts) + len(found[-1].keys) if found else 0,
            "matched_top": len(found[0].parts) + len(found[0].keys) if found else 0,
            "query_parts_keys": (sum(f is not None for f in levels.fingerprints), len(keys)), "judged": len(judged),
            "in_big_search": p in big, "in_minhash": p in minhash_hits, "distance": distance,
            "units": (comparison.units_a, comparison.units_b),
            "common_units": int(query_side.common.sum()),
            "copied": (round(cq, 3), round(cm, 3), round(common_q, 3)), "copied_no_bp": (round(cq0, 3), round(cm0, 3)),
            "similarity": (round(comparison.similarity_a, 3), round(comparison.similarity_b, 3)),
            "verdict": with_bp.kind if with_bp else None, "verdict_no_bp": without_bp.kind if without_bp else None,
        })
    return out


def spread(missed: Sequence[tuple[Query, str]], k: int, rng: random.Random) -> list[tuple[Query, str]]:
    """``k`` missed pairs drawn at random, at most ``PER_QUERY`` of one query while others are left."""
    pool = list(missed)
    rng.shuffle(pool)
    taken: Counter = Counter()
    first, rest = [], []
    for q, p in pool:
        (first if taken[q.id] < PER_QUERY else rest).append((q, p))
        taken[q.id] += 1
    return (first + rest)[:k]


def _jaccard(a: str, b: str) -> float:
    x, y = jaccard_shingles(a), jaccard_shingles(b)
    return len(x & y) / len(x | y) if x | y else 0.0


# ------------------------------------------------------------------ main


def main() -> None:
    global LIMIT
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--wheel", type=Path, default=None, help="the scancode-toolkit wheel (else looked for in --cache)")
    ap.add_argument("--cache", type=Path, default=ROOT / "data" / "cache" / "scancode",
                    help="where the wheel is kept, fetched with pip when missing")
    ap.add_argument("--queries", type=int, default=600, help="rules that ask (with a labelled partner)")
    ap.add_argument("--copies", type=int, default=300, help="edited copies, each one asks for its original")
    ap.add_argument("--diagnose", type=int, default=120, help="missed pairs of the default run followed through the pipeline")
    ap.add_argument("--show", type=int, default=15, help="missed pairs printed one by one")
    ap.add_argument("--workers", type=int, default=2, help="indexing processes")
    ap.add_argument("--out", type=Path, default=None, help="write probe.json (figures) and misses.json here")
    ap.add_argument("--limit", type=int, default=LIMIT, help="hits per query, of simdup and of MinHash's best list")
    ap.add_argument("--variants", type=lambda s: ["default", *(v for v in s.split(",") if v and v != "default")],
                    default=list(VARIANTS), help=f"MultiParams changes run beside the defaults (of {', '.join(VARIANTS)})")
    args = ap.parse_args()
    LIMIT = args.limit
    started = time.perf_counter()

    def log(msg: str) -> None:
        print(f"[{time.perf_counter() - started:6.0f} s] {msg}", file=sys.stderr, flush=True)

    from simdup_es.multilevel import MultiParams
    from simdup_es.store import open_store

    probe = build(wheel_path(args.wheel, args.cache, log), args.seed, args.queries, args.copies, log)
    queries = probe.queries
    log(f"{len(probe.stored)} documents to store, {len(queries)} queries")
    oracle = Oracle(probe.stored)
    runs: dict[str, dict] = {}
    tmp = Path(tempfile.mkdtemp(prefix="simdup-probe-scancode-"))
    try:
        with open_store(path=tmp / "store", create=True) as store:
            index_seconds = index_store(store, probe.stored, args.workers, log)
            for name in args.variants:
                runs[name] = eval_copies.query_all(store, [(q.id, probe.stored[q.id], q.id, LIMIT) for q in queries],
                                                   shared().printer, shared().compare, MultiParams(**VARIANTS[name]), log,
                                                   f"simdup {name}", every=300)
            runs["minhash"], runs["minhash top"] = run_minhash(probe.stored, queries, log)
            scores = {name: score(queries, run, oracle) for name, run in runs.items()}
            hits = runs["default"]["hits"]
            missed = [(q, p) for q in queries for p in q.partners if p not in hits[q.id]]
            # Misses of queries whose list is not full are the pipeline's own; those of full lists are
            # mostly the limit's, a few of them are followed too.
            open_ = [x for x in missed if len(hits[x[0].id]) < LIMIT]
            full = [x for x in missed if len(hits[x[0].id]) >= LIMIT]
            r = random.Random(f"{args.seed}:misses")
            sample = [sorted(spread(part, k, r), key=lambda x: (x[0].id, x[1]))
                      for part, k in ((open_, args.diagnose), (full, args.diagnose // 6))]
            log(f"default run: {len(missed)} missed pairs ({len(open_)} of queries with fewer than {LIMIT} hits); "
                f"following {len(sample[0])} + {len(sample[1])} through the pipeline")
            diagnosed = []
            for part in sample:
                by_query: dict[str, list[str]] = defaultdict(list)
                qmap = {}
                for q, p in part:
                    by_query[q.id].append(p)
                    qmap[q.id] = q
                for qid, ps in by_query.items():
                    diagnosed += diagnose(store, probe, qmap[qid], ps, hits[qid], oracle, runs["minhash"]["hits"][qid])
                log(f"  diagnosed {len(by_query)} queries")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    counts = pair_counts(queries)
    s, m = scores["default"], scores["minhash"]
    n_rules = sum(1 for i in probe.stored if i not in probe.original)
    print(f"\nScanCode {VERSION} licence rules: {n_rules} rules of {LENGTHS[0]}-{LENGTHS[1]} characters and "
          f"{len(probe.original)} edited copies stored; {len(queries)} queries; {len(probe.pairs)} labelled pairs "
          f"(same expression, 5-shingle Jaccard >= {JACCARD}, or copy-original); seed {args.seed}; simdup limit {LIMIT}, "
          f"default MultiParams; MinHash LSH 0.5 / 128 on character 5-grams\n")
    mt = scores["minhash top"]
    print(f"| row | queries | pairs | ceiling at limit {LIMIT} | simdup recall | simdup recall / ceiling | MinHash recall | "
          f"MinHash recall, its best {LIMIT} |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for row in (*ROWS, "all"):
        c = counts[row]
        if not c["pairs"]:
            continue
        name = "**all pairs (micro)**" if row == "all" else row
        print(f"| {name} | {c['queries']} | {c['pairs']} | {c['reachable'] / c['pairs']:.3f} | "
              f"{s['recall'][row]:.3f} | {s['recall'][row] * c['pairs'] / c['reachable']:.3f} | {m['recall'][row]:.3f} | "
              f"{mt['recall'][row]:.3f} |")
    print(f"\n| | simdup | MinHash | MinHash, its best {LIMIT} |\n|---|---:|---:|---:|")
    print(f"| hits | {s['hits']} | {m['hits']} | {mt['hits']} |")
    print("| hits per query, p50 / max | " + " | ".join(
        f"{np.median([len(h) for h in runs[n]['hits'].values()]):.0f} / {max(len(h) for h in runs[n]['hits'].values())}"
        for n in ("default", "minhash", "minhash top")) + " |")
    print(f"| precision, strict | {s['precision_strict']:.3f} | {m['precision_strict']:.3f} | {mt['precision_strict']:.3f} |")
    print(f"| precision, oracle | {s['precision_oracle']:.3f} | {m['precision_oracle']:.3f} | {mt['precision_oracle']:.3f} |")
    print(f"| ms per query, p50 (p95) | {s['ms_p50']:.1f} ({s['ms_p95']:.1f}) | {m['ms_p50']:.2f} ({m['ms_p95']:.2f}) | |")
    print(f"| queries whose list reached {LIMIT} hits | {s['full']} | {m['full']} | {mt['full']} |")
    print(f"| index, s | {index_seconds:.0f} | {runs['minhash']['index_seconds']:.0f} | |")

    print("| hits: labelled / same expression, Jaccard < 0.5 / another expression | " + " | ".join(
        " / ".join(f"{x:.2f}" for x in hit_kinds(queries, runs[n]["hits"], probe.expression))
        for n in ("default", "minhash", "minhash top")) + " |")
    lost = [q for q in queries if q.kind == "copy" and probe.original[q.id] not in runs["default"]["hits"][q.id]]
    full_lost = sum(len(runs["default"]["hits"][q.id]) >= LIMIT for q in lost)
    print(f"\nedited copies that missed their original (simdup): {len(lost)}, {full_lost} of them with {LIMIT} hits")

    small = [q for q in queries if len(q.partners) <= LIMIT]
    if small:
        sc = {name: score(small, runs[name], oracle) for name in ("default", "minhash", "minhash top")}
        print(f"\nqueries with at most {LIMIT} labelled partners ({len(small)} queries, "
              f"{sum(len(q.partners) for q in small)} pairs):\n")
        print(f"| row | pairs | simdup recall | MinHash recall | MinHash, best {LIMIT} | simdup precision strict / oracle | "
              "MinHash strict / oracle |")
        print("|---|---:|---:|---:|---:|---:|---:|")
        small_counts = pair_counts(small)
        for row in (*ROWS, "all"):
            if small_counts[row]["pairs"]:
                print(f"| {row} | {small_counts[row]['pairs']} | {sc['default']['recall'][row]:.3f} | "
                      f"{sc['minhash']['recall'][row]:.3f} | {sc['minhash top']['recall'][row]:.3f} | " + (
                          f"{sc['default']['precision_strict']:.3f} / {sc['default']['precision_oracle']:.3f} | "
                          f"{sc['minhash']['precision_strict']:.3f} / {sc['minhash']['precision_oracle']:.3f} |"
                          if row == "all" else " | |"))
    print("\nsimdup with one rule changed (same store, same queries):\n")
    names = args.variants
    print("| | " + " | ".join(names) + " |\n|---|" + "---:|" * len(names))
    for row in (*ROWS, "all"):
        if counts[row]["pairs"]:
            print(f"| recall, {row} | " + " | ".join(f"{scores[n]['recall'][row]:.3f}" for n in names) + " |")
    for key, label in (("precision_strict", "precision, strict"), ("precision_oracle", "precision, oracle")):
        print(f"| {label} | " + " | ".join(f"{scores[n][key]:.3f}" for n in names) + " |")
    print("| ms per query, p50 | " + " | ".join(f"{scores[n]['ms_p50']:.1f}" for n in names) + " |")

    by_row = Counter(q.partners[p] for q, p in missed)
    print(f"\nsimdup's missed labelled pairs (default): {len(missed)} ({dict(by_row)}); {len(full)} of them of the "
          f"{s['full']} queries whose list reached {LIMIT} hits, {len(open_)} of the others; followed through the "
          f"pipeline: {len(sample[0])} of the latter, {len(sample[1])} of the former\n")
    show = diagnosed[:: max(1, len(diagnosed) // args.show)][: args.show] if diagnosed else []
    print("| query | partner | row | len q / p | 8-sh. share | J5 | stage | rank / cands (all) | judged | "
          "copied q, p, common q (nothing common) | dist | found @1000 | MinHash |")
    print("|---|---|---|---:|---:|---:|---|---:|---:|---|---:|---|---|")
    for d in show:
        rank = "-" if d["rank"] is None else d["rank"]
        print(f"| {d['query']} | {d['partner']} | {d['row']} | {d['len_query']} / {d['len_partner']} | "
              f"{d['share8']:.2f} | {d['jaccard5']:.2f} | {d['stage']} | {rank} / {d['candidates']} ({d['candidates_all']}) | "
              f"{d['judged']} | {d['copied'][0]:.2f}, {d['copied'][1]:.2f}, {d['copied'][2]} "
              f"({d['copied_no_bp'][0]:.2f}, {d['copied_no_bp'][1]:.2f}) | {d['distance']} | "
              f"{'yes' if d['in_big_search'] else 'no'} | {'yes' if d['in_minhash'] else 'no'} |")
    if diagnosed:
        n = len(diagnosed)
        print(f"\ncauses over the {n} followed misses (the first step of the pipeline each did not pass):\n")
        print("| stage | misses | share | 8-shingle share p50 | found with limit/store_limit 1000 |")
        print("|---|---:|---:|---:|---:|")
        stages = Counter(d["stage"] for d in diagnosed)
        for stage, k in stages.most_common():
            mine = [d for d in diagnosed if d["stage"] == stage]
            print(f"| {stage} | {k} | {k / n:.2f} | {np.median([d['share8'] for d in mine]):.2f} | "
                  f"{sum(d['in_big_search'] for d in mine)} |")
        cut = [d for d in diagnosed if d["stage"] == "cut by store_limit"]
        if cut:
            print(f"\ncut by store_limit: {sum(d['matched'] == d['matched_at_cut'] for d in cut)}/{len(cut)} partners "
                  f"matched as many parts + keys as the last candidate kept (a tie cut by id); candidates before the cut, "
                  f"p50 {np.median([d['candidates_all'] for d in cut]):.0f}; partner's matched parts + keys p50 "
                  f"{np.median([d['matched'] for d in cut]):.0f} against {np.median([d['matched_at_cut'] for d in cut]):.0f} "
                  f"at the cut and {np.median([d['matched_top'] for d in cut]):.0f} for the first candidate")
        rejected = [d for d in diagnosed if d["stage"].startswith("judged: rejected")]
        if rejected:
            print(f"judged and rejected: {len(rejected)}; units of the smaller side p50 "
                  f"{np.median([min(d['units']) for d in rejected]):.0f}; matrix similarity (larger side) p50 "
                  f"{np.median([max(d['similarity']) for d in rejected]):.2f}; copied share (larger) p50 "
                  f"{np.median([max(d['copied'][:2]) for d in rejected]):.2f}; common share p50 "
                  f"{np.median([d['copied'][2] for d in rejected]):.2f}")
        print(f"\nreplayed judging gave the same hits as find_copies for "
              f"{sum(d['replay_ok'] for d in diagnosed)}/{n} followed pairs; "
              f"MinHash found {sum(d['in_minhash'] for d in diagnosed)}/{n}")
    print(f"\nwall time {(time.perf_counter() - started) / 60:.1f} min")
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        doc = {"args": {k: str(v) for k, v in vars(args).items()}, "counts": counts, "scores": scores,
               "missed": len(missed), "skipped": dict(probe.skipped)}
        (args.out / "probe.json").write_text(json.dumps(doc, indent=1))
        (args.out / "misses.json").write_text(json.dumps(diagnosed, indent=1))
        (args.out / "hits.json").write_text(json.dumps({name: run["hits"] for name, run in runs.items()}))
        log(f"wrote {args.out / 'probe.json'}, misses.json and hits.json")


if __name__ == "__main__":
    main()
