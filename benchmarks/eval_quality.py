"""Quality of the near-duplicate decision and of sentence marking, on a labelled set.

Builds a labelled set of document pairs from the corpus of scripts/fetch-corpus
(data/zh-docs.jsonl and data/manpages-pairs.jsonl, or $SIMDUP_DATA), deterministically
from --seed (see benchmarks/quality_set.py for how), and reports precision, recall
and F1 of

1. the fingerprint stage alone: duplicate if the Hamming distance d <= k, k = 0..8;
2. fingerprint + comparison matrix: a candidate if d <= k_retrieval (3, the default;
   7, the loosest the 8 x 8 block query can ask for; and every pair, i.e. the matrix
   alone), then duplicate if max(similarity_a, similarity_b) >= t, over t and over
   (similarWeight, rightWeight), with and without Cilin synonyms;
3. sentence marking: a sentence counts as copied if it is in any marked pair, against
   the ground truth recorded while the copies were made, over the same grid.

It also fingerprints the whole corpus (8,019 documents deduplicated by an independent
shingle filter, i.e. about 32 million unrelated pairs) and counts the pairs within
each distance: the false-positive load of the fingerprint stage at corpus scale, and
how many of those pairs the matrix keeps.

The matrix is computed once per pair at the lowest similarWeight of the grid, with
the word-level score w (with and without synonyms) of every candidate sentence pair,
so every grid point reuses it; the decision rule is the one of
:func:`simdup_es.compare.compare`, and the script checks that it marks the same
sentences as ``compare()`` at the defaults on every pair.

    python benchmarks/eval_quality.py [--out results/] [--seed 4] [--per-cell 40] [--no-corpus]

Writes OUT/quality.json (every figure, set sizes, per-pair scores) and
OUT/quality_sweep.png (the sweeps). Needs matplotlib (the ``eval`` extra).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import quality_set  # noqa: E402

from simdup_es.compare import CompareParams, compare, word_score  # noqa: E402
from simdup_es.matrix import lcs_matrix  # noqa: E402
from simdup_es.fingerprint import Doc, Fingerprinter  # noqa: E402
from simdup_es.sentences import split_sentences  # noqa: E402
from simdup_es.text import UnifiedText, unify  # noqa: E402
from simdup_es.thesaurus import Thesaurus, cilin_thesaurus  # noqa: E402
from simdup_es.tokens import Tokenizer, dictionary_words  # noqa: E402

DATA = Path(os.environ.get("SIMDUP_DATA") or ROOT / "data")
DEFAULT = CompareParams()
SW_GRID = (0.4, 0.5, 0.6, 0.7, 0.8)
RW_GRID = (0.6, 0.7, 0.8, 0.9, 1.0)
K_FINGERPRINT = tuple(range(9))
K_RETRIEVAL: tuple[int | None, ...] = (3, 7, None)  # None: every pair (the matrix alone)
T_GRID = tuple(round(x, 2) for x in np.arange(0.05, 1.0, 0.05))
COPY_KINDS = quality_set.EDITS
# A sentence is copied (ground truth) when at least this share of its letters, digits
# and CJK characters came from the other text.
TRUTH_SHARE = 0.5


def grid() -> list[tuple[float, float, bool]]:
    return [(sw, rw, syn) for syn in (True, False) for sw in SW_GRID for rw in RW_GRID if rw > sw]


def key(sw: float, rw: float, syn: bool) -> str:
    return f"sw{sw:.1f}_rw{rw:.1f}_{'syn' if syn else 'nosyn'}"


def k_name(k: int | None) -> str:
    return "all" if k is None else f"d<={k}"


# ------------------------------------------------------------------- per pair


@dataclass
class Features:
    """What every grid point needs from one pair: the candidate sentence pairs and their scores."""

    ii: np.ndarray
    jj: np.ndarray
    p: np.ndarray
    w_syn: np.ndarray
    w_plain: np.ndarray
    units_a: np.ndarray  # units per sentence of a
    units_b: np.ndarray
    truth_a: np.ndarray | None  # copied, per sentence (constructed copies only)
    truth_b: np.ndarray | None

    def marks(self, sw: float, rw: float, syn: bool) -> tuple[np.ndarray, np.ndarray]:
        w = self.w_syn if syn else self.w_plain
        ok = (self.p >= sw) & ((self.p >= rw) | (w >= rw))
        ma = np.zeros(len(self.units_a), dtype=bool)
        mb = np.zeros(len(self.units_b), dtype=bool)
        ma[self.ii[ok]] = True
        mb[self.jj[ok]] = True
        return ma, mb

    def similarity(self, sw: float, rw: float, syn: bool) -> tuple[float, float]:
        ma, mb = self.marks(sw, rw, syn)
        ta, tb = int(self.units_a.sum()), int(self.units_b.sum())
        return (float(self.units_a[ma].sum() / ta) if ta else 0.0, float(self.units_b[mb].sum() / tb) if tb else 0.0)


def sentence_truth(text: str, mask: np.ndarray | None, sentences, identical: np.ndarray) -> np.ndarray:  # type: ignore[no-untyped-def]
    """Copied sentences: most of their characters were copied, or the other text holds the very same sentence."""
    if mask is None:
        return identical.copy()
    counted = np.fromiter((c.isalnum() for c in text), dtype=bool, count=len(text))
    both = np.concatenate([[0], np.cumsum(counted & mask)])
    all_ = np.concatenate([[0], np.cumsum(counted)])
    out = np.zeros(len(sentences), dtype=bool)
    for k, s in enumerate(sentences):
        n = all_[s.end] - all_[s.start]
        out[k] = n > 0 and (both[s.end] - both[s.start]) >= TRUTH_SHARE * n
    return out | identical


class Scorer:
    def __init__(self, thesaurus: Thesaurus) -> None:
        self.words_of = dictionary_words  # compare()'s default segmenter
        self.thesaurus = thesaurus
        self.cache: dict[str, Counter[str]] = {}
        self.sentence_cache: dict[str, list] = {}

    def words(self, sentence: str) -> Counter[str]:
        got = self.cache.get(sentence)
        if got is None:
            got = self.cache[sentence] = Counter(t for t in self.words_of(sentence) if t and not t.isspace())
        return got

    def sentences(self, text: str) -> list:  # type: ignore[type-arg]
        got = self.sentence_cache.get(text)
        if got is None:
            got = self.sentence_cache[text] = split_sentences(text, min_units=DEFAULT.min_units)
        return got

    def features(self, pair: quality_set.Pair) -> Features:
        sa, sb = self.sentences(pair.a), self.sentences(pair.b)
        _, P = lcs_matrix([s.units for s in sa], [s.units for s in sb], similar_weight=min(SW_GRID), workers=1)
        ii, jj = np.nonzero(P)
        p = P[ii, jj]
        w_syn = np.zeros(len(p))
        w_plain = np.zeros(len(p))
        for k in np.flatnonzero(p < 1.0).tolist():
            wa, wb = self.words(sa[ii[k]].text), self.words(sb[jj[k]].text)
            w_syn[k] = word_score(wa, wb, self.thesaurus)
            w_plain[k] = word_score(wa, wb, None)
        return Features(
            ii.astype(np.int32), jj.astype(np.int32), p, w_syn, w_plain,
            np.array([s.n_units for s in sa], dtype=np.int64), np.array([s.n_units for s in sb], dtype=np.int64),
            *self.truth(pair, sa, sb),
        )

    @staticmethod
    def truth(pair: quality_set.Pair, sa: list, sb: list) -> tuple[np.ndarray | None, np.ndarray | None]:  # type: ignore[type-arg]
        """Ground truth per sentence: recorded for constructed pairs; for unrelated pairs,
        only sentences the other text holds verbatim (boilerplate such as 参见 see also)
        count as copied. None for the zh_TW man pages (every sentence is a copy there)."""
        if pair.kind == "man-tw":
            return None, None
        units_a = {s.units for s in sa}
        units_b = {s.units for s in sb}
        ident_a = np.array([s.units in units_b for s in sa], dtype=bool)
        ident_b = np.array([s.units in units_a for s in sb], dtype=bool)
        return sentence_truth(pair.a, pair.mask_a, sa, ident_a), sentence_truth(pair.b, pair.mask_b, sb, ident_b)


# -------------------------------------------------------------------- metrics


def prf(pred: np.ndarray, label: np.ndarray) -> dict:
    tp = int((pred & label).sum())
    fp = int((pred & ~label).sum())
    fn = int((~pred & label).sum())
    tn = int((~pred & ~label).sum())
    precision = tp / (tp + fp) if tp + fp else math.nan
    recall = tp / (tp + fn) if tp + fn else math.nan
    f1 = 2 * precision * recall / (precision + recall) if tp else 0.0
    return {
        "tp": tp, "fp": fp, "fn": fn, "tn": tn,
        "precision": precision, "recall": recall, "f1": f1,
        "fpr": fp / (fp + tn) if fp + tn else math.nan,
    }


def fmt(x: float) -> str:
    return "  -  " if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.3f}"


def clean(obj):  # type: ignore[no-untyped-def]
    """NaN -> None, numpy scalars -> Python, for JSON."""
    if isinstance(obj, dict):
        return {k: clean(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [clean(v) for v in obj]
    if isinstance(obj, (np.floating, float)):
        v = float(obj)
        return None if math.isnan(v) else round(v, 5)
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, np.bool_):
        return bool(obj)
    return obj


# ---------------------------------------------------------------------- corpus


def corpus_check(fp: Fingerprinter, scorer: Scorer, t: float, workers: int) -> dict:
    """Fingerprint every zh document; count the pairs within each distance; run the matrix on the close ones."""
    docs = [json.loads(line) for line in open(DATA / "zh-docs.jsonl", encoding="utf-8")]
    t0 = time.perf_counter()
    results = list(fp.map((Doc(d["text"]) for d in docs), workers=workers))
    keep = [k for k, r in enumerate(results) if r.error is None]
    values = np.array([results[k].unwrap().value for k in keep], dtype=np.uint64)
    seconds_fp = time.perf_counter() - t0
    hist = np.zeros(65, dtype=np.int64)
    close: list[tuple[int, int, int]] = []
    for i in range(len(values) - 1):
        d = np.bitwise_count(values[i] ^ values[i + 1 :]).astype(np.int64)
        hist += np.bincount(d, minlength=65)
        for j in np.flatnonzero(d <= 7).tolist():
            close.append((keep[i], keep[i + 1 + j], int(d[j])))
    n_pairs = int(hist.sum())
    within = {k: int(hist[: k + 1].sum()) for k in K_FINGERPRINT}
    # The matrix on the pairs the fingerprint stage would hand it (d <= 7 covers d <= 3).
    examples = []
    kept_by_matrix = defaultdict(int)
    for x, y, d in close:
        a, b = unify(docs[x]["text"]), unify(docs[y]["text"])
        c = compare(a, b, DEFAULT, segment=scorer.words_of, thesaurus=scorer.thesaurus, workers=1)
        score = max(c.similarity_a, c.similarity_b)
        for k in (3, 7):
            if d <= k and score >= t:
                kept_by_matrix[k] += 1
        overlap = quality_set.shingle_overlap(a, b)
        examples.append({"a": docs[x]["id"], "b": docs[y]["id"], "distance": d, "copied": round(score, 3),
                         "shingle_overlap": round(overlap, 3)})
    examples.sort(key=lambda e: (e["distance"], -e["copied"]))
    related = {k: sum(e["distance"] <= k and e["shingle_overlap"] > quality_set.RELATED_SHINGLES for e in examples) for k in (3, 7)}
    return {
        "documents": len(docs),
        "fingerprinted": len(keep),
        "pairs": n_pairs,
        "pairs_within": within,
        "expected_within_if_random_bits": {k: n_pairs * sum(math.comb(64, i) for i in range(k + 1)) / 2**64 for k in K_FINGERPRINT},
        "matrix_threshold": t,
        "kept_by_matrix": {f"d<={k}": kept_by_matrix[k] for k in (3, 7)},
        # Close pairs whose unified texts share most 4-grams: duplicates the corpus filter
        # (which does not convert scripts) let through, not false positives.
        "related_by_shingles": {f"d<={k}": related[k] for k in (3, 7)},
        "close_pairs": examples[:200],
        "seconds_fingerprints": round(seconds_fp, 1),
    }


# ------------------------------------------------------------------------ plot


def plot(res: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    colors = {"precision": "tab:blue", "recall": "tab:orange", "f1": "tab:green"}
    fig, axes = plt.subplots(2, 3, figsize=(18, 10.5))
    fig.suptitle(
        f"simdup-es quality sweep (seed {res['set']['seed']}: {res['set']['positives']:,} duplicate and "
        f"{res['set']['negatives']:,} unrelated pairs; {res['set']['sentences_scored']:,} sentences with ground truth)",
        fontsize=13,
    )

    ax = axes[0, 0]
    fpk = res["fingerprint"]
    ks = [r["k"] for r in fpk]
    for m in colors:
        ax.plot(ks, [r[m] for r in fpk], "o-", color=colors[m], label=m)
    ax.axvline(3, color="grey", ls=":", lw=1)
    ax.set(title="1. Fingerprint alone: duplicate if d ≤ k", xlabel="Hamming distance k (bits)", ylabel="score", ylim=(0, 1.05))
    ax.set_xticks(ks)
    ax.legend(loc="lower right")
    if "corpus" in res:
        c = res["corpus"]
        ax.text(0.03, 0.05, f"whole corpus, {c['pairs'] / 1e6:.1f} M pairs:\n{c['pairs_within'][3]} within d ≤ 3, "
                f"{c['related_by_shingles']['d<=3']} of them true duplicates\n(the same text in two packages)",
                transform=ax.transAxes, fontsize=9, va="bottom", bbox={"facecolor": "white", "alpha": 0.8, "edgecolor": "grey"})
    ax.grid(alpha=0.3)

    ax = axes[0, 1]
    styles = {"d<=3": "-", "d<=7": "--", "all": ":"}
    dflt = key(DEFAULT.similar_weight, DEFAULT.right_weight, True)
    for kn, ls in styles.items():
        rows = res["document"][dflt][kn]
        for m in colors:
            ax.plot([r["t"] for r in rows], [r[m] for r in rows], ls, color=colors[m], lw=2 if kn == "d<=3" else 1.5)
    handles = [plt.Line2D([], [], color=c, label=m) for m, c in colors.items()]
    handles += [plt.Line2D([], [], color="black", ls=ls, label={"d<=3": "retrieval d ≤ 3", "d<=7": "retrieval d ≤ 7", "all": "every pair (matrix alone)"}[kn]) for kn, ls in styles.items()]
    ax.legend(handles=handles, loc="lower left", fontsize=9)
    ax.set(title="2. Fingerprint + matrix (sW 0.6 / rW 0.8, synonyms)", xlabel="threshold t on max(similarity_a, similarity_b)", ylabel="score", ylim=(0, 1.05))
    ax.grid(alpha=0.3)

    ax = axes[0, 2]
    shown = [(0.4, 0.6, True), (0.5, 0.7, True), (0.6, 0.8, True), (0.7, 0.9, True), (0.6, 1.0, True), (0.6, 0.8, False)]
    cmap = plt.get_cmap("viridis")
    for n, (sw, rw, syn) in enumerate(shown):
        rows = res["document"][key(sw, rw, syn)]["all"]
        ax.plot([r["t"] for r in rows], [r["f1"] for r in rows], "-" if syn else "--",
                color="red" if (sw, rw, syn) == (0.6, 0.8, True) else cmap(n / len(shown)),
                lw=2.5 if (sw, rw, syn) == (0.6, 0.8, True) else 1.5,
                label=f"sW {sw} / rW {rw}" + ("" if syn else ", no synonyms"))
    ax.set(title="3. Matrix alone (every pair): F1 per (sW, rW)", xlabel="threshold t on max(similarity_a, similarity_b)", ylabel="document F1", ylim=(0.6, 1.01))
    ax.legend(loc="lower left", fontsize=9)
    ax.grid(alpha=0.3)

    sent = res["sentences"]["grid"]
    ax = axes[1, 0]
    for syn, ls in ((True, "-"), (False, "--")):
        sws = [sw for sw in SW_GRID if sw < 0.8]
        for m in colors:
            ax.plot(sws, [sent[key(sw, 0.8, syn)]["all"][m] for sw in sws], ls, marker="o", color=colors[m])
    handles = [plt.Line2D([], [], color=c, label=m) for m, c in colors.items()]
    handles += [plt.Line2D([], [], color="black", ls="-", label="synonyms (Cilin)"), plt.Line2D([], [], color="black", ls="--", label="no synonyms")]
    ax.axvline(0.6, color="grey", ls=":", lw=1)
    ax.set(title="4. Sentence marking vs similarWeight (rW 0.8)", xlabel="similarWeight", ylabel="score (all scored sentences)", ylim=(0.6, 1.01))
    ax.legend(handles=handles, loc="lower left", fontsize=9)
    ax.grid(alpha=0.3)

    ax = axes[1, 1]
    for syn, ls in ((True, "-"), (False, "--")):
        rws = [rw for rw in RW_GRID if rw > 0.6]
        for m in colors:
            ax.plot(rws, [sent[key(0.6, rw, syn)]["all"][m] for rw in rws], ls, marker="o", color=colors[m])
    ax.axvline(0.8, color="grey", ls=":", lw=1)
    ax.set(title="5. Sentence marking vs rightWeight (sW 0.6)", xlabel="rightWeight", ylabel="score (all scored sentences)", ylim=(0.6, 1.01))
    ax.legend(handles=handles, loc="lower left", fontsize=9)
    ax.grid(alpha=0.3)

    ax = axes[1, 2]
    kinds = ["man-tw", *COPY_KINDS]
    by = res["recall_by_kind"]
    series = [("fingerprint d ≤ 3", "fingerprint"), ("d ≤ 3 + matrix", "d<=3+matrix"), ("matrix alone", "matrix")]
    width = 0.27
    x = np.arange(len(kinds))
    for n, (label, field_) in enumerate(series):
        bars = ax.bar(x + (n - 1) * width, [by[k]["all"][field_] for k in kinds], width, label=label)
        ax.bar_label(bars, fmt="%.2f", fontsize=7, rotation=90, padding=2)
    ax.set_xticks(x, kinds, rotation=20)
    ax.set(title=f"6. Recall by kind of duplicate (matrix: t = {res['chosen_t']})", ylabel="recall", ylim=(0, 1.28))
    ax.set_yticks(np.arange(0, 1.01, 0.2))
    ax.legend(loc="upper center", ncol=3, fontsize=9)
    ax.grid(alpha=0.3, axis="y")

    fig.tight_layout(rect=(0, 0, 1, 0.96))
    fig.savefig(path, dpi=110)
    plt.close(fig)


# ------------------------------------------------------------------------ main


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=ROOT / "results")
    ap.add_argument("--seed", type=int, default=4)
    ap.add_argument("--per-cell", type=int, default=40, help="copies per kind of edit and strength")
    ap.add_argument("--man-pairs", type=int, default=None, help="zh_CN/zh_TW pairs to use (default: every one under the cap)")
    ap.add_argument("--random-negatives", type=int, default=700)
    ap.add_argument("--hard-negatives", type=int, default=900)
    ap.add_argument("--quotes", type=int, default=150, help="negatives that quote a few sentences of another document")
    ap.add_argument("--t", type=float, default=0.5, help="document threshold for the per-kind tables")
    ap.add_argument("--workers", type=int, default=2, help="processes for fingerprinting")
    ap.add_argument("--no-corpus", action="store_true", help="skip the whole-corpus fingerprint check")
    args = ap.parse_args()
    if not (DATA / "zh-docs.jsonl").exists() or not (DATA / "manpages-pairs.jsonl").exists():
        sys.exit(f"no corpus in {DATA}: run scripts/fetch-corpus")
    args.out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    timings: dict[str, float] = {}

    def lap(name: str, since: float) -> float:
        now = time.perf_counter()
        timings[name] = round(now - since, 1)
        return now

    tokenizer = Tokenizer()
    tokenizer.words("预热")
    dictionary_words("预热")
    thesaurus = cilin_thesaurus()
    t0 = time.perf_counter()
    pairs, summary = quality_set.build(
        DATA, seed=args.seed, per_cell=args.per_cell, n_man=args.man_pairs, n_random_neg=args.random_negatives,
        n_hard_neg=args.hard_negatives, n_quotes=args.quotes, thesaurus=thesaurus, segment=tokenizer.segment,
    )
    t0 = lap("build set", t0)
    labels = np.array([p.label for p in pairs])
    kinds = [p.kind for p in pairs]
    n_pos, n_neg = int(labels.sum()), int((~labels).sum())
    print(f"labelled set (seed {args.seed}): {len(pairs)} pairs, {n_pos} duplicates, {n_neg} unrelated")
    for kind, n in sorted(Counter(kinds).items(), key=lambda kv: (not kv[0].startswith(("man", *COPY_KINDS)), kv[0])):
        print(f"  {kind:16s} {n:5d}")
    print(f"  ({len(summary['negatives_dropped_as_related'])} negatives dropped: they share > "
          f"{quality_set.RELATED_SHINGLES:.0%} of their character 4-grams)")

    # ---- fingerprints of every distinct text
    fp = Fingerprinter()
    texts = sorted({t for p in pairs for t in (p.a, p.b)})
    index = {t: n for n, t in enumerate(texts)}
    values = [r.fingerprint.value if r.error is None else None for r in fp.map((Doc(UnifiedText(t)) for t in texts), workers=args.workers)]
    dist = np.array([
        64 if values[index[p.a]] is None or values[index[p.b]] is None else int(bin(values[index[p.a]] ^ values[index[p.b]]).count("1"))
        for p in pairs
    ])
    t0 = lap("fingerprints", t0)

    # ---- matrix features of every pair, checked against compare()
    scorer = Scorer(thesaurus)
    feats = [scorer.features(p) for p in pairs]
    t0 = lap("matrix", t0)
    mismatches = []
    for p, f in zip(pairs, feats):
        c = compare(p.a, p.b, DEFAULT, thesaurus=thesaurus, workers=1)
        ma, mb = f.marks(DEFAULT.similar_weight, DEFAULT.right_weight, True)
        if set(np.flatnonzero(ma).tolist()) != {q.i for q in c.pairs} or set(np.flatnonzero(mb).tolist()) != {q.j for q in c.pairs}:
            mismatches.append(p.id)
    t0 = lap("check against compare()", t0)
    print(f"sweep rule marks the same sentences as compare() at the defaults on {len(pairs) - len(mismatches)}/{len(pairs)} pairs")

    res: dict = {"set": {
        **{k: v for k, v in summary.items() if k != "negatives_dropped_as_related"},
        "pairs": len(pairs), "positives": n_pos, "negatives": n_neg, "by_kind": dict(Counter(kinds)),
    }, "compare_check_mismatches": mismatches}

    # Pairs left out as related (shared boilerplate): how each stage treats them.
    ambiguous = summary["negatives_dropped_as_related"]
    amb_fp = list(fp.map((Doc(UnifiedText(t)) for p in ambiguous for t in (p.a, p.b)), workers=1))
    amb = []
    for n, p in enumerate(ambiguous):
        x, y = amb_fp[2 * n], amb_fp[2 * n + 1]
        d = x.unwrap().distance(y.unwrap()) if x.error is None and y.error is None else 64
        sim = scorer.features(p).similarity(DEFAULT.similar_weight, DEFAULT.right_weight, True)
        amb.append({"id": p.id, "shingle_overlap": p.meta["shingle_overlap"], "distance": d,
                    "similarity_a": sim[0], "similarity_b": sim[1]})
    res["ambiguous_left_out"] = amb

    # ---- 1. fingerprint alone
    res["fingerprint"] = [{"k": k, **prf(dist <= k, labels)} for k in K_FINGERPRINT]

    # ---- 2. document decision: retrieval + matrix
    sims = {key(*g): np.array([f.similarity(*g) for f in feats]) for g in grid()}
    score = {k_: v.max(axis=1) for k_, v in sims.items()}
    res["document"] = {}
    for g in grid():
        gk = key(*g)
        res["document"][gk] = {
            k_name(k): [{"t": t, **prf(((dist <= k) if k is not None else True) & (score[gk] >= t), labels)} for t in T_GRID]
            for k in K_RETRIEVAL
        }
    dflt = key(DEFAULT.similar_weight, DEFAULT.right_weight, True)
    t_choice = args.t
    res["chosen_t"] = t_choice

    # ---- 3. sentences
    copies = [n for n, p in enumerate(pairs) if p.mask_a is not None]  # constructed: copies and quotes
    unrelated = [n for n, p in enumerate(pairs) if p.mask_a is None and not p.label]
    man = [n for n, p in enumerate(pairs) if p.kind == "man-tw"]

    def sentence_counts(idx: list[int]) -> tuple[int, int]:
        total = sum(len(feats[n].units_a) + len(feats[n].units_b) for n in idx)
        copied = sum(int(feats[n].truth_a.sum() + feats[n].truth_b.sum()) for n in idx)
        return total, copied

    res["set"]["sentences"] = {
        name: dict(zip(("total", "copied"), sentence_counts(idx))) for name, idx in (("constructed", copies), ("unrelated", unrelated))
    }
    res["set"]["sentences_scored"] = sum(v["total"] for v in res["set"]["sentences"].values())
    res["sentences"] = {"grid": {}}
    for g in grid():
        marked = {n: feats[n].marks(*g) for n in copies + unrelated + man}
        row = {}
        for name, idx in (("constructed", copies), ("unrelated", unrelated), ("all", copies + unrelated)):
            for side, s_ in (("a", 0), ("b", 1)):
                pred = np.concatenate([marked[n][s_] for n in idx])
                truth = np.concatenate([feats[n].truth_a if s_ == 0 else feats[n].truth_b for n in idx])
                row[f"{name}_{side}"] = (pred, truth)
            row[name] = prf(np.concatenate([row[f"{name}_a"][0], row[f"{name}_b"][0]]),
                            np.concatenate([row[f"{name}_a"][1], row[f"{name}_b"][1]]))
            for side in ("a", "b"):
                row[f"{name}_{side}"] = prf(*row[f"{name}_{side}"])
        man_marked = sum(int(m.sum()) for n in man for m in marked[n])
        man_total = sum(len(feats[n].units_a) + len(feats[n].units_b) for n in man)
        row["man_tw_marked"] = man_marked / man_total if man_total else math.nan
        # Work at this grid point, over every pair of the set: sentence pairs with
        # p >= similarWeight, and those that need the word-level check.
        row["candidates"] = int(sum(int((f.p >= g[0]).sum()) for f in feats))
        row["word_checks"] = int(sum(int(((f.p >= g[0]) & (f.p < g[1])).sum()) for f in feats))
        res["sentences"]["grid"][key(*g)] = row

    # ---- recall / FPR by kind at the defaults
    s_def = score[dflt]
    res["recall_by_kind"] = {}
    for kind in sorted(set(kinds)):
        rows = {}
        for level in (None, *quality_set.LEVELS):
            sel = np.array([k_ == kind and (level is None or p.level == level) for k_, p in zip(kinds, pairs)])
            if not sel.any():
                continue
            rows["all" if level is None else level] = {
                "n": int(sel.sum()),
                "fingerprint": float((dist[sel] <= 3).mean()),
                "d<=3+matrix": float(((dist[sel] <= 3) & (s_def[sel] >= t_choice)).mean()),
                "d<=7+matrix": float(((dist[sel] <= 7) & (s_def[sel] >= t_choice)).mean()),
                "matrix": float((s_def[sel] >= t_choice).mean()),
                "median_distance": float(np.median(dist[sel])),
                "median_copied": float(np.median(s_def[sel])),
            }
        res["recall_by_kind"][kind] = rows
    res["sentences_by_kind"] = {}
    for kind in (*COPY_KINDS, "neg-quote"):
        idx = [n for n in copies if pairs[n].kind == kind]
        ms = [feats[n].marks(DEFAULT.similar_weight, DEFAULT.right_weight, True) for n in idx]
        for side, s in (("a", 0), ("b", 1)):
            pred = np.concatenate([m[s] for m in ms])
            truth = np.concatenate([feats[n].truth_a if s == 0 else feats[n].truth_b for n in idx])
            res["sentences_by_kind"].setdefault(kind, {})[side] = prf(pred, truth)

    # ---- the optional boilerplate trim (Zhou, Guo and Zhao) at the defaults, matrix alone
    trim = CompareParams(trim_boilerplate=True)
    t0 = time.perf_counter()

    def trimmed(p: quality_set.Pair) -> float:
        c = compare(p.a, p.b, trim, thesaurus=thesaurus, workers=1)
        return max(c.similarity_a, c.similarity_b)

    s_trim = np.array([trimmed(p) for p in pairs])
    amb_trim = [trimmed(p) for p in ambiguous]
    res["trim_boilerplate"] = {
        "document_all": [{"t": t, **prf(s_trim >= t, labels)} for t in T_GRID],
        "fpr_by_kind_at_t": {k: float((s_trim[[n for n, p in enumerate(pairs) if p.kind == k]] >= t_choice).mean())
                             for k in sorted(set(kinds)) if not pairs[kinds.index(k)].label},
        "ambiguous_at_t": sum(x >= t_choice for x in amb_trim),
        "ambiguous_at_t_untrimmed": sum(max(a["similarity_a"], a["similarity_b"]) >= t_choice for a in amb),
    }
    t0 = lap("trim_boilerplate check", t0)

    # ---- corpus-wide fingerprint check
    if not args.no_corpus:
        res["corpus"] = corpus_check(fp, scorer, t_choice, args.workers)
        t0 = lap("corpus check", t0)

    # ------------------------------------------------------------------ print
    print("\n1. Fingerprint alone: duplicate if d <= k")
    print("   k   prec  recall    F1     FPR    TP    FP    FN" + ("   corpus pairs <= k" if "corpus" in res else ""))
    for r in res["fingerprint"]:
        extra = f"   {res['corpus']['pairs_within'][r['k']]:>8,}" if "corpus" in res else ""
        print(f"  {r['k']:2d}  {fmt(r['precision'])}  {fmt(r['recall'])}  {fmt(r['f1'])}  {fmt(r['fpr'])}  "
              f"{r['tp']:4d}  {r['fp']:4d}  {r['fn']:4d}{extra}")
    if "corpus" in res:
        c = res["corpus"]
        print(f"  corpus: {c['fingerprinted']:,} documents, {c['pairs']:,} pairs, meant to be unrelated (deduplicated by "
              f"scripts/fetch-corpus).\n  Within d <= 3: {c['pairs_within'][3]} pairs, {c['related_by_shingles']['d<=3']} of "
              f"them sharing > {quality_set.RELATED_SHINGLES:.0%} of their 4-grams once unified (duplicates the corpus filter "
              f"missed), the matrix keeps {c['kept_by_matrix']['d<=3']} at t = {t_choice}.\n  Within d <= 7: "
              f"{c['pairs_within'][7]} pairs, {c['related_by_shingles']['d<=7']} related, the matrix keeps {c['kept_by_matrix']['d<=7']}.")
    if res["ambiguous_left_out"]:
        amb = res["ambiguous_left_out"]
        print(f"  left out of the set as related ({len(amb)} pairs sharing > {quality_set.RELATED_SHINGLES:.0%} of 4-grams, "
              f"mostly GNU coreutils man pages with the same boilerplate): d <= 3 for "
              f"{sum(a['distance'] <= 3 for a in amb)}, matrix >= {t_choice} for "
              f"{sum(max(a['similarity_a'], a['similarity_b']) >= t_choice for a in amb)}")

    print(f"\n2. Fingerprint + matrix (similarWeight {DEFAULT.similar_weight}, rightWeight {DEFAULT.right_weight}, "
          "synonyms): duplicate if d <= k_retrieval and max(similarity_a, similarity_b) >= t")
    print("    t  | " + " | ".join(f"{k_name(k):^23s}" for k in K_RETRIEVAL))
    print("       | " + " | ".join(" prec  recall   F1   " for _ in K_RETRIEVAL))
    for n, t in enumerate(T_GRID):
        if round(t * 20) % 2 and t not in (0.05, 0.15, 0.25, 0.35, 0.45):
            continue
        cells = []
        for k in K_RETRIEVAL:
            r = res["document"][dflt][k_name(k)][n]
            cells.append(f"{fmt(r['precision'])} {fmt(r['recall'])} {fmt(r['f1'])}")
        print(f"  {t:.2f} | " + " | ".join(cells))

    print("\n   per (similarWeight, rightWeight): best F1 over t, and P/R/F1 at t = "
          f"{t_choice}, with retrieval d <= 3 and for every pair (matrix alone)")
    print("   sW   rW  syn |  d<=3: best F1 (t)   P@t    R@t    F1@t |  all: best F1 (t)   P@t    R@t    F1@t")
    res["document_summary"] = {}
    for g in grid():
        gk = key(*g)
        line = f"  {g[0]:.1f}  {g[1]:.1f}  {'yes' if g[2] else 'no ':3s}"
        summ = {}
        for k in (3, None):
            rows = res["document"][gk][k_name(k)]
            best = max(rows, key=lambda r: (r["f1"], -abs(r["t"] - t_choice)))
            at = next(r for r in rows if abs(r["t"] - t_choice) < 1e-9)
            summ[k_name(k)] = {"best_f1": best["f1"], "best_t": best["t"], "at_t": at}
            line += f" |       {fmt(best['f1'])} ({best['t']:.2f})  {fmt(at['precision'])}  {fmt(at['recall'])}  {fmt(at['f1'])}"
        res["document_summary"][gk] = summ
        print(line)

    tb = res["trim_boilerplate"]
    at = next(r for r in tb["document_all"] if abs(r["t"] - t_choice) < 1e-9)
    untrimmed = next(r for r in res["document"][dflt]["all"] if abs(r["t"] - t_choice) < 1e-9)
    print(f"\n   with trim_boilerplate, matrix alone at t = {t_choice}: P {fmt(at['precision'])} R {fmt(at['recall'])} "
          f"F1 {fmt(at['f1'])} (untrimmed: P {fmt(untrimmed['precision'])} R {fmt(untrimmed['recall'])} F1 {fmt(untrimmed['f1'])}); "
          f"boilerplate pairs left out of the set over t: {tb['ambiguous_at_t']} trimmed, {tb['ambiguous_at_t_untrimmed']} untrimmed")
    print("   FPR with trim_boilerplate: " + ", ".join(f"{k} {v:.3f}" for k, v in tb["fpr_by_kind_at_t"].items()))

    print(f"\n   recall by kind (fingerprint d <= 3; d <= 3 + matrix at t = {t_choice}; matrix alone), "
          "and median distance / median copied share")
    print("   kind             level     n   fp<=3  +matrix  matrix   med d  med copied")
    for kind, rows in res["recall_by_kind"].items():
        for level, r in rows.items():
            if level != "all" and kind not in COPY_KINDS:
                continue
            what = "FPR  " if not pairs[kinds.index(kind)].label else ""
            print(f"   {what}{kind:{16 - len(what)}s} {level:7s} {r['n']:4d}   {r['fingerprint']:.3f}   {r['d<=3+matrix']:.3f}   "
                  f"{r['matrix']:.3f}   {r['median_distance']:5.1f}   {r['median_copied']:.3f}")

    sc = res["set"]["sentences"]
    print(f"\n3. Sentence marking: a sentence is marked if it is in any marked pair. Ground truth: "
          f"{sc['constructed']['total']:,} sentences of {len(copies)} constructed pairs (copies and quotes), "
          f"{sc['constructed']['copied']:,} copied; {sc['unrelated']['total']:,} sentences of {len(unrelated)} unrelated pairs, "
          f"of which only the {sc['unrelated']['copied']:,} the other text holds verbatim count as copied")
    print("   sW   rW  syn | constructed: prec recall   F1  | unrelated: false marks | all: prec recall   F1  | man-tw marked | candidates  word checks")
    for g in grid():
        r = res["sentences"]["grid"][key(*g)]
        u = r["unrelated"]
        print(f"  {g[0]:.1f}  {g[1]:.1f}  {'yes' if g[2] else 'no ':3s} |        "
              f"{fmt(r['constructed']['precision'])} {fmt(r['constructed']['recall'])} {fmt(r['constructed']['f1'])} |"
              f"   {u['fp']:4d} ({u['fp'] / (u['fp'] + u['tn']):.2%})   | "
              f"{fmt(r['all']['precision'])} {fmt(r['all']['recall'])} {fmt(r['all']['f1'])} |    {fmt(r['man_tw_marked'])}      |"
              f" {r['candidates']:>9,}  {r['word_checks']:>9,}")
    print("\n   by kind at the defaults (a: the copy / the passage, b: the original / the long document)")
    for kind, r in res["sentences_by_kind"].items():
        print(f"   {kind:10s} a: P {fmt(r['a']['precision'])} R {fmt(r['a']['recall'])}   "
              f"b: P {fmt(r['b']['precision'])} R {fmt(r['b']['recall'])}")

    # ---- write
    res["per_pair"] = [
        {"id": p.id, "kind": p.kind, "level": p.level, "label": p.label, "distance": int(d),
         "similarity_a": f.similarity(DEFAULT.similar_weight, DEFAULT.right_weight, True)[0],
         "similarity_b": f.similarity(DEFAULT.similar_weight, DEFAULT.right_weight, True)[1],
         "copied_trimmed": float(st), **p.meta}
        for p, f, d, st in zip(pairs, feats, dist, s_trim)
    ]
    res["parameters"] = {"similar_weight_grid": SW_GRID, "right_weight_grid": RW_GRID, "t_grid": T_GRID,
                         "k_fingerprint": K_FINGERPRINT, "k_retrieval": [k_name(k) for k in K_RETRIEVAL],
                         "sentence_truth_share": TRUTH_SHARE, "fingerprint_version": fp.version}
    plot(res, args.out / "quality_sweep.png")
    timings["total"] = round(time.perf_counter() - started, 1)
    res["seconds"] = timings
    with open(args.out / "quality.json", "w", encoding="utf-8") as f:
        json.dump(clean(res), f, ensure_ascii=False, indent=1)
    print(f"\nwrote {args.out / 'quality.json'} and {args.out / 'quality_sweep.png'}; seconds: {timings}")


if __name__ == "__main__":
    main()
