"""Retrieval of copied documents through the real pipeline, beside MinHash LSH.

What it measures
----------------
One embedded store (a temporary folder) is filled with ``simdup_es.indexer.index_items``
as ``simdup index`` fills it: the Chinese corpus (data/zh-docs.jsonl, less a held-out
pool whose text makes hosts and inserted sentences), the English man pages
(en-docs.jsonl), and the documents made below. The corpus keeps what the packages ship:
translation footers, credits, navigation lines and template sentences, the common text
real collections are full of (benchmarks/fetch_corpus.py). Every query then goes through
``simdup_es.search.find_copies`` (default ``MultiParams``, ``limit`` 100 so recall
measures the retrieval, not the display cut; the query's own stored copy left out). The
peer is MinHash LSH (datasketch, threshold 0.5, 128 permutations; jieba words for
Chinese, character 5-grams for English) over the same stored documents and queries.

Rows (recall = share of the labelled (query, target) pairs whose target was found):

- ``copies-of-source``: a modern-prose source (man pages, LibreOffice help, Debian
  manuals; no verse) with 8-12 edited copies stored, each copy one edit: 10-30 % of
  the sentences replaced / deleted / inserted, paragraphs reordered, light Cilin
  synonyms, one word changed in every sentence, boilerplate head and tail. The source
  asks; its copies are the targets. ``copy-finds-source``: two copies of each ask for
  the source.
- ``passage-10/30/60``: a contiguous passage of 10 / 30 / 60 % of the same sources
  (line breaks kept) pasted at a line break into a longer held-out document of another
  family; the host is stored, and so are the source's copies (a widely copied text).
  ``host->source``: the host asks for the source; ``source->host``: the source asks
  for the host.
- ``widely-copied *``: 40 more such sources with 30-40 edited copies each (where the
  copy count of a text must not hide it: boilerplate is what unrelated pages share, not
  what many copies share) and a 20 % passage of each in a host; the source asks for its
  copies and its host, the host for the source.
- ``short-*``: 40-160 character pieces of corpus paragraphs (microblog-sized), each
  stored among short distractors of other documents; the edited piece asks for it:
  one or two characters replaced, one clause deleted, an emoji and ``#话题#``
  appended, a ``转发微博 //@name:`` repost prefix, OpenCC s2twp.
- ``word-every-sentence``: one word of every sentence of a longer source replaced by
  another word; ``traditional``: a source in OpenCC s2twp; ``man-tw``: a real zh_TW
  man page asks for its zh_CN page.
- ``licences``: 20-40 licences of the SPDX list (en-licences.jsonl, built by
  benchmarks/fetch_corpus.py) of varied length, 20-30 variants each (holder and
  year filled in, lines re-wrapped, a sentence deleted or replaced, words changed),
  all stored, with every other SPDX licence text as distractors. Each variant asks for
  every other stored text of its family; SPDX licences sharing at least half of the
  smaller one's character 8-shingles (BSD variants, GPL-2.0-only / -or-later) are one
  family.
- ``mosaic (one sentence per source)``: a text made of 6 single verbatim sentences of
  20-60 characters, each from a different stored document of another family (a sentence
  no other corpus document holds); it asks for each of the 6 (recall per source).
- ``held-30`` / ``held-100``: a paragraph (80-200 characters, two sentences or more, no
  other corpus document holds it) of a stored document pasted into 30 (100) hosts, each
  the first lines of a held-out document, 0.25 to 20 paragraph lengths of them
  (log-uniform: the paragraph is 5 % to 80 % of its host). The source asks for its hosts,
  each host for the source; recall is also given by the paragraph's share of the host, to
  show where a widely copied paragraph stops being found.
- ``template-only`` (no targets): held-out corpus pages carrying at least 20 characters
  of common text (a footer, a navigation line, a template sentence) ask; every hit of
  theirs the oracle rejects while the two share common text and no rare run of 13
  characters (CNKI's shortest copied sentence) is a *template-only* hit (the goal is none).

Labels: a hit is correct (``strict``) when it was made from what the query was made
from: the same source (its copies, the hosts holding its passage), for a host also the
hosts of other sources built around the same held-out document, for a man page any
piece or form of the same page, for a licence its family, for a held row's host the
source and the other hosts. The ``oracle`` (benchmarks/copy_oracle.py) also counts a hit
as correct when at least 20 % of the smaller side's character 8-shingles are in the other,
or when the two texts share a run of at least 30 characters whose every 8-shingle is held
by at most max(10, 1 % of the stored documents) stored documents (texts unified, white
space removed; frequencies counted once over the run's stored corpus): the corpus holds
copies of its own (one help page in two modules, a sentence quoted in many pages), and
text many documents hold (common text) never makes a copy. ``share rule alone`` is the
oracle before this one (the 20 % rule only). Precision is over all hits of all queries,
and again without the held rows' queries (their hosts find each other: a hundred labelled
hits each). Also counted: the wrong hits that share common text with their query, and
the ``near-duplicate`` claims whose comparison shares nothing (``copied_query`` and
``copied_match`` both 0) or that the oracle rejects. Beside each row, the median share the
oracle would see in its labelled pairs (and how many are under 20 %); beside precision,
the median share of the hits the oracle rejects. Time per query is one process, wall
clock: ``find_copies`` for simdup (fingerprint, levels, store lookups, comparison
matrix); MinHash of the query plus the LSH lookup for MinHash.

How to run, and how long it takes (shared 2-core machine)
---------------------------------------------------------

    SIMDUP_DATA=/work/main/data python benchmarks/eval_copies.py --seed 7 --out results/copies
    SIMDUP_DATA=/work/main/data python benchmarks/eval_copies.py --quick   # smoke test
    SIMDUP_DATA=/work/main/data python benchmarks/eval_copies.py --store DIR --reuse --params '{"short_units": 20}'

The default (8,695 queries, 17,900 stored documents) takes 5-17 minutes depending on the
machine's load, ``--quick`` about 2. ``--store DIR`` keeps the store, ``--reuse`` queries it
again (a change to search or judging, not to fingerprints), ``--params`` changes MultiParams.
Prints the table to stdout, progress to stderr, and with ``--out`` writes copies.json (every figure), misses.jsonl (the missed targets, for
reading) and hits.json (every query's hits by method; simdup's kind, distance and copied shares
of each). Deterministic for a seed.

Precision is also given by what the query asks for (its rows), to show where the hits
outside a query's family come from.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import sys
import tempfile
import textwrap
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import copy_oracle  # noqa: E402
import eval_multilevel  # noqa: E402
import quality_set  # noqa: E402
from quality_set import Piece, Source, assemble, make_source  # noqa: E402

from simdup_es.text import unify  # noqa: E402

DATA = Path(os.environ.get("SIMDUP_DATA") or ROOT / "data")
LIMIT = 100
SHORT = (40, 160)  # characters of a short text
ORACLE_SHARE = 0.2
SHINGLE = 8
LICENCE_FAMILY_SHARE = 0.5
ROWS = (
    "copies-of-source", "copy-finds-source",
    "passage-10 host->source", "passage-10 source->host",
    "passage-30 host->source", "passage-30 source->host",
    "passage-60 host->source", "passage-60 source->host",
    "widely-copied copies-of-source", "widely-copied passage-20 host->source", "widely-copied passage-20 source->host",
    "short-1char", "short-2char", "short-clause-deleted", "short-emoji-hashtag", "short-repost", "short-traditional",
    "word-every-sentence", "traditional", "man-tw", "licences",
    "mosaic (one sentence per source)",
    "held-30 source->host", "held-30 host->source", "held-100 source->host", "held-100 host->source",
)
TEMPLATE = "template:"  # id prefix of the template-only queries (no targets: every hit sharing only common text is wrong)
MOSAIC = (6, (20, 60))  # sources per mosaic, characters of each sentence
HELD = (30, 100)  # a paragraph held by this many stored hosts
HOST_RATIO = (0.25, 20.0)  # a host's own text, in lengths of the paragraph (log-uniform): the paragraph is 5-80 %
SHARE_BINS = (0.0, 0.1, 0.2, 0.3, 0.5, 1.01)  # the paragraph's share of its host, for the held rows
COPY_EDITS = ("replace", "delete", "insert", "reorder", "synonyms", "word-every-sentence", "boilerplate")
PASSAGES = (0.1, 0.3, 0.6)

SIZES = {  # default, --quick
    "sources": (150, 30),  # copies-of-source and passage sources
    "widely": (40, 8),  # sources with 30-40 copies each, and a passage of each in a host
    "short": (1000, 150),
    "distractors": (5000, 800),
    "word": (150, 30),
    "traditional": (150, 30),
    "man": (100, 20),
    "licences": (30, 10),
    "variants": (25, 20),
    "foreign": (400, 120),
    "template": (150, 30),  # held-out pages carrying common text, asking
    "mosaic": (120, 20),
    "held-30": (3, 1),  # paragraphs held by 30 hosts
    "held-100": (2, 1),
}

# ------------------------------------------------------------------ pure helpers

_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_SPACE = re.compile(r"\s+")


def cjk_share(text: str) -> float:
    """CJK characters / non-space characters."""
    chars = _SPACE.sub("", text)
    return len(_CJK.findall(chars)) / len(chars) if chars else 0.0


def shingles(text: str, n: int = SHINGLE) -> set[str]:
    """Character n-grams of the text without whitespace (the whole text if shorter)."""
    s = _SPACE.sub("", text)
    if len(s) <= n:
        return {s} if s else set()
    return {s[i : i + n] for i in range(len(s) - n + 1)}


def shared_share(a: set[str], b: set[str]) -> float:
    """Share of the smaller set found in the other."""
    if not a or not b:
        return 0.0
    small, big = (a, b) if len(a) <= len(b) else (b, a)
    return sum(1 for x in small if x in big) / len(small)


def oracle_copy(a: set[str], b: set[str], share: float = ORACLE_SHARE) -> bool:
    """The oracle's rule: at least ``share`` of the smaller side's shingles are shared."""
    return shared_share(a, b) >= share


_SENT_END = re.compile(r"(?<=[。！？!?；;])")


def short_cuts(text: str, lo: int = SHORT[0], hi: int = SHORT[1], min_cjk: float = 0.5) -> list[str]:
    """Microblog-sized pieces of a document: its lines of ``lo``..``hi`` characters, and
    longer lines cut at sentence ends into such pieces; mostly Chinese ones only."""
    out = []
    for line in text.split("\n"):
        line = line.strip()
        if len(line) < lo:
            continue
        if len(line) <= hi:
            pieces = [line]
        else:
            pieces, cur = [], ""
            for sent in (s for s in _SENT_END.split(line) if s):
                if len(cur) + len(sent) > hi:
                    if lo <= len(cur) <= hi:
                        pieces.append(cur)
                    cur = ""
                cur += sent
            if lo <= len(cur.strip()) <= hi:
                pieces.append(cur.strip())
        out += [p.strip() for p in pieces if lo <= len(p.strip()) <= hi and cjk_share(p) >= min_cjk]
    return out


def replace_chars(text: str, k: int, rng: random.Random, alphabet: str) -> str:
    """``k`` CJK characters of ``text`` (distinct positions) each replaced by another CJK
    character of ``alphabet``: the same length, exactly ``k`` positions differ."""
    spots = [i for i, c in enumerate(text) if _CJK.match(c)]
    chars = list(text)
    for i in rng.sample(spots, min(k, len(spots))):
        new = chars[i]
        while new == chars[i]:
            new = rng.choice(alphabet)
        chars[i] = new
    return "".join(chars)


_CLAUSE_END = re.compile(r"(?<=[，。；：！？、,;:!?])")


def clauses(text: str) -> list[str]:
    """The text cut after each Chinese (or ASCII) clause punctuation mark; they join back to it."""
    return [c for c in _CLAUSE_END.split(text) if c]


def delete_clause(text: str, rng: random.Random) -> str | None:
    """The text with one of its clauses (not the only one, not all of it) removed; ``None``
    when it has a single clause. Keeps a final full stop if the last clause went."""
    parts = clauses(text)
    if len(parts) < 2:
        return None
    k = rng.randrange(len(parts))
    out = "".join(parts[:k] + parts[k + 1 :])
    if k == len(parts) - 1 and out.endswith(("，", ",", "、", "；", ";", "：", ":")):
        out = out[:-1] + "。"
    return out


EMOJI = ("😂", "👍", "🔥", "😭", "❤️", "🙏", "😅", "🎉", "👀", "💯", "🤔", "😊")
TOPICS = ("#每日分享#", "#科技#", "#学习笔记#", "#干货#", "#生活小技巧#", "#办公技巧#", "#开源#", "#转发抽奖#")
NAMES = ("小明同学", "技术宅", "每日一读", "开源爱好者", "Linux中文社区", "夜猫子", "阿强", "数码控2024")


def emoji_hashtag(text: str, rng: random.Random) -> str:
    """The text, then one to three emoji and a ``#话题#`` topic."""
    return text + "".join(rng.choice(EMOJI) for _ in range(rng.randint(1, 3))) + " " + rng.choice(TOPICS)


def repost(text: str, rng: random.Random) -> str:
    """A Weibo repost: ``转发微博 //@name: `` before the text."""
    return f"转发微博 //@{rng.choice(NAMES)}: {text}"


def change_one_word(sentence: str, segment: Callable[[str], list[str]], is_word: Callable[[str], bool],
                    vocab: Sequence[str], rng: random.Random) -> str:
    """``sentence`` with one of its words (by ``segment``, one ``is_word`` says is a word)
    replaced by another word of ``vocab`` (of the same length when there is one); the
    sentence unchanged when it has no such word."""
    tokens = segment(sentence)
    spots = [i for i, t in enumerate(tokens) if is_word(t)]
    if not spots:
        return sentence
    i = rng.choice(spots)
    same = [w for w in vocab if len(w) == len(tokens[i]) and w != tokens[i]]
    choices = same or [w for w in vocab if w != tokens[i]]
    if not choices:
        return sentence
    tokens[i] = rng.choice(choices)
    return "".join(tokens)


def passage_run(src: Source, frac: float, rng: random.Random) -> list[int]:
    """Consecutive sentence indices of ``src`` holding at least ``frac`` of its units (the
    fewest from a random start that gets there; from the start if none does)."""
    n, want = len(src.sentences), frac * src.n_units
    starts = list(range(n))
    rng.shuffle(starts)
    for at in starts + [0]:
        got, run = 0, []
        for k in range(at, n):
            run.append(k)
            got += src.sentences[k].n_units
            if got >= want:
                return run
    return list(range(n))


def paste_passage(src: Source, frac: float, host: Source, rng: random.Random) -> tuple[str, list[int]]:
    """``host`` with a contiguous passage of ``frac`` of ``src`` (line breaks kept) pasted at
    one of its line breaks; and the passage's sentence indices."""
    run = passage_run(src, frac, rng)
    body = [Piece(s.text, host.seps[i] or "\n", False) for i, s in enumerate(host.sentences)]
    cuts = [i + 1 for i, p in enumerate(body[:-1]) if "\n" in p.sep] or [max(1, len(body) // 2)]
    cut = rng.choice(cuts)
    pasted = [Piece(src.sentences[k].text, src.seps[k], True) for k in run]  # its own line breaks
    pasted[-1] = Piece(pasted[-1].text, "\n", True)  # and it ends a line in the host
    return assemble(body[:cut] + pasted + body[cut:])[0], run


# ---- licences

HOLDERS = ("Acme Corporation", "Zhang Wei", "The Foo Project Authors", "Jane Doe", "Example Software Foundation",
           "Initech, Inc.", "Li Na and contributors", "Globex Labs", "Hooli Open Source", "Max Mustermann",
           "Umbrella Research Ltd.", "the OpenWidget developers")
_PLACEHOLDER = re.compile(r"<[^<>\n]{0,60}[A-Za-z][^<>\n]{0,60}>|\[[^\[\]\n]{0,60}[A-Za-z][^\[\]\n]{0,60}\]")
_COPYRIGHT_LINE = re.compile(r"^.*\bcopyright\b.*\b(\d{4}|<year>|\[yyyy\]|yyyy|holder|owner|author).*$", re.I | re.M)


def fill_placeholders(text: str, rng: random.Random) -> tuple[str, str, int]:
    """Template fields (``<year>``, ``[name of copyright owner]``, ...) filled in with a year
    or a holder, and a copyright line naming them (one that is there replaced, or one put
    on top); the text, the holder and the year."""
    year, holder = rng.randint(1995, 2024), rng.choice(HOLDERS)

    def fill(m: re.Match[str]) -> str:
        inner = m.group(0).lower()
        return str(year) if "year" in inner or "yyyy" in inner else holder

    out = _PLACEHOLDER.sub(fill, text)
    line = f"Copyright (c) {year} {holder}"
    if _COPYRIGHT_LINE.search(out[:600]):
        out = _COPYRIGHT_LINE.sub(line, out, count=1)
    else:
        out = f"{line}\n\n{out}"
    return out, holder, year


def rewrap(text: str, width: int) -> str:
    """Paragraphs (blank-line separated) re-wrapped at ``width`` columns: the words and
    their order unchanged."""
    paras = re.split(r"\n\s*\n", text)
    return "\n\n".join(textwrap.fill(" ".join(p.split()), width) for p in paras if p.strip())


_EN_SENT = re.compile(r"(?<=[.;])\s+(?=[A-Z(\"'0-9])")


def en_sentences(text: str) -> list[str]:
    """The text cut after ``.`` or ``;`` before a capital, digit or quote; the pieces keep
    their whitespace, so they join back to the text."""
    out, at = [], 0
    for m in _EN_SENT.finditer(text):
        out.append(text[at : m.end()])
        at = m.end()
    out.append(text[at:])
    return [s for s in out if s]


def delete_sentence(text: str, rng: random.Random) -> str:
    """One sentence (not the first) removed."""
    sents = en_sentences(text)
    if len(sents) < 3:
        return text
    k = rng.randrange(1, len(sents))
    return "".join(sents[:k] + sents[k + 1 :])


def replace_sentence(text: str, other: str, rng: random.Random) -> str:
    """One sentence (not the first) replaced by a sentence of ``other``."""
    sents, theirs = en_sentences(text), [s for s in en_sentences(other) if len(s.split()) >= 5]
    if len(sents) < 3 or not theirs:
        return text
    k = rng.randrange(1, len(sents))
    tail = sents[k][len(sents[k].rstrip()) :]
    sents[k] = rng.choice(theirs).strip() + (tail or " ")
    return "".join(sents)


_EN_WORD = re.compile(r"\b[A-Za-z]{4,}\b")


def change_words(text: str, share: float, rng: random.Random) -> str:
    """About ``share`` of the words of 4 letters or more replaced by another such word of the text."""
    words = [m for m in _EN_WORD.finditer(text)]
    vocab = sorted({m.group(0) for m in words})
    if len(vocab) < 2:
        return text
    pick = set(rng.sample(range(len(words)), max(1, round(share * len(words)))))
    out, at = [], 0
    for i, m in enumerate(words):
        if i in pick:
            new = m.group(0)
            while new == m.group(0):
                new = rng.choice(vocab)
            out += [text[at : m.start()], new]
            at = m.end()
    out.append(text[at:])
    return "".join(out)


def licence_variant(text: str, others: Sequence[str], rng: random.Random) -> tuple[str, list[str]]:
    """A licence as a project ships it: fields filled in, then one to three of: lines
    re-wrapped, a sentence deleted, a sentence replaced (from ``others``), 1-4 % of the
    words changed. The text and the edits made."""
    out, _, _ = fill_placeholders(text, rng)
    edits = ["fill"]
    for edit in rng.sample(("rewrap", "delete", "replace", "words"), rng.randint(1, 3)):
        edits.append(edit)
        if edit == "rewrap":
            out = rewrap(out, rng.choice((60, 66, 72, 76, 80, 100)))
        elif edit == "delete":
            out = delete_sentence(out, rng)
        elif edit == "replace":
            out = replace_sentence(out, rng.choice(others), rng)
        else:
            out = change_words(out, rng.uniform(0.01, 0.04), rng)
    return out, edits


def licence_families(texts: dict[str, str], share: float = LICENCE_FAMILY_SHARE, n: int = SHINGLE,
                     max_ratio: float = 2.0) -> dict[str, str]:
    """Each id's family (the least id of it): two texts of similar length (at most
    ``max_ratio`` times the shingles of the other) sharing at least ``share`` of the
    smaller one's character ``n``-shingles (lower case, whitespace removed) are joined,
    transitively. The length bound keeps a short notice quoted inside a long licence from
    chaining unrelated licences into one family (the oracle counts such hits)."""
    import xxhash

    ids = sorted(texts)
    arr = {i: np.array(sorted({xxhash.xxh64_intdigest(s.encode()) for s in shingles(texts[i].lower(), n)}), dtype=np.uint64)
           for i in ids}
    parent = {i: i for i in ids}

    def root(i: str) -> str:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    order = sorted(ids, key=lambda i: (len(arr[i]), i))
    for x, a in enumerate(order):
        for b in order[x + 1 :]:
            if len(arr[b]) > max_ratio * len(arr[a]):
                break
            if root(a) != root(b) and np.intersect1d(arr[a], arr[b], assume_unique=True).size >= share * len(arr[a]):
                ra, rb = root(a), root(b)
                parent[max(ra, rb)] = min(ra, rb)
    return {i: root(i) for i in ids}


# ---- MinHash tokens


def minhash_tokens(text: str) -> set[str]:
    """jieba words (letters, digits or CJK) for Chinese; character 5-grams of the lower-cased,
    space-collapsed text for English."""
    if cjk_share(text) >= 0.2:
        import rjieba

        return {w for w in rjieba.cut(text) if re.search(r"\w", w)}
    s = " ".join(text.lower().split())
    return {s[i : i + 5] for i in range(max(1, len(s) - 4))}


def minhash(text: str):  # type: ignore[no-untyped-def]
    """The peer's MinHash of a text (128 permutations over :func:`minhash_tokens`)."""
    import xxhash
    from datasketch import MinHash

    m = MinHash(num_perm=128, hashfunc=xxhash.xxh32_intdigest)
    m.update_batch([w.encode() for w in minhash_tokens(text)])
    return m


# ------------------------------------------------------------------ the set


@dataclass
class Query:
    id: str
    text: str
    family: frozenset[str]  # what it was made from (tags)
    targets: dict[str, list[str]]  # row -> stored ids it must find
    exclude: str | None = None  # its own stored copy
    limit: int = LIMIT  # of find_copies: more for a text held by more hosts than LIMIT


@dataclass
class Corpus:
    stored: dict[str, str] = field(default_factory=dict)  # id -> text (as indexed)
    tags: dict[str, frozenset[str]] = field(default_factory=dict)  # id -> what it was made from
    queries: list[Query] = field(default_factory=list)
    share: dict[str, float] = field(default_factory=dict)  # a held row's host -> the paragraph's share of it

    def put(self, doc_id: str, text: str, tags: Iterable[str]) -> None:
        assert doc_id not in self.stored, doc_id
        self.stored[doc_id] = text
        self.tags[doc_id] = frozenset(tags)


def _family_of(doc_id: str) -> str:
    prefix, _, rest = doc_id.partition(":")
    return f"{prefix}:{rest.split('/')[0].split('#')[0]}"


def _hosts_for(src: Source, foreign: list[Source]) -> list[Source]:
    """Held-out documents of another family that can take a passage of ``src``: as long, or else the 20 longest."""
    fits = [f for f in foreign if _family_of(f.id) != _family_of(src.id) and f.n_units >= src.n_units]
    return fits or sorted((f for f in foreign if _family_of(f.id) != _family_of(src.id)), key=lambda f: -f.n_units)[:20]


def _corpus_tags(doc_id: str) -> set[str]:
    return {doc_id, "page:" + doc_id.split("#")[0]} if doc_id.startswith("zh-man:") else {doc_id}


def build(seed: int, size: dict[str, int], log: Callable[[str], None]) -> Corpus:
    import opencc
    import rjieba

    from simdup_es.thesaurus import cilin_thesaurus
    from simdup_es.tokens import is_content_word

    s2twp = opencc.OpenCC("s2twp")
    rng = random.Random(seed)
    docs = sorted((json.loads(line) for line in open(DATA / "zh-docs.jsonl", encoding="utf-8")), key=lambda d: d["id"])
    modern = [d for d in docs if d["id"].startswith(tuple(p + ":" for p in quality_set.MODERN))]
    rng.shuffle(modern)
    pools: dict[str, list[Source]] = {k: [] for k in ("foreign", "sources", "widely", "word", "traditional")}
    rest: list[dict] = []
    for d in modern:
        src = make_source(d["id"], d["text"])
        n = len(src.sentences)
        if len(pools["foreign"]) < size["foreign"] and n >= 3:
            pools["foreign"].append(src)
        elif len(pools["sources"]) < size["sources"] and n >= 10 and src.n_units <= 6000:
            pools["sources"].append(src)
        elif len(pools["widely"]) < size["widely"] and n >= 10 and src.n_units <= 6000:
            pools["widely"].append(src)
        elif len(pools["word"]) < size["word"] and n >= 8:
            pools["word"].append(src)
        elif len(pools["traditional"]) < size["traditional"] and n >= 3:
            pools["traditional"].append(src)
        else:
            rest.append(d)
    zh_texts, zh_index = zh_shingle_index(docs)
    picks = pick_common(rest, zh_texts, zh_index, size, rng)
    rest = picks.rest
    log(f"pools: {', '.join(f'{k} {len(v)}' for k, v in pools.items())}; {len(rest)} documents left for short texts")
    foreign = pools["foreign"]
    held_out = {f.id for f in foreign} | picks.held_out()
    raw = {d["id"]: d["text"] for d in docs}
    c = Corpus()
    for d in docs:
        if d["id"] not in held_out:
            c.put(d["id"], d["text"], _corpus_tags(d["id"]))
    for line in open(DATA / "en-docs.jsonl", encoding="utf-8"):
        d = json.loads(line)
        c.put(d["id"], d["text"], {d["id"]})

    # ---- copies of a source, and passages of it in hosts
    # Every token (words, function words, punctuation, spaces: they join back to the sentence),
    # as jieba's dictionary cuts it; dictionary_words keeps the content words alone.
    segment = lambda s: rjieba.cut(s, False)  # noqa: E731
    editor = quality_set.SynonymEditor(cilin_thesaurus(), segment)
    is_word = lambda t: is_content_word(t) and _CJK.search(t) is not None  # noqa: E731 - Chinese words
    vocab = sorted({w for f in foreign for w in segment(f.text) if is_word(w)})
    # Then the widely copied sources: the more a text is copied, the more its copies must still be found.
    for pool, prefix, n_range, fracs, askers in (("sources", "", (8, 12), PASSAGES, 2),
                                                 ("widely", "widely-copied ", (30, 40), (0.2,), 0)):
        n_copies = 0
        for src in pools[pool]:
            r = random.Random(f"{seed}:{'copies' if pool == 'sources' else pool}:{src.id}")
            tags = c.tags[src.id]
            copies = [f"{src.id}~copy{k}" for k in range(r.randint(*n_range))]
            for cid in copies:
                c.put(cid, make_copy(src, r.choice(COPY_EDITS), r, foreign, editor, segment, is_word, vocab), tags)
            n_copies += len(copies)
            targets: dict[str, list[str]] = {prefix + "copies-of-source": copies}
            fits = _hosts_for(src, foreign)
            for frac in fracs:
                pct = round(frac * 100)
                host = r.choice(fits)
                hid = f"{src.id}~host{pct}"
                text, _ = paste_passage(src, frac, host, r)
                c.put(hid, text, tags | {"host:" + host.id})
                targets[f"{prefix}passage-{pct} source->host"] = [hid]
                c.queries.append(Query(hid, text, c.tags[hid], {f"{prefix}passage-{pct} host->source": [src.id]},
                                       exclude=hid))
            c.queries.append(Query(src.id, raw[src.id], frozenset(tags), targets, exclude=src.id))
            for cid in r.sample(copies, askers):
                c.queries.append(Query(cid, c.stored[cid], frozenset(tags), {"copy-finds-source": [src.id]}, exclude=cid))
        log(f"{len(pools[pool])} {pool} sources with {n_copies} copies and {len(fracs) * len(pools[pool])} hosts")

    # ---- short texts
    short_rows = ("short-1char", "short-2char", "short-clause-deleted", "short-emoji-hashtag", "short-repost",
                  "short-traditional")
    order = list(range(len(rest)))
    rng.shuffle(order)
    n_src = size["short"]
    alphabet = "".join(sorted({ch for i in order[-300:] for ch in rest[i]["text"] if _CJK.match(ch)}))
    made, used = 0, 0  # short sources made, documents used for them
    for i in order:
        if made >= n_src:
            break
        d = rest[i]
        used += 1
        r = random.Random(f"{seed}:short:{d['id']}")
        cuts = [t for t in short_cuts(d["text"]) if len(clauses(t)) >= 2]
        if not cuts:
            continue
        text = r.choice(cuts)
        sid = f"short:{made}"
        c.put(sid, text, {sid})
        family = frozenset({sid} | _corpus_tags(d["id"]))
        edits = {
            "short-1char": replace_chars(text, 1, r, alphabet),
            "short-2char": replace_chars(text, 2, r, alphabet),
            "short-clause-deleted": delete_clause(text, r),
            "short-emoji-hashtag": emoji_hashtag(text, r),
            "short-repost": repost(text, r),
            "short-traditional": s2twp.convert(text),
        }
        for row in short_rows:
            c.queries.append(Query(f"{sid}~{row}", edits[row], family, {row: [sid]}))  # type: ignore[arg-type]
        made += 1
    dis_docs = [rest[i] for i in order[used:]]
    pool = [(d["id"], t) for d in dis_docs for t in short_cuts(d["text"])]
    rng.shuffle(pool)
    for k, (_, t) in enumerate(pool[: size["distractors"]]):
        c.put(f"shortd:{k}", t, {f"shortd:{k}"})
    log(f"{made} short sources, {min(len(pool), size['distractors'])} short distractors (of {len(pool)} pieces)")

    # ---- one word in every sentence, traditional script, man pages in zh_TW
    for src in pools["word"]:
        r = random.Random(f"{seed}:word:{src.id}")
        text = word_every_sentence(src, r, segment, is_word, vocab)
        c.queries.append(Query(f"{src.id}~word", text, frozenset(c.tags[src.id]), {"word-every-sentence": [src.id]}))
    for src in pools["traditional"]:
        c.queries.append(Query(f"{src.id}~tw", s2twp.convert(raw[src.id]), frozenset(c.tags[src.id]), {"traditional": [src.id]}))
    man = [json.loads(line) for line in open(DATA / "manpages-pairs.jsonl", encoding="utf-8")]
    man = sorted((m for m in man if len(m["zh_cn"]) < 8000 and len(m["zh_tw"]) < 8000), key=lambda m: m["id"])
    for m in rng.sample(man, min(size["man"], len(man))):
        page = "page:zh-man:" + m["id"].split(":", 1)[1]
        cn = f"{m['id']}:cn"
        c.put(cn, m["zh_cn"], {page})
        c.queries.append(Query(f"{m['id']}:tw", m["zh_tw"], frozenset({page}), {"man-tw": [cn]}))

    # ---- licences, and the rows of common text
    build_licences(c, seed, size["licences"], size["variants"], log)
    add_common_rows(c, picks, seed, log)
    return c


def make_copy(src: Source, edit: str, r: random.Random, foreign: list[Source], editor: quality_set.SynonymEditor,
              segment: Callable[[str], list[str]], is_word: Callable[[str], bool], vocab: Sequence[str]) -> str:
    """One edited copy of ``src``."""
    frac = r.uniform(0.1, 0.3)
    if edit == "replace":
        return eval_multilevel.edit_replace(src, frac, foreign, r)
    if edit == "insert":
        return eval_multilevel.edit_insert(src, frac, foreign, r)
    if edit == "boilerplate":
        return eval_multilevel.boilerplate(src, r)
    if edit == "word-every-sentence":
        return word_every_sentence(src, r, segment, is_word, vocab)
    if edit == "delete":
        pieces, _ = quality_set.edit_delete(src, frac, r)
    elif edit == "reorder":
        pieces, _ = quality_set.edit_reorder(src, "medium", r)
    elif edit == "synonyms":
        pieces, _ = quality_set.edit_synonyms(src, "light", editor, r)
    else:
        raise ValueError(edit)
    return assemble(pieces)[0]


def word_every_sentence(src: Source, r: random.Random, segment: Callable[[str], list[str]],
                        is_word: Callable[[str], bool], vocab: Sequence[str]) -> str:
    pieces = [Piece(change_one_word(s.text, segment, is_word, vocab, r), src.seps[k], True)
              for k, s in enumerate(src.sentences)]
    return assemble(pieces)[0]


def build_licences(c: Corpus, seed: int, n: int, n_variants: int, log: Callable[[str], None]) -> None:
    path = DATA / "en-licences.jsonl"
    if not path.exists():
        log(f"no {path}: licences left out (python benchmarks/fetch_corpus.py --only en-licences.jsonl)")
        return
    lic = {d["id"]: d["text"] for d in map(json.loads, open(path, encoding="utf-8")) if len(d["text"]) >= 300}
    t0 = time.perf_counter()
    fam = licence_families(lic)
    members: dict[str, list[str]] = defaultdict(list)
    for i in sorted(fam):
        members[fam[i]].append(i)
    log(f"{len(lic)} licence texts in {len(members)} families ({time.perf_counter() - t0:.0f} s)")
    rng = random.Random(f"{seed}:licences")
    # One licence of each family of at most 8, 700-20,000 characters; spread over the lengths.
    pick = sorted((i for i in lic if 700 <= len(lic[i]) <= 20_000 and len(members[fam[i]]) <= 8), key=lambda i: (len(lic[i]), i))
    chosen: list[str] = []
    bins = np.array_split(np.arange(len(pick)), n)
    used: set[str] = set()
    for b in bins:
        options = [pick[j] for j in b if fam[pick[j]] not in used]
        if options:
            i = rng.choice(options)
            chosen.append(i)
            used.add(fam[i])
    chosen_set = set(chosen)
    for i in sorted(lic):  # every other licence text, as it is published
        if i not in chosen_set:
            c.put(i, lic[i], {"lic-family:" + fam[i]})
    others = [lic[i] for i in sorted(lic) if fam[i] not in used]
    variant_ids: dict[str, list[str]] = {}
    for i in chosen:
        r = random.Random(f"{seed}:licence:{i}")
        ids = []
        for k in range(n_variants):
            vid = f"{i}~v{k}"
            text = lic[i] if k == 0 else licence_variant(lic[i], others, r)[0]
            c.put(vid, text, {"lic-family:" + fam[i]})
            ids.append(vid)
        variant_ids[i] = ids
    for i in chosen:
        family = [j for j in c.stored if c.tags[j] == frozenset({"lic-family:" + fam[i]})]
        for vid in variant_ids[i]:
            c.queries.append(Query(vid, c.stored[vid], c.tags[vid], {"licences": [j for j in family if j != vid]}, exclude=vid))
    log(f"{len(chosen)} licences x {n_variants} variants (lengths {min(len(lic[i]) for i in chosen)}-"
        f"{max(len(lic[i]) for i in chosen)} characters; families of {sum(len(members[fam[i]]) for i in chosen)} SPDX texts)")


# ---- common text: template-only pages, mosaics of single sentences, a paragraph held by many hosts

_SENTENCE = re.compile(r"[^。！？!?\n]*[。！？!?]")


@dataclass
class CommonPicks:
    """What the common-text rows are made of, taken out of the documents left after the pools."""

    template: list[dict] = field(default_factory=list)  # held-out pages holding common text
    mosaics: list[list[tuple[dict, str]]] = field(default_factory=list)  # (source, its sentence) x 6
    held: dict[int, list[tuple[dict, str]]] = field(default_factory=dict)  # copies -> (source, its paragraph)
    hosts: list[dict] = field(default_factory=list)  # held-out documents whose text takes a paragraph
    rest: list[dict] = field(default_factory=list)  # the documents left

    def held_out(self) -> set[str]:
        return {d["id"] for d in self.template + self.hosts}


def zh_shingle_index(docs: Sequence[dict]) -> tuple[dict[str, copy_oracle.Text], copy_oracle.ShingleIndex]:
    """The oracle's texts of the Chinese corpus and how many of its documents hold each shingle."""
    from simdup_es.text import unify_many

    texts = {d["id"]: copy_oracle.Text.of(u) for d, u in zip(docs, unify_many([d["text"] for d in docs]), strict=True)}
    return texts, copy_oracle.ShingleIndex(texts.values())


def common_run(text: copy_oracle.Text, index: copy_oracle.ShingleIndex) -> int:
    """Characters of the longest run of common text (every shingle above ``index.common``) in ``text``."""
    runs = copy_oracle.true_runs(index.frequency(text.hashes) > index.common, 1)
    return max((n for _, n in runs), default=0) + copy_oracle.SHINGLE - 1 if runs else 0


def own_text(piece: str, index: copy_oracle.ShingleIndex) -> bool:
    """Whether no other document of the corpus holds any shingle of ``piece`` (unified)."""
    hashes = copy_oracle.Text.of(unify(piece)).hashes
    return hashes.size > 0 and bool((index.frequency(hashes) <= 1).all())


def rare_sentences(text: str, index: copy_oracle.ShingleIndex, lo: int, hi: int) -> list[str]:
    """The sentences of ``text`` of ``lo``..``hi`` characters, mostly Chinese, that no other document holds."""
    out = []
    for m in _SENTENCE.finditer(text):
        sent = m.group(0).strip()
        if lo <= len(sent) <= hi and cjk_share(sent) >= 0.6 and own_text(sent, index):
            out.append(sent)
    return out


def rare_paragraph(text: str, index: copy_oracle.ShingleIndex) -> str | None:
    """A line of ``text`` of 80-200 characters, two sentences or more, mostly Chinese, that no other document holds."""
    for line in text.split("\n"):
        line = line.strip()
        if 80 <= len(line) <= 200 and len(_SENTENCE.findall(line)) >= 2 and cjk_share(line) >= 0.5 \
                and own_text(line, index):
            return line
    return None


def pick_common(rest: list[dict], texts: Mapping[str, copy_oracle.Text], index: copy_oracle.ShingleIndex,
                size: Mapping[str, int], rng: random.Random) -> CommonPicks:
    """Template pages (a run of at least 20 characters of common text), mosaic sentences from sources of
    different families, paragraphs for the held rows and their host documents, in ``rest``'s order."""
    picks = CommonPicks()
    n_sources, (lo, hi) = MOSAIC
    waiting: list[tuple[dict, str]] = []  # sentences whose family the current mosaic has
    current: list[tuple[dict, str]] = []
    held_need = {n: size[f"held-{n}"] for n in HELD}
    host_need = sum(n * k for n, k in zip(HELD, held_need.values(), strict=True))
    for d in rest:
        if len(picks.template) < size["template"] and common_run(texts[d["id"]], index) >= 20:
            picks.template.append(d)
        elif len(picks.mosaics) < size["mosaic"] and (found := rare_sentences(d["text"], index, lo, hi)):
            waiting.append((d, rng.choice(found)))
            for item in list(waiting):
                if _family_of(item[0]["id"]) not in {_family_of(x["id"]) for x, _ in current}:
                    current.append(item)
                    waiting.remove(item)
                    if len(current) == n_sources:
                        picks.mosaics.append(current)
                        current = []
        elif any(len(picks.held.get(n, [])) < k for n, k in held_need.items()) and (para := rare_paragraph(d["text"], index)):
            n = next(n for n, k in held_need.items() if len(picks.held.get(n, [])) < k)
            picks.held.setdefault(n, []).append((d, para))
        elif len(picks.hosts) < host_need and d["text"].count("\n") >= 2:
            picks.hosts.append(d)
        else:
            picks.rest.append(d)
    picks.rest += [d for d, _ in waiting + current]  # sentences no mosaic took: their documents stay
    return picks


def add_common_rows(c: Corpus, picks: CommonPicks, seed: int, log: Callable[[str], None]) -> None:
    """The template-only queries, the mosaics and the held paragraphs (see the module's docstring)."""
    for d in picks.template:
        c.queries.append(Query(TEMPLATE + d["id"], d["text"], frozenset(_corpus_tags(d["id"])), {}))
    for k, mosaic in enumerate(picks.mosaics):
        text = "".join(sent for _, sent in random.Random(f"{seed}:mosaic:{k}").sample(mosaic, len(mosaic)))
        family = frozenset(t for d, _ in mosaic for t in c.tags[d["id"]])
        c.queries.append(Query(f"mosaic:{k}", text, family, {"mosaic (one sentence per source)": [d["id"] for d, _ in mosaic]}))
    hosts = iter(picks.hosts)
    for n, sources in sorted(picks.held.items()):
        for src, para in sources:
            r = random.Random(f"{seed}:held:{src['id']}")
            held_tag = "held:" + src["id"]
            ids = []
            for j in range(n):
                hid = f"{src['id']}~held{n}-{j}"
                text = host_with(next(hosts)["text"], para, r)
                c.put(hid, text, {held_tag, src["id"]})
                c.share[hid] = len(para) / len(text)
                ids.append(hid)
                c.queries.append(Query(hid, text, c.tags[hid], {f"held-{n} host->source": [src["id"]]}, exclude=hid))
            c.queries.append(Query(f"held{n}:{src['id']}", src["text"], frozenset(c.tags[src["id"]] | {held_tag}),
                                   {f"held-{n} source->host": ids}, exclude=src["id"], limit=LIMIT + n))
    log(f"{len(picks.template)} template-only pages ask; {len(picks.mosaics)} mosaics of {MOSAIC[0]} sentences; "
        f"paragraphs held by {', '.join(f'{n} hosts: {len(v)}' for n, v in sorted(picks.held.items()))}")


def host_with(own: str, para: str, r: random.Random) -> str:
    """A host: about ``HOST_RATIO`` paragraph lengths of ``own``'s first lines (log-uniform), ``para`` as a line of it
    at one of its line breaks."""
    want = len(para) * float(np.exp(r.uniform(*np.log(HOST_RATIO))))
    lines: list[str] = []
    for line in own.split("\n"):
        if lines and sum(map(len, lines)) >= want:
            break
        lines.append(line)
    at = r.randint(0, len(lines))
    return "\n".join(lines[:at] + [para] + lines[at:])


# ------------------------------------------------------------------ running


def run_simdup(c: Corpus, store_dir: Path, workers: int, log: Callable[[str], None], reuse: bool = False,
               params: dict | None = None) -> dict:
    from simdup_es import default_fingerprinter
    from simdup_es.indexer import index_items
    from simdup_es.multilevel import MultiParams
    from simdup_es.parts import PartPrinter
    from simdup_es.search import comparer
    from simdup_es.sources import Record
    from simdup_es.store import open_store

    fingerprinter = default_fingerprinter()
    rejects: list = []
    out: dict = {"hits": {}, "ms": [], "failed": []}
    t0 = time.perf_counter()
    with open_store(path=store_dir, create=not reuse) as store:
        if reuse:  # built by an earlier run of the same seed and sizes: only the queries run
            out["index_seconds"], out["indexed"] = float("nan"), store.count()
        else:
            records = (Record(text, "eval-copies", doc_id) for doc_id, text in c.stored.items())
            summary = index_items(records, store, fingerprinter, on_reject=rejects.append, workers=workers)
            store.refresh()
            out["index_seconds"] = time.perf_counter() - t0
            out["indexed"] = summary.indexed
        out["rejected"] = [(r.id, r.reason) for r in rejects]
        out["store_count"] = store.count()
        out["store_bytes"] = sum(p.stat().st_size for p in store_dir.rglob("*") if p.is_file())
        log(f"simdup: indexed {out['indexed']} documents ({len(rejects)} rejected) in {out['index_seconds']:.0f} s; "
            f"store {out['store_bytes'] / 1e6:.1f} MB")
        out.update(query_all(store, [(q.id, q.text, q.exclude, q.limit) for q in c.queries], PartPrinter(fingerprinter),
                             comparer(), MultiParams(**(params or {})), log))
    return out


def query_all(store, queries: Sequence[tuple[str, str, str | None, int]], printer, compare, params,  # type: ignore[no-untyped-def]
              log: Callable[[str], None], label: str = "simdup", every: int = 500) -> dict:
    """Each ``(id, text, id to leave out, limit)`` through ``find_copies``: ``hits`` (ids) by query id, ``how``
    (each hit's kind, distance, copied_query and copied_match), ``ms`` per query, ``compare_ms`` of it in the
    comparer (the candidates' sentence scans, unit codes and matrices, and the query's own unit codes), and the
    queries the pipeline ``failed`` (refused: nothing found)."""
    from simdup_es import SimdupError
    from simdup_es.search import find_copies

    out: dict = {"hits": {}, "how": {}, "ms": [], "compare_ms": [], "failed": []}
    comparing = [0.0]

    def timed(call):  # type: ignore[no-untyped-def]
        def run(*args, **kwargs):  # type: ignore[no-untyped-def]
            t = time.perf_counter()
            try:
                return call(*args, **kwargs)
            finally:
                comparing[0] += time.perf_counter() - t
        return run

    asked = ("screened", "unit_codes")  # what a search asks of its comparer: timed on this instance while it runs
    for name in asked:
        setattr(compare, name, timed(getattr(compare, name)))
    t_all = time.perf_counter()
    try:
        for n, (qid, text, exclude, limit) in enumerate(queries):
            comparing[0] = 0.0
            t = time.perf_counter()
            try:
                found = find_copies(store, text, printer=printer, compare=compare, params=params, limit=limit,
                                    exclude_id=exclude)
            except SimdupError as exc:  # a query the pipeline refuses (no words left): nothing found
                found = []
                out["failed"].append((qid, str(exc)))
            out["ms"].append(1000 * (time.perf_counter() - t))
            out["compare_ms"].append(1000 * comparing[0])
            out["hits"][qid] = [m.id for m in found]
            out["how"][qid] = [(m.kind, m.distance, m.copied_query if m.comparison is not None else None,
                                m.copied_match if m.comparison is not None else None) for m in found]
            if (n + 1) % every == 0:
                log(f"  {label}: {n + 1}/{len(queries)} queries, {time.perf_counter() - t_all:.0f} s")
    finally:
        for name in asked:
            delattr(compare, name)  # the class's own again
    return out


def run_minhash(c: Corpus, log: Callable[[str], None]) -> dict:
    from datasketch import MinHashLSH

    t0 = time.perf_counter()
    lsh = MinHashLSH(threshold=0.5, num_perm=128)
    with lsh.insertion_session() as session:
        for doc_id, text in c.stored.items():
            session.insert(doc_id, minhash(text))
    out: dict = {"hits": {}, "ms": [], "index_seconds": time.perf_counter() - t0}
    log(f"minhash: indexed {len(c.stored)} documents in {out['index_seconds']:.0f} s")
    for n, q in enumerate(c.queries):
        t = time.perf_counter()
        got = lsh.query(minhash(q.text))
        out["ms"].append(1000 * (time.perf_counter() - t))
        out["hits"][q.id] = sorted(i for i in got if i != q.exclude)
        if (n + 1) % 2000 == 0:
            log(f"  minhash {n + 1}/{len(c.queries)} queries")
    return out


class OracleView:
    """The oracle (:mod:`copy_oracle`) over one run: every stored text and query as it reads them, the stored
    documents' shingle frequencies counted once, and each (query, hit) verdict once for every method."""

    def __init__(self, c: Corpus) -> None:
        from simdup_es.text import unify_many

        ids = list(c.stored)
        self.stored = {i: copy_oracle.Text.of(u) for i, u in zip(ids, unify_many([c.stored[i] for i in ids]), strict=True)}
        self.index = copy_oracle.ShingleIndex(self.stored.values())
        self._c = c
        self._queries: dict[str, copy_oracle.Text] = {}
        self._verdicts: dict[tuple[str, str], copy_oracle.Verdict] = {}

    def query(self, q: Query) -> copy_oracle.Text:
        if q.exclude is not None and self._c.stored.get(q.exclude) == q.text:
            return self.stored[q.exclude]
        if q.id not in self._queries:
            self._queries[q.id] = copy_oracle.Text.of(unify(q.text))
        return self._queries[q.id]

    def verdict(self, q: Query, hit: str) -> copy_oracle.Verdict:
        got = self._verdicts.get((q.id, hit))
        if got is None:
            got = self._verdicts[(q.id, hit)] = copy_oracle.verdict(self.query(q), self.stored[hit], self.index)
        return got


def labelled_shares(c: Corpus, view: OracleView) -> dict[str, list[float]]:
    """By row: the oracle's share (8-shingles of the smaller side) of each labelled (query, target) pair.

    Set beside the shares of the hits the oracle rejects: a row whose pairs share less
    than those hits cannot be found in full by the share rule alone.
    """
    out: dict[str, list[float]] = defaultdict(list)
    for q in c.queries:
        for row, targets in q.targets.items():
            out[row] += [copy_oracle.shared_share(view.query(q), view.stored[t]) for t in targets]
    return out


def share_bin(share: float) -> int:
    """The :data:`SHARE_BINS` bin of a paragraph's share of its host."""
    return int(np.searchsorted(SHARE_BINS, share, side="right")) - 1


@dataclass
class Tally:
    """One method's counts over the queries (see :func:`score`)."""

    pairs: dict[str, list[int]] = field(default_factory=lambda: defaultdict(lambda: [0, 0]))  # row -> found, pairs
    queries: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    # hits, strict, oracle, share rule alone: overall ("") and by what the query asks for
    hits: dict[str, list[int]] = field(default_factory=lambda: defaultdict(lambda: [0, 0, 0, 0]))
    bins: dict[str, list[list[int]]] = field(default_factory=dict)  # held row -> per share bin: found, pairs
    mosaics: list[int] = field(default_factory=lambda: [0, 0])  # every source found, mosaics
    reasons: dict[str, int] = field(default_factory=lambda: defaultdict(int))  # why the oracle took unlabelled hits
    wrong_common: int = 0  # hits the oracle rejects that share common text with their query
    wrong_sentence: int = 0  # hits the oracle rejects that share a rare run of 13-29 characters
    template: list[int] = field(default_factory=lambda: [0, 0, 0])  # template queries' hits, template-only ones, queries with one
    near_nothing: int = 0  # near-duplicate claims with copied_query and copied_match both 0
    near_wrong: int = 0  # near-duplicate claims the oracle rejects
    false_hits: list = field(default_factory=list)
    rejected: list[float] = field(default_factory=list)  # what the rejected hits share with their query

    def recall(self, q: Query, got: set[str], c: Corpus) -> None:
        for row, targets in q.targets.items():
            self.queries[row] += 1
            found = [t in got for t in targets]
            self.pairs[row][0] += sum(found)
            self.pairs[row][1] += len(targets)
            if row.startswith("held-"):
                bins = self.bins.setdefault(row, [[0, 0] for _ in SHARE_BINS[:-1]])
                for t, ok in zip(targets, found, strict=True):
                    b = bins[share_bin(c.share[q.id if "host->source" in row else t])]
                    b[0] += ok
                    b[1] += 1
            elif row.startswith("mosaic"):
                self.mosaics[0] += all(found)
                self.mosaics[1] += 1

    def hit(self, q: Query, h: str, how: tuple | None, labelled: bool, v: copy_oracle.Verdict | None) -> None:
        right = (1, 1, 1) if labelled else (0, int(v.reason is not None), int(v.share >= copy_oracle.SHARE))  # type: ignore[union-attr]
        if v is not None:
            self.reasons[v.reason or "wrong"] += 1
            if v.reason is None:
                self.rejected.append(v.share)
                self.wrong_common += v.common
                self.wrong_sentence += v.rare >= copy_oracle.SENTENCE
                if len(self.false_hits) < 200:
                    self.false_hits.append((q.id, h, round(v.share, 3), v.common, v.rare))
        if q.id.startswith(TEMPLATE):
            self.template[0] += 1
            self.template[1] += int(v is not None and v.common_only)
        if how is not None and how[0] == "near-duplicate":
            self.near_nothing += how[2] == 0 and how[3] == 0
            self.near_wrong += not right[1]
        kind = "template-only" if q.id.startswith(TEMPLATE) else " + ".join(sorted(q.targets))
        for tally in (self.hits[kind], self.hits[""]):
            tally[0] += 1
            for i, x in enumerate(right, 1):
                tally[i] += x


def score(c: Corpus, runs: dict[str, dict], view: OracleView) -> dict:
    """Recall per row and overall (micro over labelled pairs); strict, oracle and share-rule precision; the
    wrong hits on common text, the template-only queries' hits, near-duplicate claims sharing nothing."""
    res: dict = {}
    for name, run in runs.items():
        t = Tally()
        how = run.get("how", {})
        for q in c.queries:
            t.recall(q, set(run["hits"][q.id]), c)
            before = t.template[1]
            for n, h in enumerate(run["hits"][q.id]):
                labelled = bool(q.family & c.tags[h])
                t.hit(q, h, how[q.id][n] if q.id in how else None, labelled, None if labelled else view.verdict(q, h))
            t.template[2] += t.template[1] > before
        res[name] = summary(t, run)
    return res


def summary(t: Tally, run: dict) -> dict:
    """:func:`score`'s figures of one method from its tally."""
    def ratio(a: float, b: float) -> float:
        return a / b if b else float("nan")

    hits, strict, oracle, share = t.hits.pop("")
    # the held rows' hosts find each other (a hundred labelled hits each): precision without them too
    others = [v for kind, v in t.hits.items() if not kind.startswith("held-")]
    ms = np.array(run["ms"])
    return {
        "rows": {row: {"queries": t.queries[row], "pairs": t.pairs[row][1], "recall": ratio(*t.pairs[row])}
                 for row in ROWS if row in t.queries},
        "recall_all": ratio(sum(v[0] for v in t.pairs.values()), sum(v[1] for v in t.pairs.values())),
        "hits": hits,
        "precision_strict": ratio(strict, hits),
        "precision_oracle": ratio(oracle, hits),
        "precision_share": ratio(share, hits),
        "precision_oracle_without_held": ratio(sum(v[2] for v in others), sum(v[0] for v in others)),
        "oracle_reasons": dict(t.reasons),
        "wrong_sharing_common": t.wrong_common,
        "wrong_sharing_a_short_rare_run": t.wrong_sentence,
        "template_queries": {"hits": t.template[0], "template_only_hits": t.template[1], "queries_with_one": t.template[2]},
        "near_duplicate_sharing_nothing": t.near_nothing,
        "near_duplicate_wrong": t.near_wrong,
        "held_by_share": t.bins,
        "mosaics_all_found": t.mosaics,
        "ms_p50": float(np.median(ms)),
        "ms_p95": float(np.percentile(ms, 95)),
        "ms_mean": float(ms.mean()),
        # without the comparer's share: the query's fingerprint and levels, the store's lookups, ranking and reads
        "ms_outside_compare_p50": float(np.median(ms - np.array(run["compare_ms"]))) if "compare_ms" in run
        else float("nan"),
        "index_seconds": run.get("index_seconds"),
        "false_hits": t.false_hits,
        "rejected_share_p50": float(np.median(t.rejected)) if t.rejected else float("nan"),
        "by_kind": {kind: {"hits": h, "precision_strict": ratio(st, h), "precision_oracle": ratio(o, h)}
                    for kind, (h, st, o, _) in sorted(t.hits.items())},
    }


def earlier_runs(folder: Path) -> dict[str, dict]:
    """The runs an earlier ``--out`` wrote (hits.json, copies.json), to score again."""
    hits = json.loads((folder / "hits.json").read_text())
    before = json.loads((folder / "copies.json").read_text())
    keep = ("ms_p50", "ms_p95", "ms_mean", "ms_outside_compare_p50", "index_seconds")
    out = {}
    for name in ("simdup", "minhash"):
        out[name] = {"hits": hits[name], "ms": [0.0], "times": {k: before["methods"][name].get(k, float("nan"))
                                                                  for k in keep},
                     "store_bytes": before["store_bytes"], "store_count": before["stored"], "rejected": before["rejected"],
                     "failed": before["refused"]}
        if name == "simdup":
            out[name]["how"] = {k: [tuple(x) for x in v] for k, v in hits["simdup how"].items()}
    return out


def print_tables(res: dict[str, dict], shares: Mapping[str, list[float]], index: copy_oracle.ShingleIndex) -> None:
    """The tables of a run: rows, precision and the counts of wrong hits, held rows by share, precision by query kind.
    ``res`` holds ``simdup`` (or the method first named) and ``minhash``."""
    name = next(iter(res))
    s, m = res[name], res["minhash"]
    share = copy_oracle.SHARE
    print(f"| row | queries | pairs | {name} recall | minhash recall | pairs' shared share, p50 (below {share}) |")
    print("|---|---:|---:|---:|---:|---:|")
    for row in s["rows"]:
        a, b, v = s["rows"][row], m["rows"][row], shares[row]
        print(f"| {row} | {a['queries']} | {a['pairs']} | {a['recall']:.3f} | {b['recall']:.3f} | "
              f"{np.median(v):.3f} ({sum(x < share for x in v) / len(v):.2f}) |")
    print(f"| **all pairs (micro)** | {sum(r['queries'] for r in s['rows'].values())} | "
          f"{sum(r['pairs'] for r in s['rows'].values())} | {s['recall_all']:.3f} | {m['recall_all']:.3f} | |")
    print(f"\n| | {name} | minhash |\n|---|---:|---:|")
    print(f"| hits | {s['hits']} | {m['hits']} |")
    print(f"| precision, oracle (share, or a rare run of {copy_oracle.RUN}; common above {index.common} documents) | "
          f"{s['precision_oracle']:.3f} | {m['precision_oracle']:.3f} |")
    print(f"| precision, oracle, queries other than the held rows' | {s['precision_oracle_without_held']:.3f} | "
          f"{m['precision_oracle_without_held']:.3f} |")
    print(f"| precision, share rule alone (the oracle before) | {s['precision_share']:.3f} | {m['precision_share']:.3f} |")
    print(f"| precision, strict | {s['precision_strict']:.3f} | {m['precision_strict']:.3f} |")
    for key, label in (("wrong_sharing_common", "wrong hits sharing common text"),
                       ("wrong_sharing_a_short_rare_run", "wrong hits sharing a rare run of 13-29 characters"),
                       ("near_duplicate_sharing_nothing", "near-duplicate claims sharing nothing (copied 0 and 0)"),
                       ("near_duplicate_wrong", "near-duplicate claims the oracle rejects")):
        print(f"| {label} | {s[key]} | {m[key] if key.startswith('wrong') else '-'} |")
    ts, tm = s["template_queries"], m["template_queries"]
    print(f"| template-only pages: hits sharing common text and no rare run of 13 characters (queries with one) | {ts['template_only_hits']} "
          f"({ts['queries_with_one']}) | {tm['template_only_hits']} ({tm['queries_with_one']}) |")
    print(f"| mosaics with every source found | {s['mosaics_all_found'][0]} of {s['mosaics_all_found'][1]} | "
          f"{m['mosaics_all_found'][0]} of {m['mosaics_all_found'][1]} |")
    print(f"| hits the oracle rejects: shared share, p50 | {s['rejected_share_p50']:.3f} | {m['rejected_share_p50']:.3f} |")
    print(f"| ms per query, p50 / p95 / mean | {s['ms_p50']:.1f} / {s['ms_p95']:.1f} / {s['ms_mean']:.1f} | "
          f"{m['ms_p50']:.2f} / {m['ms_p95']:.2f} / {m['ms_mean']:.2f} |")
    print(f"| ms per query outside the comparer (the query's fingerprint and levels, the store's lookups, ranking and "
          f"reads), p50 | {s['ms_outside_compare_p50']:.2f} | - |")
    edges = [f"{SHARE_BINS[i]:.0%}-{min(SHARE_BINS[i + 1], 1):.0%}" for i in range(len(SHARE_BINS) - 1)]
    print(f"\nheld rows by the paragraph's share of its host ({name} (minhash), found / pairs)\n")
    print("| row | " + " | ".join(edges) + " |\n|---|" + "---:|" * len(edges))
    for row, bins in s["held_by_share"].items():
        cells = [f"{a[0]}/{a[1]} ({b[0]})" if a[1] else "-" for a, b in zip(bins, m["held_by_share"][row], strict=True)]
        print(f"| {row} | " + " | ".join(cells) + " |")
    print(f"\n| query asks for (rows) | {name} hits | oracle / strict precision | minhash hits | oracle / strict |")
    print("|---|---:|---:|---:|---:|")
    nan = {"hits": 0, "precision_oracle": float("nan"), "precision_strict": float("nan")}
    for kind, a in s["by_kind"].items():
        b = m["by_kind"].get(kind, nan)
        print(f"| {kind} | {a['hits']} | {a['precision_oracle']:.3f} / {a['precision_strict']:.3f} | {b['hits']} | "
              f"{b['precision_oracle']:.3f} / {b['precision_strict']:.3f} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--quick", action="store_true", help="small sizes: a smoke test of 2-3 minutes")
    ap.add_argument("--out", type=Path, default=None, help="write copies.json, misses.jsonl and hits.json here")
    ap.add_argument("--workers", type=int, default=2, help="indexing processes")
    ap.add_argument("--store", type=Path, default=None, help="build the store here (kept) rather than in a temporary folder")
    ap.add_argument("--reuse", action="store_true", help="query the store --store holds (built by an earlier run of the "
                    "same seed and sizes with this fingerprinter) rather than building it: for judge and search changes")
    ap.add_argument("--rescore", type=Path, default=None, help="score the hits an earlier run of the same seed and "
                    "sizes wrote with --out to this folder again (nothing is indexed or asked): for changes to the scoring")
    ap.add_argument("--params", type=json.loads, default={}, help="MultiParams other than the defaults, as JSON "
                    "(e.g. '{\"max_misses\": 10}'): to measure a change of threshold before making it")
    args = ap.parse_args()
    size = {k: v[1] if args.quick else v[0] for k, v in SIZES.items()}
    started = time.perf_counter()

    def log(msg: str) -> None:
        print(f"[{time.perf_counter() - started:6.0f} s] {msg}", file=sys.stderr, flush=True)

    c = build(args.seed, size, log)
    log(f"{len(c.stored)} documents to store, {len(c.queries)} queries")
    tmp = None
    if args.store is None:
        tmp = Path(tempfile.mkdtemp(prefix="simdup-eval-copies-"))
        store_dir = tmp / "store"
    else:
        store_dir = args.store
    try:
        if args.reuse and args.store is None:
            ap.error("--reuse needs --store")
        runs = (earlier_runs(args.rescore) if args.rescore else
                {"simdup": run_simdup(c, store_dir, args.workers, log, args.reuse, args.params), "minhash": run_minhash(c, log)})
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
    view = OracleView(c)
    log(f"oracle: {view.index.documents} stored documents, a shingle is common above {view.index.common} of them")
    res = score(c, runs, view)
    for name, run in runs.items():  # a rescored run keeps the times it measured
        res[name].update(run.get("times", {}))
    shares = labelled_shares(c, view)
    wall = time.perf_counter() - started
    print(f"\nretrieval of copies: {len(c.queries)} queries, {len(c.stored)} stored documents, seed {args.seed}"
          f"{' (quick)' if args.quick else ''}, limit {LIMIT}, MultiParams {args.params or 'defaults'}\n")
    print_tables(res, shares, view.index)
    bpd = runs["simdup"]["store_bytes"] / max(1, runs["simdup"]["store_count"])
    print(f"\nembedded store: {runs['simdup']['store_bytes'] / 1e6:.1f} MB for {runs['simdup']['store_count']} documents, "
          f"{bpd:,.0f} bytes per document; {len(runs['simdup']['rejected'])} rejected at indexing, "
          f"{len(runs['simdup']['failed'])} queries refused; wall time {wall / 60:.1f} min")
    for qid, why in runs["simdup"]["failed"][:5]:
        print(f"  refused: {qid}: {why}")
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        doc = {"args": {k: str(v) for k, v in vars(args).items()}, "sizes": size, "queries": len(c.queries),
               "stored": len(c.stored), "store_bytes": runs["simdup"]["store_bytes"], "bytes_per_document": bpd,
               "rejected": runs["simdup"]["rejected"], "refused": runs["simdup"]["failed"], "wall_seconds": wall, "methods": res,
               "labelled_share_p50": {row: float(np.median(v)) for row, v in shares.items()}}
        (args.out / "copies.json").write_text(json.dumps(doc, ensure_ascii=False, indent=1))
        with open(args.out / "misses.jsonl", "w", encoding="utf-8") as f:
            for q in c.queries:
                for row, targets in q.targets.items():
                    for name, run in runs.items():
                        got = set(run["hits"][q.id])
                        missed = [t for t in targets if t not in got]
                        if missed:
                            f.write(json.dumps({"method": name, "row": row, "query": q.id, "missed": missed,
                                                "hits": run["hits"][q.id][:20]}, ensure_ascii=False) + "\n")
        (args.out / "hits.json").write_text(json.dumps({name: run["hits"] for name, run in runs.items()}
                                                       | {"simdup how": runs["simdup"]["how"]}))
        log(f"wrote {args.out / 'copies.json'}, misses.jsonl and hits.json")


if __name__ == "__main__":
    main()
