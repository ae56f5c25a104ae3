"""The labelled pair set of benchmarks/eval_quality.py, built deterministically from the corpus.

Every pair holds two *unified* texts (``a`` is the query) and a label: duplicate or
not. Constructed copies also carry a per-character ground truth of which text was
copied, on both sides, so sentence marking can be scored whatever sentences the
splitter makes of the edited text.

Positives
---------
- ``man-tw``: a man page in zh_CN and its zh_TW form (manpages-zh; the zh_TW pages
  are an OpenCC conversion, with Taiwan vocabulary, of the same translation).
- Copies of modern-prose documents (man page sections, LibreOffice help, Debian
  manuals; never classical verse) with one kind of edit at three strengths:
  ``delete`` (sentences removed), ``reorder`` (paragraphs or sentences moved),
  ``replace`` (a run of paragraphs replaced by text of an unrelated document),
  ``synonyms`` (words replaced by Cilin synonyms, as a rewriting tool would), ``contain`` (a short passage
  copied into a long unrelated document: containment) and ``mixed`` (several at
  once). The query ``a`` is the copy, ``b`` the original; for ``contain``, ``a`` is
  the passage and ``b`` the long document holding it. Replacement text and long
  documents come from the same family as the original where it is large enough (the
  same manual, LibreOffice module or man section), so template sentences recur.
  A copy is a duplicate in the sense used here: at least about half of one of the
  two texts is copied from the other (40 % replaced is the most).

Negatives
---------
- ``neg-random``: two documents drawn at random from the whole corpus.
- ``neg-quote``: a document into which a few consecutive sentences of another one
  (4-15 % of the shorter text) were copied: a quotation, not a duplicate; the quoted
  sentences are recorded as copied.
- Hard negatives, from the same source and template: ``neg-man-page`` (two whole man
  pages of one section, similar length), ``neg-man-script`` (the same, one in zh_CN
  and one in zh_TW), ``neg-man-sibling`` (two sections of one man page),
  ``neg-lo`` (two LibreOffice help pages of one module), ``neg-manual`` (two
  sections of one Debian manual chapter), ``neg-verse`` (two poems of one
  collection: Song ci share tune patterns).
  A negative is dropped when the two texts share more than half of the shorter
  one's character 4-grams (an independent check): such pairs are related (the
  same page installed twice, a template filled in twice), not unrelated.
"""

from __future__ import annotations

import json
import random
import re
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from simdup_es.sentences import Sentence, split_sentences, units
from simdup_es.text import unify
from simdup_es.thesaurus import Thesaurus
from simdup_es.tokens import is_content_word

MODERN = ("zh-man", "zh-lo", "zh-debref", "zh-faq", "zh-maint", "zh-install", "zh-edu")
VERSE = ("zh-classic", "zh-fortune")
MAN_MAX_CHARS = 20_000
LEVELS = ("light", "medium", "heavy")
EDITS = ("delete", "reorder", "replace", "synonyms", "contain", "mixed")
# Negatives sharing more than this share of the shorter text's character 4-grams are
# not unrelated and are left out.
RELATED_SHINGLES = 0.5

# Strength of each edit (see the builders below).
DELETE = {"light": 0.1, "medium": 0.3, "heavy": 0.5}  # share of sentences removed
REPLACE = {"light": 0.15, "medium": 0.3, "heavy": 0.4}  # share of units replaced
SYNONYMS = {"light": (0.5, 0.3), "medium": (0.8, 0.5), "heavy": (1.0, 0.8)}  # P(sentence edited), P(word replaced)
CONTAIN = {"light": 3, "medium": 8, "heavy": 20}  # long document : passage, in units
QUOTE = (0.04, 0.15)  # a quote is this share of the shorter text, in units

_ALNUM = re.compile(r"\w")


@dataclass
class Pair:
    """Two unified texts, a label and, for constructed copies, which characters were copied."""

    id: str
    kind: str
    level: str | None
    label: bool
    a: str
    b: str
    mask_a: np.ndarray | None = None  # bool per character of a: copied from b
    mask_b: np.ndarray | None = None  # bool per character of b: copied into a
    meta: dict = field(default_factory=dict)


@dataclass
class Source:
    id: str
    text: str  # unified
    sentences: list[Sentence]
    seps: list[str]  # what follows each sentence ("\n", " " or "")

    @property
    def n_units(self) -> int:
        return sum(s.n_units for s in self.sentences)

    def paragraphs(self) -> list[list[int]]:
        """Sentence indices grouped by line."""
        out: list[list[int]] = [[]]
        for k, sep in enumerate(self.seps):
            out[-1].append(k)
            if "\n" in sep and k < len(self.seps) - 1:
                out.append([])
        return [p for p in out if p]


def make_source(doc_id: str, raw: str) -> Source:
    text = unify(raw)
    sents = split_sentences(text)
    seps = [text[s.end : (sents[k + 1].start if k + 1 < len(sents) else len(text))] for k, s in enumerate(sents)]
    return Source(doc_id, text, sents, seps)


# ------------------------------------------------------------------ assembling


@dataclass
class Piece:
    text: str
    sep: str
    copied: bool


def assemble(pieces: Sequence[Piece]) -> tuple[str, np.ndarray]:
    """Join pieces into a text and a per-character 'copied' mask."""
    parts: list[str] = []
    flags: list[np.ndarray] = []
    for k, p in enumerate(pieces):
        sep = p.sep if k < len(pieces) - 1 else ""
        if k < len(pieces) - 1 and not sep:
            sep = "\n" if not p.text.endswith(("。", "!", "?", ";", ".", "…")) else ""
        parts += [p.text, sep]
        flags += [np.full(len(p.text), p.copied), np.zeros(len(sep), dtype=bool)]
    text = "".join(parts)
    mask = np.concatenate(flags) if flags else np.zeros(0, dtype=bool)
    assert len(mask) == len(text)
    return text, mask


def source_mask(src: Source, kept: set[int]) -> np.ndarray:
    mask = np.zeros(len(src.text), dtype=bool)
    for k in kept:
        s = src.sentences[k]
        mask[s.start : s.end] = True
    return mask


def pieces_of(src: Source, order: Sequence[int]) -> list[Piece]:
    return [Piece(src.sentences[k].text, src.seps[k] or "\n", True) for k in order]


# ---------------------------------------------------------------------- edits


class SynonymEditor:
    """Replaces words of a sentence by another word of one of their Cilin synonym groups."""

    def __init__(self, thesaurus: Thesaurus, segment: Callable[[str], list[str]]) -> None:
        self.segment = segment
        self.thesaurus = thesaurus
        groups: dict[int, list[str]] = defaultdict(list)
        for w in thesaurus:
            for g in thesaurus.group_ids(w):
                groups[g].append(w)
        self.groups = {g: sorted(ws) for g, ws in groups.items()}

    def edit(self, sentence: str, p_word: float, rng: random.Random) -> tuple[str, int]:
        out = []
        changed = 0
        for tok in self.segment(sentence):
            ids = self.thesaurus.group_ids(tok)
            if ids and is_content_word(tok) and rng.random() < p_word:
                choices = [w for w in self.groups[rng.choice(ids)] if w != tok]
                if choices:
                    out.append(rng.choice(choices))
                    changed += 1
                    continue
            out.append(tok)
        return "".join(out), changed


def edit_delete(src: Source, frac: float, rng: random.Random) -> tuple[list[Piece], set[int]]:
    n = len(src.sentences)
    k = min(n - 1, max(1, round(frac * n)))
    kept = sorted(rng.sample(range(n), n - k))
    return pieces_of(src, kept), set(kept)


def edit_reorder(src: Source, level: str, rng: random.Random) -> tuple[list[Piece], set[int]]:
    n = len(src.sentences)
    paras = src.paragraphs()
    if level == "heavy" or len(paras) < 3:
        order = list(range(n))
        if level == "light":  # swap two neighbouring sentences
            i = rng.randrange(n - 1)
            order[i], order[i + 1] = order[i + 1], order[i]
        else:
            while order == sorted(order):
                rng.shuffle(order)
    else:
        blocks = list(paras)
        if level == "light":  # swap two paragraphs
            i, j = rng.sample(range(len(blocks)), 2)
            blocks[i], blocks[j] = blocks[j], blocks[i]
        else:
            while blocks == paras:
                rng.shuffle(blocks)
        order = [k for b in blocks for k in b]
    return pieces_of(src, order), set(range(n))


def foreign_pieces(foreign: Source, n_units: int) -> list[Piece]:
    out: list[Piece] = []
    got = 0
    for k, s in enumerate(foreign.sentences):
        if got >= n_units:
            break
        out.append(Piece(s.text, foreign.seps[k] or "\n", False))
        got += s.n_units
    return out


def edit_replace(src: Source, frac: float, foreign: Source, rng: random.Random) -> tuple[list[Piece], set[int]]:
    """Replace a contiguous run of paragraphs (or sentences) covering about ``frac`` of the units."""
    paras = src.paragraphs()
    blocks = paras if len(paras) >= 4 else [[k] for k in range(len(src.sentences))]
    sizes = [sum(src.sentences[k].n_units for k in b) for b in blocks]
    total = sum(sizes)
    start = rng.randrange(len(blocks))
    stop = start
    covered = 0
    while covered < frac * total and stop < len(blocks):
        covered += sizes[stop]
        stop += 1
    if covered < frac * total:  # ran off the end: extend backwards
        while covered < frac * total and start > 0:
            start -= 1
            covered += sizes[start]
    if stop - start == len(blocks):  # never replace everything
        stop -= 1
        covered -= sizes[stop]
    replaced = {k for b in blocks[start:stop] for k in b}
    before = [k for b in blocks[:start] for k in b]
    after = [k for b in blocks[stop:] for k in b]
    pieces = pieces_of(src, before) + foreign_pieces(foreign, covered) + pieces_of(src, after)
    return pieces, set(range(len(src.sentences))) - replaced


def edit_synonyms(
    src: Source, level: str, editor: SynonymEditor, rng: random.Random, order: Sequence[int] | None = None
) -> tuple[list[Piece], dict]:
    p_sent, p_word = SYNONYMS[level]
    pieces = []
    edited = changed = 0
    for k in order if order is not None else range(len(src.sentences)):
        text = src.sentences[k].text
        if rng.random() < p_sent:
            text, c = editor.edit(text, p_word, rng)
            edited += c > 0
            changed += c
        pieces.append(Piece(text, src.seps[k] or "\n", True))
    return pieces, {"sentences_edited": edited, "words_replaced": changed}


def passage(src: Source, rng: random.Random, lo: int = 80, hi: int = 300) -> list[int]:
    """Consecutive sentences of ``src`` with ``lo`` to ``hi`` units (or as close as it gets)."""
    n = len(src.sentences)
    best: list[int] = []
    for _ in range(20):
        i = rng.randrange(n)
        run: list[int] = []
        got = 0
        for k in range(i, n):
            if got >= lo:
                break
            run.append(k)
            got += src.sentences[k].n_units
        if lo <= got <= hi:
            return run
        if got <= hi and got > sum(src.sentences[k].n_units for k in best):
            best = run
    return best or [rng.randrange(n)]


# ---------------------------------------------------------------------- the set


def shingle_overlap(a: str, b: str, n: int = 4) -> float:
    """Share of the shorter text's character n-grams (letters, digits, CJK) found in the other."""
    ca = "".join(_ALNUM.findall(a))
    cb = "".join(_ALNUM.findall(b))
    sa = {ca[i : i + n] for i in range(len(ca) - n + 1)}
    sb = {cb[i : i + n] for i in range(len(cb) - n + 1)}
    if not sa or not sb:
        return 0.0
    return len(sa & sb) / min(len(sa), len(sb))


def _group(doc_id: str) -> str:
    """The document a corpus entry was cut from: ``zh-man:man1/bash.1``."""
    return doc_id.split("#")[0]


def _family(doc_id: str) -> str:
    """Source and first path part: ``zh-lo:scalc``, ``zh-man:man1``, ``zh-classic:songci``."""
    prefix, _, rest = doc_id.partition(":")
    return f"{prefix}:{rest.split('/')[0].split('#')[0]}"


def _similar_length(x: int, y: int, ratio: float = 2.0) -> bool:
    return max(x, y) <= ratio * min(x, y)


def build(
    data: Path,
    *,
    seed: int,
    per_cell: int,
    n_man: int | None,
    n_random_neg: int,
    n_hard_neg: int,
    n_quotes: int,
    thesaurus: Thesaurus,
    segment: Callable[[str], list[str]],
) -> tuple[list[Pair], dict]:
    """The labelled pairs and a summary of how they were made."""
    rng = random.Random(seed)
    docs = [json.loads(line) for line in open(data / "zh-docs.jsonl", encoding="utf-8")]
    man = [json.loads(line) for line in open(data / "manpages-pairs.jsonl", encoding="utf-8")]
    n_man_all = len(man)
    man = [m for m in man if len(m["zh_cn"]) < MAN_MAX_CHARS and len(m["zh_tw"]) < MAN_MAX_CHARS]
    n_man_short = len(man)
    if n_man is not None and n_man < len(man):
        man = rng.sample(man, n_man)
    man.sort(key=lambda m: m["id"])
    pairs: list[Pair] = []
    unified: dict[tuple[str, str], str] = {}

    def u(key: str, side: str, raw: str) -> str:
        got = unified.get((key, side))
        if got is None:
            got = unified[(key, side)] = unify(raw)
        return got

    # ---- positives: the same man page in zh_CN and zh_TW
    for m in man:
        pairs.append(Pair(f"man-tw:{m['name']}", "man-tw", None, True, u(m["id"], "tw", m["zh_tw"]), u(m["id"], "cn", m["zh_cn"])))

    # ---- positives: edited copies of modern prose
    modern = [d for d in docs if d["id"].startswith(tuple(p + ":" for p in MODERN))]
    modern.sort(key=lambda d: d["id"])
    rng.shuffle(modern)
    sources: list[Source] = []
    foreign_pool: list[Source] = []
    need = len(EDITS) * len(LEVELS) * per_cell
    for d in modern:
        src = make_source(d["id"], d["text"])
        if len(sources) < need and len(src.sentences) >= 8:
            sources.append(src)
        elif len(src.sentences) >= 3:
            foreign_pool.append(src)
    if len(sources) < need:
        raise SystemExit(f"only {len(sources)} documents with 8 sentences or more for {need} copies: lower --per-cell")
    by_family: dict[str, list[Source]] = defaultdict(list)
    for f in foreign_pool:
        by_family[_family(f.id)].append(f)
    editor = SynonymEditor(thesaurus, segment)
    it = iter(sources)
    for edit in EDITS:
        for level in LEVELS:
            for k in range(per_cell):
                src = next(it)
                r = random.Random(f"{seed}:{edit}:{level}:{k}")
                pairs.append(_copy(src, edit, level, k, r, editor, foreign_pool, by_family))

    # ---- negatives that quote a few sentences: not duplicates, but those sentences were copied
    quoting = [f for f in foreign_pool if len(f.sentences) >= 5]
    made = 0
    while made < n_quotes:
        src = rng.choice(quoting)
        host = rng.choice(_unrelated(src, foreign_pool, by_family))
        got = _quote(src, host, random.Random(f"{seed}:quote:{made}"))
        if got is not None:
            pairs.append(got)
            made += 1

    # ---- negatives
    negatives: list[Pair] = []
    by_id = {d["id"]: d for d in docs}
    ids = sorted(by_id)
    seen: set[tuple[str, str]] = set()

    def add_neg(kind: str, x_id: str, x: str, y_id: str, y: str) -> bool:
        key = (min(x_id, y_id), max(x_id, y_id))
        if x_id == y_id or key in seen:
            return False
        seen.add(key)
        negatives.append(Pair(f"{kind}:{x_id}~{y_id}", kind, None, False, x, y, meta={"a": x_id, "b": y_id}))
        return True

    for _ in range(n_random_neg):
        while True:
            x, y = rng.sample(ids, 2)
            if _group(x) != _group(y) and add_neg("neg-random", x, u(x, "", by_id[x]["text"]), y, u(y, "", by_id[y]["text"])):
                break

    # Hard negatives: documents of one template, shares of n_hard_neg.
    hard_share = {"neg-man-page": 0.2, "neg-man-script": 0.1, "neg-man-sibling": 0.15, "neg-lo": 0.25, "neg-manual": 0.15, "neg-verse": 0.15}
    fam: dict[str, list[str]] = defaultdict(list)
    grp: dict[str, list[str]] = defaultdict(list)
    for i in ids:
        fam[_family(i)].append(i)
        grp[_group(i)].append(i)

    def draw_same(kind: str, count: int, buckets: list[list[str]], lengths: Callable[[str], int], text: Callable[[str, int], tuple[str, str]]) -> None:
        buckets = [b for b in buckets if len(b) >= 2]
        if not buckets:
            return
        weights = [len(b) for b in buckets]
        made = tries = 0
        while made < count and tries < count * 50:
            tries += 1
            b = rng.choices(buckets, weights)[0]
            x, y = rng.sample(b, 2)
            if not _similar_length(lengths(x), lengths(y)):
                continue
            (xa_id, xa), (yb_id, yb) = text(x, 0), text(y, 1)
            made += add_neg(kind, xa_id, xa, yb_id, yb)

    man_by_id = {m["id"]: m for m in man}
    man_sections: dict[str, list[str]] = defaultdict(list)
    for m in man:
        man_sections[m["id"].split(":")[1].split("/")[0]].append(m["id"])
    man_len = lambda i: len(man_by_id[i]["zh_cn"])  # noqa: E731
    doc_len = lambda i: len(by_id[i]["text"])  # noqa: E731
    plan = {k: round(v * n_hard_neg) for k, v in hard_share.items()}
    draw_same(
        "neg-man-page", plan["neg-man-page"], list(man_sections.values()), man_len,
        lambda i, side: (i + ":cn", u(i, "cn", man_by_id[i]["zh_cn"])),
    )
    draw_same(
        "neg-man-script", plan["neg-man-script"], list(man_sections.values()), man_len,
        lambda i, side: (i + (":tw" if side == 0 else ":cn"), u(i, "tw", man_by_id[i]["zh_tw"]) if side == 0 else u(i, "cn", man_by_id[i]["zh_cn"])),
    )
    doc_text = lambda i, side: (i, u(i, "", by_id[i]["text"]))  # noqa: E731
    draw_same("neg-man-sibling", plan["neg-man-sibling"], [v for k, v in grp.items() if k.startswith("zh-man:")], doc_len, doc_text)
    draw_same("neg-lo", plan["neg-lo"], [v for k, v in fam.items() if k.startswith("zh-lo:")], doc_len, doc_text)
    manual = [v for k, v in grp.items() if k.startswith(("zh-debref:", "zh-install:", "zh-faq:", "zh-maint:", "zh-edu:"))]
    draw_same("neg-manual", plan["neg-manual"], manual, doc_len, doc_text)
    draw_same("neg-verse", plan["neg-verse"], [v for k, v in fam.items() if k.startswith(VERSE)], doc_len, doc_text)

    dropped: list[Pair] = []
    for p in negatives:
        ov = shingle_overlap(p.a, p.b)
        p.meta["shingle_overlap"] = round(ov, 3)
        (dropped if ov > RELATED_SHINGLES else pairs).append(p)
    summary = {
        "seed": seed,
        "man_pages_in_data": n_man_all,
        "man_pages_under_cap": n_man_short,
        "man_page_char_cap": MAN_MAX_CHARS,
        "copies_per_edit_and_level": per_cell,
        "negatives_dropped_as_related": dropped,  # Pair objects, scored apart as ambiguous
        "related_shingle_threshold": RELATED_SHINGLES,
    }
    return pairs, summary


def _quote(src: Source, host: Source, r: random.Random) -> Pair | None:
    """``host`` with a few consecutive sentences of ``src`` inserted: 4-15 % of the shorter text."""
    short = min(src.n_units, host.n_units)
    lo, hi = QUOTE[0] * short, QUOTE[1] * short
    run = passage(src, r, lo=max(4, round(lo)), hi=int(hi))
    n = sum(src.sentences[k].n_units for k in run)
    if not lo <= n <= hi:
        return None
    body = [Piece(s.text, host.seps[i] or "\n", False) for i, s in enumerate(host.sentences)]
    cuts = [i + 1 for i, p in enumerate(body[:-1]) if "\n" in p.sep] or [len(body) // 2]
    at = r.choice(cuts)
    a, mask_a = assemble(body[:at] + pieces_of(src, run) + body[at:])
    meta = {"a": host.id, "b": src.id, "quote_units": n, "share": round(n / short, 3)}
    return Pair(f"neg-quote:{host.id}~{src.id}", "neg-quote", None, False, a, src.text, mask_a, source_mask(src, set(run)), meta)


def _unrelated(src: Source, pool: list[Source], by_family: dict[str, list[Source]]) -> list[Source]:
    """Documents of the same family as ``src`` (same manual, LibreOffice module, man section) but
    cut from another document; the whole pool when the family is too small."""
    same = [f for f in by_family.get(_family(src.id), []) if _group(f.id) != _group(src.id)]
    return same if len(same) >= 20 else [f for f in pool if _group(f.id) != _group(src.id)]


def _copy(
    src: Source, edit: str, level: str, k: int, r: random.Random, editor: SynonymEditor,
    pool: list[Source], by_family: dict[str, list[Source]],
) -> Pair:
    pid = f"{edit}:{level}:{src.id}"
    meta: dict = {"source": src.id}
    unrelated = _unrelated(src, pool, by_family)
    foreign = r.choice(unrelated)
    if edit == "delete":
        pieces, kept = edit_delete(src, DELETE[level], r)
    elif edit == "reorder":
        pieces, kept = edit_reorder(src, level, r)
    elif edit == "replace":
        pieces, kept = edit_replace(src, REPLACE[level], foreign, r)
        meta["foreign"] = foreign.id
    elif edit == "synonyms":
        pieces, info = edit_synonyms(src, level, editor, r)
        kept = set(range(len(src.sentences)))
        meta.update(info)
    elif edit == "contain":
        run = passage(src, r)
        a, mask_a = assemble(pieces_of(src, run))
        n_pass = len(units(a))
        host: list[Piece] = []
        got = 0
        others = [f for f in pool if _group(f.id) != _group(src.id)]
        hosts = iter(r.sample(unrelated, min(len(unrelated), 60)) + r.sample(others, 60))
        while got < CONTAIN[level] * n_pass:
            f = next(hosts)
            host += [Piece(s.text, f.seps[i] or "\n", False) for i, s in enumerate(f.sentences)]
            got += f.n_units
            meta.setdefault("host", []).append(f.id)
        # insert at a line boundary of the host
        cuts = [i + 1 for i, p in enumerate(host[:-1]) if "\n" in p.sep] or [len(host) // 2]
        at = r.choice(cuts)
        b, mask_b = assemble(host[:at] + pieces_of(src, run) + host[at:])
        meta.update({"passage_units": n_pass, "host_units": got})
        return Pair(f"{pid}#{k}", edit, level, True, a, b, mask_a, mask_b, meta)
    elif edit == "mixed":
        delete = {"light": 0.1, "medium": 0.2, "heavy": 0.3}[level]
        _, kept_list = edit_delete(src, delete, r)
        kept = set(kept_list)
        order = sorted(kept)
        if level != "light":
            paras = [[i for i in p if i in kept] for p in src.paragraphs()]
            paras = [p for p in paras if p]
            if level == "heavy" or len(paras) < 3:
                r.shuffle(order)
            else:
                r.shuffle(paras)
                order = [i for p in paras for i in p]
        pieces, info = edit_synonyms(src, "light" if level != "heavy" else "medium", editor, r, order)
        meta.update(info)
        if level == "heavy":  # and a run of sentences replaced by foreign text
            n_rep = max(1, round(0.15 * len(order)))
            at = r.randrange(len(order) - n_rep + 1)
            gone = order[at : at + n_rep]
            covered = sum(src.sentences[i].n_units for i in gone)
            pieces = pieces[:at] + foreign_pieces(foreign, covered) + pieces[at + n_rep :]
            kept -= set(gone)
            meta["foreign"] = foreign.id
    else:
        raise ValueError(edit)
    a, mask_a = assemble(pieces)
    return Pair(f"{pid}#{k}", edit, level, True, a, src.text, mask_a, source_mask(src, kept), meta)
