"""Common text in the evaluation's store: how many documents hold each winnowed key, and a prototype judge.

Two commands, on the stored corpus of one ``benchmarks/eval_copies.py`` run (the same seed builds the same
documents):

``keys``
    The document frequency of the winnowed keys (:func:`simdup_es.winnow.winnowed` of each stored document's
    unified text: the keys its levels hold) and what holds the most: the man-page translation footer, the help
    pages' header and template sentences, licence clauses, beside the paragraphs the evaluation copies into 30
    and 100 hosts. Then, for each common threshold (an absolute count, like MOSS's ``-m``, or a share of the
    store), the share of each kind of text whose keys it calls common: the threshold wanted calls the template
    text common and the copied paragraphs not.

``judge``
    A PROTOTYPE of the judge of common text, outside the package, to choose its numbers. For every query it
    takes the candidates the store gives (the document-level near-duplicates and the store's part candidates,
    ``store_limit`` of them, or the query's limit if larger), compares each with the package's comparison matrix
    (:func:`simdup_es.search.comparer`), and then judges every candidate, for each setting (common threshold
    C, minimum length N):

    - a unit is *common* when it lies under a chain of the text's own winnowed keys (at most ``KEY_W`` apart)
      that more than C stored documents hold; the same on the candidate's side;
    - copied units are those of the comparison (a run of 8 units both texts share, or a sentence the matrix
      marked), less the common ones; they form passages (``passage_gap`` apart) as the package forms them;
    - the candidate is a copy when both sides have a counted passage, wherever it lies (in one sentence or
      across several): one of at least 30 copied units none of them common, or one of at least N copied units
      (half the side, for a text shorter than 2N; at least 8) under no key that more than M documents hold
      (M <= C: the shorter the shared text, the rarer it must be). One rare sentence is enough, common text
      never is;
    - it is a ``near-duplicate`` when within distance ``k`` (and so, sharing a passage) or when copied passages
      are ``whole_share`` of both sides; copies are ranked near-duplicates first, then by the larger copied
      share, and cut at the query's limit.

    It differs from the package in these ways: every candidate is judged (the package stops after
    ``max_misses`` misses in a row and asks the store again only when copies keep coming), the key
    frequencies are counted here over the stored texts rather than asked of the store, and shares count over
    every unit. ``--thin K`` lets only every K-th host of the held rows (they find each other, a hundred
    comparisons each) and every K-th licence variant (up to 20,000 characters) ask. Scored with the evaluation's oracle and rows, beside the baseline run's
    hits (the package as it is, MinHash LSH) on the same queries.

Usage (after ``eval_copies.py --seed S --store /tmp/h46-wS --out /tmp/h46-eS``)::

    SIMDUP_DATA=data python benchmarks/common_text.py keys --seed 7
    SIMDUP_DATA=data python benchmarks/common_text.py judge --seed 7 --store /tmp/h46-w7 --baseline /tmp/h46-e7 \
        --common 0.01,0.02 --min-units 12,16,20 --short-common 3,10,30 --thin 4 --out /tmp/h46-p7
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import eval_copies as ec  # noqa: E402

from simdup_es.multilevel import MultiParams, copied_units, passages  # noqa: E402
from simdup_es.text import unify, unify_many  # noqa: E402
from simdup_es.winnow import KEY_K, KEY_W, winnowed  # noqa: E402

# Texts the keys command looks up: what the corpus holds in common, and how many documents hold it.
NAMED = {
    "man-page translation footer": "本页面中文版由中文 man 手册页计划提供。\n中文 man 手册页计划：https://github.com/man-pages-zh/manpages-zh",
    "older man pages' project credit": "《中国 Linux 论坛 man 手册页翻译计划》:\nhttp://cmpp.linuxforum.net",
    "a translator's credit (PostgreSQL pages)": "Postgresql 中文网站何伟平 <laser@pgsqldb.org>",
    "help pages' header": "LibreOffice 7.4 帮助\n模块\n目录\n索引 🔎︎",
    "help: reset sentence": "重置此对话框打开时对当前选项卡所作的可应用的变更。",
    "help: Asian-language sentence": "只有在「工具 - 选项 - 语言设置 - 语言」中启用了对亚洲语言的支持时，这些命令才可用。",
    "help: cancel sentence": "点击「取消」关闭对话框，不保存所做的任何修改。",
    "coreutils: --help and --version lines": "--help 显示此帮助信息并退出\n--version 显示版本信息并退出",
    "coreutils credits": "GNU coreutils 的在线帮助： <https://www.gnu.org/software/coreutils/>",
    "coreutils: free software line": "本软件是自由软件：您可以自由修改和重新发布它。在法律允许的范围内，不提供任何保证。",
    "MIT warranty clause": 'THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR IMPLIED',
    "GPL: distributed in the hope": "distributed in the hope that it will be useful, but WITHOUT ANY WARRANTY",
    "BSD: redistributions of source code": "Redistributions of source code must retain the above copyright notice",
}
RUN_UNITS = 8  # the comparison's shortest shared run (CompareParams.run_units)
LONG = 30  # units of a passage that counts whenever no key under it is common
BINS = (1, 2, 3, 6, 11, 21, 51, 101, 201, 501, 1001)  # lower edges of the frequency bins


# ---------------------------------------------------------------- key frequencies


@dataclass
class KeyTable:
    """How many stored documents hold each winnowed key (sorted keys, their counts), over ``documents``."""

    keys: np.ndarray
    counts: np.ndarray
    documents: int

    @classmethod
    def of(cls, unified: Iterable[str]) -> KeyTable:
        per_doc = [np.unique(winnowed(u, KEY_K, KEY_W)[0]) for u in unified]
        keys, counts = np.unique(np.concatenate(per_doc), return_counts=True)
        return cls(keys, counts.astype(np.int64), len(per_doc))

    def frequency(self, values: np.ndarray) -> np.ndarray:
        at = np.minimum(np.searchsorted(self.keys, values), self.keys.size - 1)
        return np.where(self.keys[at] == values, self.counts[at], 0)

    def threshold(self, common: float) -> int:
        """A setting as a document count: a count as it is; a share (below 1) of the store, at least 10 documents."""
        return int(common) if common >= 1 else max(10, int(common * self.documents))


def text_keys(table: KeyTable, text: str) -> np.ndarray:
    """The frequencies of the keys of ``text`` (unified) in the store."""
    return table.frequency(winnowed(unify(text), KEY_K, KEY_W)[0])


def keys_command(c: ec.Corpus, settings: Sequence[float]) -> None:
    ids = list(c.stored)
    unified = dict(zip(ids, unify_many([c.stored[i] for i in ids]), strict=True))
    t0 = time.perf_counter()
    table = KeyTable.of(unified.values())
    print(f"{table.documents} stored documents, {table.keys.size} distinct keys, "
          f"{int(table.counts.sum())} (document, key) pairs; counted in {time.perf_counter() - t0:.1f} s\n")
    print("| documents holding a key | keys | share of keys | share of the (document, key) pairs |\n|---|---:|---:|---:|")
    edges = (*BINS, 10**9)
    for lo, hi in zip(edges, edges[1:]):
        sel = (table.counts >= lo) & (table.counts < hi)
        label = f"{lo}" if hi == lo + 1 else f"{lo}-{hi - 1}" if hi < 10**9 else f"{lo} or more"
        print(f"| {label} | {int(sel.sum())} | {sel.mean():.4f} | {table.counts[sel].sum() / table.counts.sum():.4f} |")
    kinds = named_kinds(c, unified, table)
    print("\n| text | documents holding it whole | its keys' frequencies: min / median / max |\n|---|---:|---:|")
    for name, (holders, freqs) in kinds.items():
        print(f"| {name} | {holders} | {freqs.min()} / {int(np.median(freqs))} / {freqs.max()} |" if freqs.size
              else f"| {name} | {holders} | - |")
    print(f"\nShare of each text's keys a threshold calls common (more than T documents hold them), {table.documents} "
          "documents; the template texts should be 1, the copied paragraphs 0\n")
    cols = [f"T = {table.threshold(s)}" + (f" ({s:.1%})" if s < 1 else "") for s in settings]
    print("| text | " + " | ".join(cols) + " |\n|---|" + "---:|" * len(cols))
    for name, (_, freqs) in kinds.items():
        if freqs.size:
            print(f"| {name} | " + " | ".join(f"{(freqs > table.threshold(s)).mean():.2f}" for s in settings) + " |")


def named_kinds(c: ec.Corpus, unified: Mapping[str, str], table: KeyTable) -> dict[str, tuple[int, np.ndarray]]:
    """For each named text and each held row's paragraph: how many stored documents hold it whole, and its keys'
    frequencies (the keys inside it: those of a text alone that lie in its middle are the stored documents' too)."""
    out: dict[str, tuple[int, np.ndarray]] = {}
    squeezed = {i: u.replace(" ", "").replace("\n", "") for i, u in unified.items()}
    for name, text in NAMED.items():
        u = unify(text).replace(" ", "").replace("\n", "")
        out[name] = (sum(u in s for s in squeezed.values()), text_keys(table, text))
    held = {q.id.split(":", 1)[0]: q for q in c.queries if q.id.startswith("held")}
    for tag, q in sorted(held.items()):
        hosts = next(iter(q.targets.values()))
        para = common_line(c.stored[hosts[0]], c.stored[hosts[1]])
        u = unify(para).replace(" ", "").replace("\n", "")
        out[f"a paragraph copied into {tag[4:]} hosts"] = (sum(u in s for s in squeezed.values()), text_keys(table, para))
    return out


def common_line(a: str, b: str) -> str:
    """The longest line two texts share (a held row's paragraph, from two of its hosts)."""
    return max(set(a.split("\n")) & set(b.split("\n")), key=len)


# ---------------------------------------------------------------- the prototype judge


def common_units(values: np.ndarray, positions: np.ndarray, n_units: int, freq: np.ndarray, threshold: int) -> np.ndarray:
    """Units under chains of common keys (each held by more than ``threshold`` documents, at most ``KEY_W`` apart)."""
    out = np.zeros(n_units, dtype=bool)
    common = positions[freq > threshold]
    if not common.size:
        return out
    cut = np.flatnonzero(np.diff(common) > KEY_W) + 1
    for chain in np.split(common, cut):
        out[int(chain[0]) : min(n_units, int(chain[-1]) + KEY_K)] = True
    return out


@dataclass
class Side:
    """One text's keys and their frequencies."""

    values: np.ndarray
    positions: np.ndarray
    freq: np.ndarray

    @classmethod
    def of(cls, unified: str, table: KeyTable) -> Side:
        values, positions = winnowed(unified, KEY_K, KEY_W)
        return cls(values, positions, table.frequency(values))


def counted(copied: np.ndarray, common: np.ndarray, rarer: np.ndarray, min_units: int, gap: int) -> int:
    """Copied units in counted passages: of at least ``LONG`` rare copied units (not ``common``), or of at least
    ``min_units`` copied units that fewer documents hold (not ``rarer``); of half the side at least, for a side
    shorter than that (a short text copied whole; at least ``RUN_UNITS``)."""
    out = np.zeros(copied.size, dtype=bool)
    need = max(RUN_UNITS, min(min_units, (copied.size + 1) // 2))
    for mask, at_least in ((common, LONG), (rarer, need)):
        rare = copied & ~mask if mask.size == copied.size else copied
        for start, stop, n in passages(rare, gap):
            if n >= at_least:
                out[start:stop] |= rare[start:stop]
    return int(out.sum())


@dataclass(frozen=True)
class Setting:
    """The prototype's numbers: a key is common above ``common`` documents; a passage counts from ``LONG`` rare
    units, or from ``min_units`` when no key under it is held by more than ``short_common`` documents."""

    common: int
    min_units: int
    short_common: int

    def __str__(self) -> str:
        return f"T={self.common} N={self.min_units}" + (f" M={self.short_common}" if self.short_common < self.common else "")


def judge_settings(comparison, qside: Side, cside: Side, distance: int | None, settings: Sequence[Setting],  # type: ignore[no-untyped-def]
                   params: MultiParams) -> dict[Setting, tuple[str, float, float]]:
    """The prototype's verdict on one candidate for each setting: ``(kind, copied_query, copied_match)``."""
    qa, _ = copied_units(comparison, "a")
    cb, _ = copied_units(comparison, "b")
    masks: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    for t in {x for st in settings for x in (st.common, st.short_common)}:
        masks[t] = (common_units(qside.values, qside.positions, qa.size, qside.freq, t),
                    common_units(cside.values, cside.positions, cb.size, cside.freq, t))
    out = {}
    for st in settings:
        (ca, cc), (ra, rc) = masks[st.common], masks[st.short_common]
        x = counted(qa, ca, ra, st.min_units, params.passage_gap)
        y = counted(cb, cc, rc, st.min_units, params.passage_gap) if x else 0
        if not (x and y):
            continue
        sx, sy = x / max(1, qa.size), y / max(1, cb.size)
        near = (distance is not None and distance <= params.k) or min(sx, sy) >= params.whole_share
        out[st] = ("near-duplicate" if near else "partial", sx, sy)
    return out


def thinned(queries: list[ec.Query], k: int) -> list[ec.Query]:
    """Every query, but only every ``k``-th of the held rows' hosts and of the licence variants (the slowest to
    judge: hosts that find a hundred others, texts of up to 20,000 characters)."""
    seen: dict[str, int] = {}
    out = []
    for q in queries:
        kind = "host" if any(r.startswith("held-") and "host->source" in r for r in q.targets) else \
            "licence" if "licences" in q.targets else None
        if kind is not None:
            seen[kind] = seen.get(kind, -1) + 1
            if seen[kind] % k:
                continue
        out.append(q)
    return out


def judge_command(c: ec.Corpus, store_dir: Path, baseline: Path, commons: Sequence[float], min_units: Sequence[int],
                  shorts: Sequence[int], log: Callable[[str], None], every: int, thin: int, out: Path | None) -> None:
    from simdup_es import SimdupError, default_fingerprinter
    from simdup_es.parts import PartPrinter
    from simdup_es.search import comparer, rerank
    from simdup_es.store import open_store

    ids = list(c.stored)
    table = KeyTable.of(unify_many([c.stored[i] for i in ids]))
    thresholds = sorted({table.threshold(s) for s in commons})
    settings = [Setting(t, n, min(m, t)) for t in thresholds for n in min_units for m in sorted({*shorts, t}) if m <= t]
    log(f"keys counted over {table.documents} documents; settings {', '.join(map(str, settings))}")
    printer, compare, params = PartPrinter(default_fingerprinter()), comparer(), MultiParams()
    runs: dict[Setting, dict] = {st: {"hits": {}, "how": {}, "ms": []} for st in settings}
    sides: dict[str, Side] = {}
    t_all = time.perf_counter()
    c.queries = thinned(c.queries, thin)
    with open_store(path=store_dir) as store:
        for k, q in enumerate(c.queries):
            t0 = time.perf_counter()
            found: dict[Setting, list] = {key: [] for key in runs}
            try:
                unified = unify(q.text)
                fp, levels = printer.fingerprinter.fingerprint(unified), printer.levels(unified)
                (near_ids, fps), cands = store.copy_candidates(fp.value, levels.fingerprints, [x.key for x in levels.keys],
                                                               levels.version, exclude_id=q.exclude,
                                                               limit=max(params.store_limit, q.limit))
            except SimdupError:
                near_ids, fps, cands, unified = [], np.zeros(0, dtype=np.uint64), [], ""
            near = {m.id: m.distance for m in rerank(fp.value, near_ids, fps, store.layout.k)} if unified else {}
            qside = Side.of(unified, table) if unified else None
            for doc in store.get(list(dict.fromkeys([*near, *(x.id for x in cands)]))):
                if not doc.text or qside is None:
                    continue
                other = unify(doc.text)
                if doc.id not in sides:
                    sides[doc.id] = Side.of(other, table)
                distance = near.get(doc.id)
                if distance is None and doc.fingerprint is not None:
                    distance = bin(fp.value ^ doc.fingerprint).count("1")
                verdicts = judge_settings(compare(unified, other), qside, sides[doc.id], distance, settings, params)
                for key, (kind, sx, sy) in verdicts.items():
                    found[key].append((doc.id, kind, distance, sx, sy))
            ms = 1000 * (time.perf_counter() - t0)
            for key, hits in found.items():
                hits.sort(key=lambda h: (h[1] != "near-duplicate", h[2] if h[1] == "near-duplicate" and h[2] is not None
                                         else 65, -max(h[3], h[4]), h[0]))
                hits = hits[: q.limit]
                runs[key]["hits"][q.id] = [h[0] for h in hits]
                runs[key]["how"][q.id] = [(h[1], h[2], h[3], h[4]) for h in hits]
                runs[key]["ms"].append(ms)
            if (k + 1) % every == 0:
                log(f"  {k + 1}/{len(c.queries)} queries, {time.perf_counter() - t_all:.0f} s")
    report(c, runs, baseline, log, out)


def report(c: ec.Corpus, runs: Mapping[Setting, dict], baseline: Path, log: Callable[[str], None], out: Path | None) -> None:
    """Each setting's figures beside the baseline run's (simdup as it is, MinHash LSH), by the evaluation's oracle."""
    base_hits = json.loads((baseline / "hits.json").read_text())
    base = {"simdup as it is": {"hits": base_hits["simdup"], "how": {k: [tuple(x) for x in v] for k, v in
                                                                        base_hits["simdup how"].items()}, "ms": [0.0]},
            "minhash": {"hits": base_hits["minhash"], "ms": [0.0]}}
    view = ec.OracleView(c)
    named = {f"prototype {st}": run | {"ms": [0.0]} for st, run in runs.items()}
    res = ec.score(c, base | named, view)
    log(f"scored {len(res)} settings")
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        (out / "prototype.json").write_text(json.dumps(res, ensure_ascii=False, indent=1))
        (out / "prototype-hits.json").write_text(json.dumps({name: run["hits"] for name, run in named.items()}))
    rows = ("passage-10 host->source", "passage-10 source->host", "mosaic (one sentence per source)",
            "held-30 host->source", "held-30 source->host", "held-100 host->source", "held-100 source->host",
            "widely-copied passage-20 host->source", "short-clause-deleted", "licences")
    short = ("p10 h→s", "p10 s→h", "mosaic", "held30 h→s", "held30 s→h", "held100 h→s", "held100 s→h", "wide h→s",
             "short-clause", "licences")
    print("| setting | " + " | ".join(short) + " | lowest row | all pairs | oracle (without the held rows) / strict precision | hits | "
          "template-only hits (queries) | wrong sharing common | near-dup sharing nothing |")
    print("|---|" + "---:|" * (len(short) + 7))
    for name, r in res.items():
        cells = [f"{r['rows'][row]['recall']:.3f}" for row in rows]
        low = min(r["rows"].items(), key=lambda kv: kv[1]["recall"])
        tq = r["template_queries"]
        print(f"| {name} | " + " | ".join(cells) + f" | {low[1]['recall']:.3f} ({low[0]}) | {r['recall_all']:.4f} | "
              f"{r['precision_oracle']:.4f} ({r['precision_oracle_without_held']:.4f}) / {r['precision_strict']:.4f} | {r['hits']} | {tq['template_only_hits']} "
              f"({tq['queries_with_one']}) | {r['wrong_sharing_common']} | {r['near_duplicate_sharing_nothing']} |")
    print("\nheld rows by the paragraph's share of its host, found / pairs")
    for name, r in res.items():
        print(f"  {name}: " + "; ".join(f"{row}: " + " ".join(f"{a}/{b}" for a, b in bins)
                                        for row, bins in r["held_by_share"].items()))


def parse_list(text: str, kind: Callable[[str], float]) -> list:
    return [kind(x) for x in text.split(",") if x]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("command", choices=("keys", "judge"))
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--quick", action="store_true", help="eval_copies.py's --quick sizes")
    ap.add_argument("--store", type=Path, help="judge: the store eval_copies.py built for this seed (--store)")
    ap.add_argument("--baseline", type=Path, help="judge: eval_copies.py's --out folder of the same seed (its hits)")
    ap.add_argument("--common", default="10,20,50,100,0.005,0.01,0.02",
                    help="common thresholds: a document count, or a share of the store (below 1; at least 10 documents)")
    ap.add_argument("--min-units", default="10,13,16,20,30", help="judge: minimum copied units of a passage")
    ap.add_argument("--short-common", default="", help="judge: a passage shorter than 30 units counts only when no "
                    "key under it is held by more than M documents (M of this list; the common threshold itself always)")
    ap.add_argument("--out", type=Path, help="judge: write prototype.json (every figure) and prototype-hits.json here")
    ap.add_argument("--every", type=int, default=1000, help="judge: progress every this many queries")
    ap.add_argument("--thin", type=int, default=1, help="judge: only every K-th host of the held rows and every "
                    "K-th licence variant asks")
    args = ap.parse_args()
    started = time.perf_counter()

    def log(msg: str) -> None:
        print(f"[{time.perf_counter() - started:6.0f} s] {msg}", file=sys.stderr, flush=True)

    size = {k: v[1] if args.quick else v[0] for k, v in ec.SIZES.items()}
    c = ec.build(args.seed, size, log)
    log(f"{len(c.stored)} stored documents, {len(c.queries)} queries")
    commons = parse_list(args.common, float)
    if args.command == "keys":
        keys_command(c, commons)
    else:
        if args.store is None or args.baseline is None:
            ap.error("judge needs --store and --baseline")
        judge_command(c, args.store, args.baseline, commons, parse_list(args.min_units, int),
                      parse_list(args.short_common, int), log, args.every, args.thin, args.out)


if __name__ == "__main__":
    main()
