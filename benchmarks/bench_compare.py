"""Comparison matrix: time per document pair.

For n x n sentences (n = 50, 200, 1000) of 20–60 Chinese characters, times the
whole :func:`simdup_es.compare.compare` call (sentence splitting, the matrix,
the word-level check with Cilin synonyms, whole-text LCS) on one core
(``workers=1``), with compare's default segmenter
(:func:`simdup_es.tokens.dictionary_words`: jieba's dictionary without the HMM,
run by jieba-rs, stop words dropped):

* cold: nothing cached between calls, the figure the goal is stated in
  (compare <= 2 ms at 50 x 50);
* own: the same call with every sentence's words already cached, i.e. compare's
  own work; cold minus own ("words") is the time in the segmenter;
* matrix: :func:`simdup_es.matrix.lcs_matrix` alone.

First, the three segmenters alone, per sentence, and whether jieba-rs gives
Python jieba's words. At 50 x 50 also: the cold call with Python jieba, without
the HMM (the same words, ``lcut(s, HMM=False)``) and with it
(``Tokenizer().words``), and how many planted copies the HMM variant marks; and
a search-like case, one query against 20 candidates, with and without a
:class:`simdup_es.compare.CachedSegmenter` shared by the 20 calls (new for every
run, so the query's sentences are segmented once per run). In the same run, the
P matrix of the 50 x 50 pair in pure Python (the textbook LCS, one per sentence
pair), for the ratio the goal is stated in (the issue measured 209 ms for it).

Variants are timed interleaved, round after round, and the best run of each is
reported: on a shared machine the other runs mostly measure the neighbours.
``--baseline REF`` also times ``simdup_es/compare.py`` as it is at git REF
(e.g. ``HEAD``) in the same rounds, for before/after figures.

Documents are made of real sentences: those of 20–60 units, nearly all CJK, from
the zh corpus of scripts/fetch-corpus (data/zh-docs.jsonl, or $SIMDUP_DATA), or
from the Chinese test fixtures when the corpus is missing. Text b holds, at random
places, lightly edited copies of 15 % of a's sentences (decided by p alone),
rewrites of another 15 % with Cilin synonyms so that p falls between similar_weight
and right_weight (decided by the word-level check), and unrelated sentences for
the rest.

    python benchmarks/bench_compare.py [--sizes 50 200 1000] [--repeat 30] [--baseline HEAD]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import subprocess
import sys
import time
import types
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from simdup_es.compare import CachedSegmenter, CompareParams, Comparison, compare  # noqa: E402
from simdup_es.matrix import lcs_matrix  # noqa: E402
from simdup_es.reference import lcs_length_reference  # noqa: E402
from simdup_es.sentences import split_sentences, units  # noqa: E402
from simdup_es.text import unify  # noqa: E402
from simdup_es.thesaurus import Thesaurus, cilin_thesaurus  # noqa: E402
from simdup_es.tokens import Tokenizer, dictionary_words, is_content_word  # noqa: E402

_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")
_WORDLIKE = re.compile(r"[^\W_]")
_INNER_END = re.compile(r"[。!?;\n]|\.(?!\w)")


def source_texts() -> list[str]:
    corpus = Path(os.environ.get("SIMDUP_DATA") or ROOT / "data") / "zh-docs.jsonl"
    if corpus.exists():
        with open(corpus, encoding="utf-8") as f:
            return [json.loads(line)["text"] for line in f]
    fixtures = [ROOT / "tests" / "fixtures" / n for n in ("zh_article.txt", "zh_other.txt")]
    if all(p.exists() for p in fixtures):
        print(f"note: {corpus} missing, using the test fixtures (few sentences, many repeats)", file=sys.stderr)
        return [p.read_text(encoding="utf-8") for p in fixtures]
    sys.exit(f"no Chinese text: run scripts/fetch-corpus (writes {corpus})")


def real_sentences(texts: Sequence[str]) -> list[str]:
    """Distinct sentences of 20–60 units, at least 90 % CJK, ending in 。"""
    seen: set[str] = set()
    out: list[str] = []
    for text in texts:
        for s in split_sentences(unify(text)):
            cjk = sum(1 for u in s.units if _CJK.fullmatch(u))
            body = s.text.rstrip("。!?;.")
            if (
                20 <= s.n_units <= 60
                and cjk >= 0.9 * s.n_units
                and not _INNER_END.search(body)  # one sentence, not merged fragments
                and body not in seen
            ):
                seen.add(body)
                out.append(body + "。")
    return out


def synonym_index(thesaurus: Thesaurus) -> dict[str, list[str]]:
    groups: dict[str, list[str]] = {}
    for word in thesaurus:
        for code in thesaurus.groups_of(word):
            groups.setdefault(code, []).append(word)
    return {w: sorted({x for c in thesaurus.groups_of(w) for x in groups[c]} - {w}) for w in thesaurus}


def p_of(x: str, y: str) -> float:
    ux, uy = units(x), units(y)
    lcs = lcs_length_reference(ux, uy)
    return min(lcs / len(ux), lcs / len(uy))


def light_edit(sentence: str, rng: random.Random) -> str:
    chars = list(sentence)
    for _ in range(rng.randint(0, 2)):
        k = rng.randrange(len(chars) - 1)
        if _CJK.fullmatch(chars[k]):
            chars[k] = rng.choice("的一是在不了有和人这中大为上个国我以要他")
    return "".join(chars)


def synonym_rewrite(
    sentence: str, segment: Callable[[str], list[str]], synonyms: dict[str, list[str]], rng: random.Random
) -> str | None:
    """Swap words for Cilin synonyms until p drops into [0.6, 0.8); None if it never does."""
    tokens = segment(sentence)
    swappable = [k for k, t in enumerate(tokens) if synonyms.get(t)]
    rng.shuffle(swappable)
    for k in swappable:
        tokens[k] = rng.choice(synonyms[tokens[k]])
        candidate = "".join(tokens)
        p = p_of(sentence, candidate)
        if p < 0.6:
            return None
        if p < 0.8:
            return candidate
    return None


def make_copy(
    a: list[str],
    pool: list[str],
    segment: Callable[[str], list[str]],
    synonyms: dict[str, list[str]],
    rng: random.Random,
    others: list[str] | None = None,
) -> tuple[str, set[tuple[int, int]]]:
    """A text of len(a) sentences: unrelated ones, with 30 % of a's copied or rewritten.

    Also returns the copies as (sentence of a, sentence of the new text).
    """
    n = len(a)
    b = list(others) if others is not None else rng.sample(pool, n)
    slots = rng.sample(range(n), int(0.3 * n))
    copies = rng.sample(range(n), len(slots))
    for k, (slot, source) in enumerate(zip(slots, copies, strict=True)):
        rewritten = synonym_rewrite(a[source], segment, synonyms, rng) if k % 2 else None
        b[slot] = rewritten if rewritten is not None else light_edit(a[source], rng)
    # One sentence per line, as unified text of a page with short paragraphs.
    return "\n".join(b), {(source, slot) for slot, source in zip(slots, copies, strict=True)}


def make_pair(
    pool: list[str],
    n: int,
    segment: Callable[[str], list[str]],
    synonyms: dict[str, list[str]],
    rng: random.Random,
) -> tuple[list[str], str, str]:
    """(a's sentences, text a, text b)."""
    picked = rng.sample(pool, 2 * n) if len(pool) >= 2 * n else [rng.choice(pool) for _ in range(2 * n)]
    a, others = picked[:n], picked[n:]
    return a, "\n".join(a), make_copy(a, pool, segment, synonyms, rng, others)[0]


def pure_python_matrix(a: str, b: str) -> float:
    sa, sb = split_sentences(a), split_sentences(b)
    start = time.perf_counter()
    for x in sa:
        for y in sb:
            lcs = lcs_length_reference(x.units, y.units)
            min(lcs / x.n_units, lcs / y.n_units)
    return time.perf_counter() - start


def timed(fns: dict[str, Callable[[], object]], repeat: int) -> dict[str, float]:
    """Best wall time of each function over ``repeat`` rounds, after one warm-up call each.

    The functions run interleaved, one call each per round, so a busy spell on a
    shared machine hits them alike; the best run is the figure of merit.
    """
    best = dict.fromkeys(fns, float("inf"))
    for fn in fns.values():
        fn()  # warm-up: caches, jieba dictionary, Cilin
    for _ in range(repeat):
        for name, fn in fns.items():
            start = time.perf_counter()
            fn()
            best[name] = min(best[name], time.perf_counter() - start)
    return best


def load_baseline(ref: str) -> Callable[..., Comparison]:
    """``compare`` from simdup_es/compare.py as it is at git ``ref``."""
    source = subprocess.run(
        ["git", "-C", str(ROOT), "show", f"{ref}:simdup_es/compare.py"], capture_output=True, text=True, check=True
    ).stdout
    name = "simdup_es._compare_baseline"
    module = types.ModuleType(name)
    module.__package__ = "simdup_es"
    sys.modules[name] = module  # dataclasses look their module up
    exec(compile(source, f"{ref}:simdup_es/compare.py", "exec"), module.__dict__)
    baseline: Callable[..., Comparison] = module.compare
    return baseline


def marked(result: Comparison) -> set[tuple[int, int]]:
    return {(p.i, p.j) for p in result.pairs}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[50, 200, 1000])
    parser.add_argument("--repeat", type=int, default=30, help="timed rounds per size (best reported)")
    parser.add_argument("--candidates", type=int, default=20, help="candidates per query in the search-like case")
    parser.add_argument("--seed", type=int, default=4)
    parser.add_argument("--baseline", metavar="REF", help="also time compare.py at this git ref (before/after)")
    args = parser.parse_args()

    import jieba

    # The sentence pairs are built with plain jieba words (punctuation dropped).
    plain = jieba.Tokenizer()
    plain.initialize()

    def gen_words(text: str) -> list[str]:
        return [t for t in plain.lcut(text) if _WORDLIKE.search(t)]

    # compare()'s default: jieba's dictionary, no HMM, in jieba-rs; stop words dropped.
    segment = dictionary_words
    segment("预热")  # load the dictionary
    with_hmm = Tokenizer().words  # Python jieba with its HMM
    with_hmm("预热")

    def python_no_hmm(text: str) -> list[str]:
        return [t for t in plain.lcut(text, HMM=False) if is_content_word(t)]

    start = time.perf_counter()
    thesaurus = cilin_thesaurus()
    load_s = time.perf_counter() - start
    synonyms = synonym_index(thesaurus)
    pool = real_sentences(source_texts())
    rng = random.Random(args.seed)
    params = CompareParams()  # similar_weight 0.6, right_weight 0.8, synonyms on
    baseline = load_baseline(args.baseline) if args.baseline else None
    print(f"{len(pool)} real sentences of 20-60 units", end="; ")
    print(f"Cilin: {thesaurus.n_groups} groups, loaded in {load_s * 1e3:.0f} ms")

    def run(fn: Callable[..., Comparison], a: str, b: str, seg: Callable[[str], Sequence[str]]) -> Callable[[], object]:
        return partial(fn, a, b, params, segment=seg, thesaurus=thesaurus, workers=1)

    # The segmenters alone, per sentence, on the same 2,000 real sentences.
    sample = random.Random(args.seed).sample(pool, min(2000, len(pool)))
    per_sentence = {}
    for name, seg in (("jieba-rs", segment), ("Python jieba", python_no_hmm), ("Python jieba + HMM", with_hmm)):
        start = time.perf_counter()
        for sentence in sample:
            seg(sentence)
        per_sentence[name] = (time.perf_counter() - start) / len(sample) * 1e6
    same = sum(segment(x) == python_no_hmm(x) for x in sample)
    print(
        "segmenting one sentence: "
        + ", ".join(f"{name} {us:.1f} us" for name, us in per_sentence.items())
        + f"; jieba-rs gives Python jieba's words (no HMM) for {same} of {len(sample)} sentences"
    )

    rows = []
    extra: dict[str, float] = {}
    hmm_note = ""
    python_ms = None
    for n in args.sizes:
        a_sentences, a, b = make_pair(pool, n, gen_words, synonyms, rng)
        result = compare(a, b, params, segment=segment, thesaurus=thesaurus, workers=1)
        repeat = max(3, args.repeat if n <= 200 else args.repeat // 4)
        warm = CachedSegmenter(segment, maxsize=1 << 20)
        compare(a, b, params, segment=warm, thesaurus=thesaurus, workers=1)  # every needed sentence cached
        units_a = [s.units for s in result.sentences_a]
        units_b = [s.units for s in result.sentences_b]
        fns: dict[str, Callable[[], object]] = {
            "cold": run(compare, a, b, segment),
            "own": run(compare, a, b, warm),
            "matrix": partial(lcs_matrix, units_a, units_b, similar_weight=params.similar_weight, workers=1),
        }
        if baseline is not None:
            fns["before cold"] = run(baseline, a, b, segment)
            fns["before own"] = run(baseline, a, b, warm)
        if n == 50:
            made = [make_copy(a_sentences, pool, gen_words, synonyms, rng) for _ in range(args.candidates)]
            candidates = [text for text, _ in made]

            def search(fn: Callable[..., Comparison], cached: bool) -> None:
                seg = CachedSegmenter(segment) if cached else segment
                for candidate in candidates:
                    fn(a, candidate, params, segment=seg, thesaurus=thesaurus, workers=1)

            fns["cold, Python jieba"] = run(compare, a, b, python_no_hmm)
            fns["cold, Python jieba with HMM"] = run(compare, a, b, with_hmm)
            fns["search, cached"] = partial(search, compare, True)
            fns["search, uncached"] = partial(search, compare, False)
            if baseline is not None:
                fns["before search"] = partial(search, baseline, False)
            # Does the HMM change what is marked? Recall of the copies planted in
            # the candidates, and pairs marked that are no copies, with and without.
            found = {True: 0, False: 0}
            wrong = {True: 0, False: 0}
            planted = 0
            for candidate, truth in made:
                planted += len(truth)
                for hmm, seg in ((True, with_hmm), (False, segment)):
                    got = marked(compare(a, candidate, params, segment=seg, thesaurus=thesaurus))
                    found[hmm] += len(got & truth)
                    wrong[hmm] += len(got - truth)
            hmm_note = (
                f"of {planted} copies planted in the {len(made)} search candidates, marked with HMM "
                f"{found[True]} (+{wrong[True]} others), without {found[False]} (+{wrong[False]} others)"
            )
        best = timed(fns, repeat)
        if n == 50:
            extra = {k: v for k, v in best.items() if k not in ("cold", "own", "matrix")}
            python_ms = pure_python_matrix(a, b) * 1e3
        by_rule = {r: sum(1 for p in result.pairs if p.rule == r) for r in ("lcs", "synonyms")}
        rows.append((n, len(result.sentences_a), len(result.sentences_b), result.stats, by_rule, best))

    print()
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; times are the best of the rounds")
    print("cold ms: the whole compare() call, nothing cached (the goal's figure); own ms: the same call with")
    print("every sentence already segmented (compare's own work); words ms: cold - own, the time in the word")
    print("segmenter; matrix ms: lcs_matrix() alone")
    print()
    head = (
        f"{'size':>9} {'sentences':>11} {'candidates':>10} {'word checks':>11} {'lcs/syn pairs':>13} "
        f"{'cold ms':>8} {'words ms':>8} {'own ms':>8} {'matrix ms':>9}"
    )
    if baseline is not None:
        head += f" {'before cold':>11} {'before own':>10}"
    print(head)
    for n, na, nb, stats, by_rule, best in rows:
        line = (
            f"{n:>4}x{n:<4} {na:>5}x{nb:<5} {stats.candidates:>10} {stats.word_checks:>11} "
            f"{by_rule['lcs']:>6}/{by_rule['synonyms']:<6} {best['cold'] * 1e3:>8.2f} "
            f"{(best['cold'] - best['own']) * 1e3:>8.2f} {best['own'] * 1e3:>8.2f} {best['matrix'] * 1e3:>9.2f}"
        )
        if baseline is not None:
            line += f" {best['before cold'] * 1e3:>11.2f} {best['before own'] * 1e3:>10.2f}"
        print(line)
    if python_ms is not None:
        best = next(r for r in rows if r[0] == 50)[5]
        cold, own, matrix = best["cold"] * 1e3, best["own"] * 1e3, best["matrix"] * 1e3
        k = args.candidates
        print()
        print(
            f"50x50 cold with Python jieba: {extra['cold, Python jieba'] * 1e3:.2f} ms without HMM (the same words), "
            f"{extra['cold, Python jieba with HMM'] * 1e3:.2f} ms with HMM"
        )
        print(f"HMM: {hmm_note}")
        print(
            f"search-like, 1 query x {k} candidates of 50 sentences, per pair: "
            f"{extra['search, cached'] * 1e3 / k:.2f} ms with a CachedSegmenter shared by the {k} calls, "
            f"{extra['search, uncached'] * 1e3 / k:.2f} ms without"
            + (f" ({extra['before search'] * 1e3 / k:.2f} ms before)" if baseline is not None else "")
        )
        print(f"50x50 pure-Python LCS matrix: {python_ms:.0f} ms (issue's reference figure: 209 ms)")
        print(
            f"ratio pure-Python matrix / compare(): {python_ms / cold:.0f}x; "
            f"/ compare() without the segmenter: {python_ms / own:.0f}x; / matrix step alone: {python_ms / matrix:.0f}x"
        )
        verdict = "met" if cold <= 2 else "NOT met"
        print(
            f"goal <= 2 ms per 50x50 pair on one core: {verdict} "
            f"({cold:.2f} ms cold, {own:.2f} ms without the segmenter)"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
