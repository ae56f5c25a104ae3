"""Recall per kind of edit and precision of document-level, multilevel and MinHash retrieval.

The index holds the corpus (data/zh-docs.jsonl, or $SIMDUP_DATA) less a held-out pool
of foreign documents, plus the zh_CN form of some man pages (data/manpages-pairs.jsonl)
and, for the containment rows, the host documents made below. --sources source
documents (modern prose with at least 10 sentences, drawn by --seed) each get every
edit, and each edited copy is a query that must find its source:

- replace / delete / insert 5, 10, 20, 30 % of the sentences (replacements and
  insertions are sentences of held-out documents, at random places);
- reorder: the paragraphs shuffled (the sentences when there are fewer than 3);
- boilerplate: site navigation and copyright lines, about 7.5 % of the source's units
  at the head and as much at the tail;
- synonyms 50 % / 80 %: words of half (80 %) of the sentences replaced by Cilin synonyms
  (30 % / 50 % of their content words that have one: quality_set's "light" and "medium"
  rewrites), as a rewriting tool would;
- traditional: the source converted with OpenCC s2twp (Taiwan script and vocabulary);
  man-tw: a real zh_TW man page, its zh_CN page in the index;
- contain-30 / contain-60: a contiguous passage of 30 % / 60 % of the source's
  text (in units: whole sentences until the share is reached) inserted at a line break
  of a held-out document 0.7 to 1.5 times as long as the source. Both directions: the host is a query that must find the source, and the
  host is indexed and the source is a query that must find it.

A hit is correct (a labelled copy) when it was made from something the query was
made from: the query's source or another document made from it (a host), for man
pages the same page (its zh_CN form, any section of it, their hosts), and for a host
that asks, a host of another source built around the same held-out document (hosts
are drawn with replacement, and both hold that document's whole text). Until issue
11's precision work a man page section's own zh_CN page, and such hosts, were
counted as false hits. Precision is over all hits of all queries. ``precision
(related)`` also counts as correct a hit the matrix finds at least half copied from
a corpus document the query was made from (the corpus has copies of its own: the
same help page in two modules).

Methods, on the same queries and index:

- ``document``: the document fingerprint, Hamming distance <= 3 (``simdup search`` today);
- ``multilevel``: documents within distance 3, plus part and sentence-key candidates
  (simdup_es.multilevel.MemoryPartIndex) ranked by coverage, judged by the comparison
  matrix (near-duplicate by distance, partial by the share in copied passages);
- ``parts only`` / ``keys only``: the same with one level switched off (why each exists);
- ``minhash``: datasketch MinHash LSH, threshold 0.5, 128 permutations, jieba content
  words as a set; raw, and judged by the same matrix rule, copied passages without the
  boilerplate rule, which needs the sentence keys (``minhash+matrix``).

Time per query is the wall time of the lookup plus the judgment, per method, one process.

    SIMDUP_DATA=/work/main/data python benchmarks/eval_multilevel.py --sources 300 --man 100 --seed 11 [--out results/]

About 12 minutes on the shared 2-core machine (6,400 queries; --sources 60 takes 4).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import quality_set  # noqa: E402
from quality_set import Piece, Source, assemble, make_source, pieces_of  # noqa: E402

from simdup_es.compare import CachedSegmenter, CompareParams, compare  # noqa: E402
from simdup_es.fingerprint import Doc, Fingerprinter  # noqa: E402
from simdup_es.multilevel import MemoryPartIndex, MultiParams, StoredText, copied_shares, find_copies, rank_candidates  # noqa: E402
from simdup_es.levels import PartParams  # noqa: E402
from simdup_es.parts import PartPrinter  # noqa: E402
from simdup_es.text import UnifiedText, unify  # noqa: E402
from simdup_es.thesaurus import cilin_thesaurus  # noqa: E402
from simdup_es.tokens import dictionary_words  # noqa: E402

DATA = Path(os.environ.get("SIMDUP_DATA") or ROOT / "data")
FRACS = (0.05, 0.10, 0.20, 0.30)
MAN_MAX_CHARS = 8_000
BOILERPLATE = (
    "首页 | 新闻中心 | 产品与服务 | 技术支持 | 下载专区 | 关于我们 | 联系我们",
    "当前位置：首页 > 技术文档 > 在线帮助",
    "欢迎访问本站，请登录或注册后发表评论。",
    "热门标签：linux 命令 教程 办公软件 文档 手册 帮助",
    "上一篇：常见问题解答  下一篇：版本更新说明",
    "分享到：微博 微信 qq空间 豆瓣",
    "本文内容来源于网络，仅供学习参考，如有侵权请联系删除。",
    "版权所有 © 2008-2024 某某信息技术有限公司 保留所有权利",
    "京icp备12345678号-1 京公网安备 11010802000000号",
    "客服热线：400-800-1234（工作日 9:00-18:00） 邮箱：service@example.com",
    "友情链接：开源中国 | 中文社区 | 技术论坛 | 文档中心",
    "免责声明：本站所载文章不代表本站观点，转载请注明出处。",
)


@dataclass
class Query:
    id: str
    edit: str
    text: str  # unified
    expected: str  # the id it must find
    family: frozenset[str]  # what it was made from: a source (a man page), a held-out host document
    origins: tuple[str, ...] = ()  # corpus documents its text came from (source, host)


@dataclass
class Method:
    name: str
    found: dict[str, list[str]] = field(default_factory=dict)  # query id -> hit ids
    # query id -> (hit id, kind, copied_query, copied_match, similarity_query, similarity_match) for judged methods
    scores: dict[str, list[tuple]] = field(default_factory=dict)
    seconds: float = 0.0


def foreign_sentences(pool: list[Source], n: int, r: random.Random) -> list[Piece]:
    out = []
    for _ in range(n):
        f = r.choice(pool)
        s = r.choice(f.sentences)
        out.append(Piece(s.text, "\n", False))
    return out


def edit_replace(src: Source, frac: float, pool: list[Source], r: random.Random) -> str:
    n = len(src.sentences)
    gone = set(r.sample(range(n), max(1, round(frac * n))))
    pieces = []
    new = iter(foreign_sentences(pool, len(gone), r))
    for k in range(n):
        pieces.append(next(new) if k in gone else pieces_of(src, [k])[0])
    return assemble(pieces)[0]


def edit_insert(src: Source, frac: float, pool: list[Source], r: random.Random) -> str:
    n = len(src.sentences)
    pieces = pieces_of(src, range(n))
    for p in foreign_sentences(pool, max(1, round(frac * n)), r):
        pieces.insert(r.randrange(len(pieces) + 1), p)
    return assemble(pieces)[0]


def boilerplate(src: Source, r: random.Random, share: float = 0.075) -> str:
    def lines() -> list[Piece]:
        want, got, out = share * src.n_units, 0, []
        while got < want:
            line = r.choice(BOILERPLATE)
            out.append(Piece(line, "\n", False))
            got += len(quality_set.units(line))
        return out

    return assemble(lines() + pieces_of(src, range(len(src.sentences))) + lines())[0]


def host_with(src: Source, frac: float, pool: list[Source], r: random.Random) -> tuple[str, str]:
    """A held-out document about as long as ``src`` with a run of ``src``'s sentences making
    ``frac`` of its units (at least) inserted at a line break; and the held-out document's id."""
    n = len(src.sentences)
    want = frac * src.n_units
    starts = list(range(n))
    r.shuffle(starts)
    run: list[int] = []
    for at in starts:  # a start from which the run reaches ``want`` before the end
        got, run = 0, []
        for k in range(at, n):
            run.append(k)
            got += src.sentences[k].n_units
            if got >= want:
                break
        if got >= want:
            break
    fits = [f for f in pool if 0.7 * src.n_units <= f.n_units <= 1.5 * src.n_units] or pool
    host = r.choice(fits)
    body = [Piece(s.text, host.seps[i] or "\n", False) for i, s in enumerate(host.sentences)]
    cuts = [i + 1 for i, p in enumerate(body[:-1]) if "\n" in p.sep] or [len(body) // 2]
    cut = r.choice(cuts)
    return assemble(body[:cut] + pieces_of(src, run) + body[cut:])[0], host.id


def build(seed: int, n_sources: int, n_man: int, n_foreign: int):  # type: ignore[no-untyped-def]
    import opencc

    s2twp = opencc.OpenCC("s2twp")
    editor = quality_set.SynonymEditor(cilin_thesaurus(), dictionary_words)
    rng = random.Random(seed)
    docs = [json.loads(line) for line in open(DATA / "zh-docs.jsonl", encoding="utf-8")]
    docs.sort(key=lambda d: d["id"])
    modern = [d for d in docs if d["id"].startswith(tuple(p + ":" for p in quality_set.MODERN))]
    order = list(range(len(modern)))
    rng.shuffle(order)
    sources: list[Source] = []
    foreign: list[Source] = []
    foreign_ids: set[str] = set()
    for i in order:
        d = modern[i]
        if len(foreign) < n_foreign:
            src = make_source(d["id"], d["text"])
            if len(src.sentences) >= 3:
                foreign.append(src)
                foreign_ids.add(d["id"])
            continue
        if len(sources) >= n_sources:
            break
        src = make_source(d["id"], d["text"])
        if len(src.sentences) >= 10 and src.n_units <= 6000:
            sources.append(src)
    index: dict[str, str] = {}  # id -> unified text
    for d in docs:
        if d["id"] not in foreign_ids:
            index[d["id"]] = unify(d["text"])
    queries: list[Query] = []
    family: dict[str, frozenset[str]] = {}  # indexed id -> what it was made from (see ``correct``)
    for src in sources:
        # A man page section belongs to its page, as the page's zh_CN form and its other sections do.
        fam = frozenset([src.id.split("#")[0] if src.id.startswith("zh-man:") else src.id])
        family[src.id] = fam
        r = random.Random(f"{seed}:{src.id}")
        for frac in FRACS:
            pct = round(frac * 100)
            queries.append(Query(f"{src.id}~replace{pct}", f"replace {pct}%", unify(edit_replace(src, frac, foreign, r)), src.id, fam))
            _, kept = quality_set.edit_delete(src, frac, r)
            queries.append(Query(f"{src.id}~delete{pct}", f"delete {pct}%", unify(assemble(pieces_of(src, sorted(kept)))[0]), src.id, fam))
            queries.append(Query(f"{src.id}~insert{pct}", f"insert {pct}%", unify(edit_insert(src, frac, foreign, r)), src.id, fam))
        for level, p_sent in (("light", 50), ("medium", 80)):
            pieces, _ = quality_set.edit_synonyms(src, level, editor, r)
            queries.append(Query(f"{src.id}~syn-{level}", f"synonyms {p_sent}%", unify(assemble(pieces)[0]), src.id, fam))
        pieces, _ = quality_set.edit_reorder(src, "medium", r)
        queries.append(Query(f"{src.id}~reorder", "reorder", unify(assemble(pieces)[0]), src.id, fam))
        queries.append(Query(f"{src.id}~boiler", "boilerplate 15%", unify(boilerplate(src, r)), src.id, fam))
        queries.append(Query(f"{src.id}~tw", "traditional", unify(s2twp.convert(src.text)), src.id, fam))
        for frac in (0.3, 0.6):
            pct = round(frac * 100)
            hid = f"{src.id}~host{pct}"
            host, fid = host_with(src, frac, foreign, r)
            index[hid] = host = unify(host)
            # A host is made from the source and from the held-out document around the passage;
            # another source's host around the same document holds that text too.
            family[hid] = fam | {f"host:{fid}"}
            queries.append(Query(hid, f"contain {pct}% (host asks)", host, src.id, family[hid], (src.id, fid)))
            queries.append(Query(f"{src.id}~asks{pct}", f"contain {pct}% (source asks)", src.text, hid, fam, (src.id, fid)))
    man = [json.loads(line) for line in open(DATA / "manpages-pairs.jsonl", encoding="utf-8")]
    man = sorted((m for m in man if len(m["zh_cn"]) < MAN_MAX_CHARS and len(m["zh_tw"]) < MAN_MAX_CHARS), key=lambda m: m["id"])
    for m in rng.sample(man, min(n_man, len(man))):
        page = m["id"].split(":", 1)[1]  # man1/ab.1
        fam = frozenset([f"zh-man:{page}"])
        cn = f"{m['id']}:cn"
        index[cn] = unify(m["zh_cn"])
        family[cn] = fam
        queries.append(Query(f"{m['id']}:tw", "man zh_TW", unify(m["zh_tw"]), cn, fam, (cn,)))
    for doc_id in index:
        if doc_id.startswith("zh-man:"):
            family.setdefault(doc_id, frozenset([doc_id.split("#")[0]]))
    for q in queries:
        q.origins = q.origins or (q.expected,)
    return index, queries, family, {f.id: f.text for f in foreign}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sources", type=int, default=300)
    ap.add_argument("--man", type=int, default=100, help="zh_TW man pages queried")
    ap.add_argument("--foreign", type=int, default=400, help="held-out documents for inserted text and hosts")
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--out", type=Path, default=None, help="write multilevel.json here")
    ap.add_argument("--no-minhash", action="store_true")
    ap.add_argument("--passage-units", type=int, default=MultiParams().passage_units, help="MultiParams.passage_units")
    ap.add_argument("--passage-gap", type=int, default=MultiParams().passage_gap, help="MultiParams.passage_gap")
    ap.add_argument("--sweep-from", type=float, default=0.15, help="lowest partial threshold judged; higher ones are swept")
    args = ap.parse_args()
    t0 = time.perf_counter()
    index, queries, family, foreign = build(args.seed, args.sources, args.man, args.foreign)
    print(f"index {len(index)} documents, {len(queries)} queries, built in {time.perf_counter() - t0:.0f} s", flush=True)

    fp = Fingerprinter()
    printer = PartPrinter(fp, PartParams())
    ids = list(index)
    t0 = time.perf_counter()
    doc_fps = {i: r.unwrap().value for i, r in fp.map_items(ids, lambda i: Doc(index[i]), workers=2) if r.error is None}
    store = MemoryPartIndex()
    for i, levels in zip(ids, printer.map((UnifiedText(index[i]) for i in ids), workers=2)):
        store.put_levels(i, levels, doc_fps.get(i, 0))
    print(f"fingerprinted and indexed all levels in {time.perf_counter() - t0:.0f} s", flush=True)

    params = MultiParams(partial_threshold=args.sweep_from, passage_units=args.passage_units, passage_gap=args.passage_gap)
    cparams = CompareParams()
    segment = CachedSegmenter(dictionary_words)
    texts = lambda got: {i: StoredText(index[i], doc_fps.get(i)) for i in got if i in index}  # noqa: E731

    def cmp(a: str, b: str):  # type: ignore[no-untyped-def]
        return compare(a, b, cparams, segment=segment)

    # One comparison per (query, document) pair, shared by the methods; each method is
    # charged the time the comparison took when it was made.
    cache: dict[str, tuple] = {}
    charged = [0.0]  # comparison time charged to the current method
    spent = [0.0]  # comparison time actually spent in the current call

    def cmp_cached(a: str, b: str):  # type: ignore[no-untyped-def]
        got = cache.get(b)
        if got is None:
            t = time.perf_counter()
            c = cmp(a, b)
            got = cache[b] = (c, time.perf_counter() - t)
            spent[0] += got[1]
        charged[0] += got[1]
        return got[0]

    methods = {name: Method(name) for name in ("document", "multilevel", "parts only", "keys only", "minhash", "minhash+matrix")}
    if args.no_minhash:
        del methods["minhash"], methods["minhash+matrix"]
    lsh = None
    if not args.no_minhash:
        from datasketch import MinHash, MinHashLSH
        import xxhash

        def mh(text: str) -> MinHash:
            m = MinHash(num_perm=128, hashfunc=lambda b: xxhash.xxh32_intdigest(b))
            m.update_batch([w.encode() for w in set(fp.tokenizer.words(text))])
            return m

        t0 = time.perf_counter()
        lsh = MinHashLSH(threshold=0.5, num_perm=128)
        with lsh.insertion_session() as session:
            for i in ids:
                session.insert(i, mh(index[i]))
        print(f"minhash index in {time.perf_counter() - t0:.0f} s", flush=True)

    ranks: dict[str, tuple[int, float]] = {}  # query -> rank and coverage of the expected document
    for n, q in enumerate(queries):
        cache.clear()
        exclude = q.id  # a host is in the index; it must not find itself
        # document level
        t = time.perf_counter()
        qfp = fp.fingerprint(UnifiedText(q.text)).value
        near = store.near_duplicates(qfp, fp.version, k=3, exclude_id=exclude)
        methods["document"].found[q.id] = [i for i, _ in near]
        t_doc = time.perf_counter() - t
        methods["document"].seconds += t_doc
        # all levels, and each finer level alone
        t = time.perf_counter()
        levels = printer.levels(UnifiedText(q.text))
        t_levels = time.perf_counter() - t
        for name, use_parts, use_keys in (("multilevel", True, True), ("parts only", True, False), ("keys only", False, True)):
            t = time.perf_counter()
            charged[0] = spent[0] = 0.0
            found = store.part_candidates(
                levels.fingerprints if use_parts else [], [k.key for k in levels.keys] if use_keys else [],
                fp.version, exclude_id=exclude, limit=params.store_limit,
            )
            hits = find_copies(q.text, levels, near, found, texts, cmp_cached, params=params)
            methods[name].seconds += time.perf_counter() - t - spent[0] + charged[0] + t_levels + t_doc
            if name == "multilevel":
                ranked = rank_candidates(levels, found, MultiParams(min_coverage=0.0))
                ranks[q.id] = next(((r, c.coverage) for r, c in enumerate(ranked) if c.id == q.expected), (-1, 0.0))
            methods[name].found[q.id] = [m.id for m in hits]
            methods[name].scores[q.id] = [
                (m.id, m.kind, m.copied_query, m.copied_match, m.similarity_query, m.similarity_match)
                for m in hits if m.comparison is not None
            ]
        if lsh is not None:
            t = time.perf_counter()
            got = sorted(i for i in lsh.query(mh(q.text)) if i != exclude)
            methods["minhash"].found[q.id] = got
            t_mh = time.perf_counter() - t
            methods["minhash"].seconds += t_mh
            charged[0] = 0.0
            kept, scores = [], []
            for i in got:
                c = cmp_cached(q.text, index[i])
                cq, cm, *_ = copied_shares(c, params=params)  # the multilevel rule
                if max(cq, cm) >= params.partial_threshold:
                    kept.append(i)
                    scores.append((i, "partial", cq, cm, c.similarity_a, c.similarity_b))
            methods["minhash+matrix"].scores[q.id] = scores
            methods["minhash+matrix"].found[q.id] = kept
            methods["minhash+matrix"].seconds += charged[0] + t_mh
        if (n + 1) % 500 == 0:
            print(f"  {n + 1}/{len(queries)} queries", flush=True)

    rk = np.array([r for r, _ in ranks.values()])
    cov = np.array([c for r, c in ranks.values() if r >= 0])
    print(f"expected document among the part candidates: {np.mean(rk >= 0):.3f}; rank 0 / <3 / <10: "
          f"{np.mean(rk == 0):.3f} / {np.mean((rk >= 0) & (rk < 3)):.3f} / {np.mean((rk >= 0) & (rk < 10)):.3f}; "
          f"its coverage 1st / 5th percentile / median: {np.percentile(cov, 1):.3f} / {np.percentile(cov, 5):.3f} / {np.median(cov):.3f}")
    if args.out:  # everything the report needs, to re-run it alone
        import pickle

        args.out.mkdir(parents=True, exist_ok=True)
        with open(args.out / "multilevel.pkl", "wb") as f:
            pickle.dump((queries, methods, family, {**index, **foreign}), f)
    report(queries, methods, family, {**index, **foreign}, cmp, args)


def correct(q: Query, hit: str, family: dict[str, frozenset[str]]) -> bool:
    """A labelled copy: the hit was made from something the query was made from."""
    return bool(q.family & family.get(hit, frozenset()))


def report(queries: list[Query], methods: dict[str, Method], family: dict[str, frozenset[str]], texts: dict[str, str], cmp, args) -> None:  # type: ignore[no-untyped-def]
    edits = list(dict.fromkeys(q.edit for q in queries))
    by_edit: dict[str, list[Query]] = defaultdict(list)
    for q in queries:
        by_edit[q.edit].append(q)
    names = list(methods)
    res: dict = {"args": {k: str(v) for k, v in vars(args).items()}, "queries": len(queries), "methods": {}}
    related_cache: dict[tuple[str, str], bool] = {}

    def related(hit: str, q: Query) -> bool:
        # The hit was already a copy (>= half of one side, by the matrix) of a document the query came from.
        for origin in q.origins:
            k = (hit, origin)
            if k not in related_cache:
                c = cmp(texts[origin], texts[hit])
                related_cache[k] = max(c.similarity_a, c.similarity_b) >= 0.5
            if related_cache[k]:
                return True
        return False

    default = MultiParams().partial_threshold
    print(f"\npartial_threshold {default} (swept below), passage_units {args.passage_units}, "
          f"passage_gap {args.passage_gap}")

    def at(m: Method, threshold: float) -> dict[str, list[str]]:
        if not m.scores:
            return m.found
        return {
            q: [h for h, kind, cq, cm, _, _ in rows if kind == "near-duplicate" or max(cq, cm) >= threshold]
            for q, rows in m.scores.items()
        }

    sweep = {}
    for t in sorted({args.sweep_from, 0.2, 0.25, 0.3, 0.4, 0.5, default}):
        found = at(methods["multilevel"], t)
        hits = [(q, h) for q in queries for h in found.get(q.id, [])]
        sweep[f"{t:.2f}"] = {
            "recall_all": float(np.mean([q.expected in found.get(q.id, []) for q in queries])),
            "recall_contain30": float(np.mean([q.expected in found.get(q.id, []) for q in queries if q.edit.startswith("contain 30")])),
            "precision": float(np.mean([correct(q, h, family) for q, h in hits])),
            "precision_related": float(np.mean([correct(q, h, family) or related(h, q) for q, h in hits])),
        }
    print("\nmultilevel by partial threshold: recall all, recall contain 30 %, precision, precision (related)")
    for t, v in sweep.items():
        print(f"  {t}{'*' if t == f'{default:.2f}' else ' '}  " + "  ".join(f"{x:.3f}" for x in v.values()))
    res["sweep"] = sweep

    for name, m0 in methods.items():
        m = Method(name, at(m0, default), seconds=m0.seconds)
        recall = {e: float(np.mean([q.expected in m.found.get(q.id, []) for q in by_edit[e]])) for e in edits}
        overall = float(np.mean([q.expected in m.found.get(q.id, []) for q in queries]))
        hits = [(q, h) for q in queries for h in m.found.get(q.id, [])]
        ok = [correct(q, h, family) for q, h in hits]
        ok_rel = [o or related(h, q) for (q, h), o in zip(hits, ok)]
        res["methods"][name] = {
            "recall": recall,
            "recall_all": overall,
            "hits": len(hits),
            "precision": float(np.mean(ok)) if hits else float("nan"),
            "precision_related": float(np.mean(ok_rel)) if hits else float("nan"),
            "ms_per_query": 1000 * m.seconds / len(queries),
            "false_hits": [(q.id, h) for (q, h), o in zip(hits, ok_rel) if not o][:50],
        }
    w = max(len(e) for e in edits) + 2
    print("\nrecall by edit (n queries)".ljust(w + 6) + "".join(f"{n:>16}" for n in names))
    for e in edits:
        print(f"{e:<{w}}{len(by_edit[e]):>5} " + "".join(f"{res['methods'][n]['recall'][e]:>16.3f}" for n in names))
    for label, key, fmt in (
        ("all copies", "recall_all", "{:>16.3f}"),
        ("hits", "hits", "{:>16d}"),
        ("precision", "precision", "{:>16.3f}"),
        ("precision (related)", "precision_related", "{:>16.3f}"),
        ("ms per query", "ms_per_query", "{:>16.1f}"),
    ):
        print(f"{label:<{w + 6}}" + "".join(fmt.format(res["methods"][n][key]) for n in names))
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "multilevel.json").write_text(json.dumps(res, ensure_ascii=False, indent=1))


if __name__ == "__main__":
    main()
