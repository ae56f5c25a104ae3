"""The Store contract: the same data and the same expectations for every store.

Each test runs once per store (``local``, ``elasticsearch``; see conftest.py).
Candidate sets are held to a brute-force scan of the same data: for every ``k``
from 0 to 7, every document within ``k`` is a candidate, and after
:func:`simdup_es.search.rerank` the matches are exactly the brute-force set. So
the stores give identical result sets at every ``k``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import numpy as np
import pytest

from simdup_es.errors import ConfigError
from simdup_es.search import rerank
from simdup_es.common import BulkReport
from simdup_es.store.base import Store, StoredDoc

VERSION = "contract-v1"
K = 3
"""The default document distance, where a test is not about ``k``."""
OTHER_VERSION = "contract-v2"
MAX = (1 << 64) - 1


def flip(fp: int, bits: int, rng: np.random.Generator) -> int:
    """``fp`` with ``bits`` distinct random bits flipped (distance exactly ``bits``)."""
    for b in rng.choice(64, size=bits, replace=False).tolist():
        fp ^= 1 << b
    return fp


@dataclass(frozen=True)
class Corpus:
    docs: tuple[StoredDoc, ...]
    queries: tuple[int, ...]

    def within(self, query: int, k: int, version: str = VERSION) -> dict[str, int]:
        """Brute force: ``{id: distance}`` of the docs of ``version`` within ``k``."""
        return {
            d.id: (d.fingerprint ^ query).bit_count()
            for d in self.docs
            if d.version == version and (d.fingerprint ^ query).bit_count() <= k
        }


@cache
def corpus(seed: int = 20240611, bases: int = 150, randoms: int = 1500) -> Corpus:
    """~2,900 fingerprints: bases with neighbours at distances 0..6, random ones, and
    a few copies of bases under another fingerprint version; ~350 queries."""
    rng = np.random.default_rng(seed)
    docs: list[StoredDoc] = []
    base_fps = [int(x) for x in rng.integers(0, MAX, bases, dtype=np.uint64, endpoint=True)]
    for b, fp in enumerate(base_fps):
        docs.append(StoredDoc(f"base-{b}", fp, VERSION, f"text of base {b}", f"base {b}"))
        for d in range(7):
            docs.append(StoredDoc(f"near-{b}-{d}", flip(fp, d, rng), VERSION, f"near {b} at {d}", None))
        # A second neighbour cloud around some bases makes clusters bigger than one.
        if b % 5 == 0:
            docs.extend(StoredDoc(f"near2-{b}-{d}", flip(fp, d, rng), VERSION, "n2", None) for d in (1, 2, 3))
        if b % 10 == 0:  # same bits, other version: never a candidate for VERSION
            docs.append(StoredDoc(f"other-{b}", flip(fp, b % 4, rng), OTHER_VERSION, "other", None))
    for r in range(randoms):
        fp = int(rng.integers(0, MAX, dtype=np.uint64, endpoint=True))
        docs.append(StoredDoc(f"rand-{r}", fp, VERSION, f"random {r}", None))
    # Edge fingerprints: the sign bit set (stored as a negative int64 by some backends), 0, all ones.
    docs += [
        StoredDoc("edge-zero", 0, VERSION, "zero", None),
        StoredDoc("edge-ones", MAX, VERSION, "ones", None),
        StoredDoc("edge-sign", 1 << 63, VERSION, "sign", None),
    ]
    queries = list(base_fps)
    queries += [flip(fp, int(rng.integers(1, 5)), rng) for fp in base_fps[:100]]
    queries += [int(x) for x in rng.integers(0, MAX, 50, dtype=np.uint64, endpoint=True)]
    queries += [d.fingerprint for d in docs if d.id.startswith("rand-")][:40]
    queries += [0, MAX, 1 << 63, (1 << 63) | 0b111, MAX ^ 0b11]
    return Corpus(tuple(docs), tuple(queries))


def load(store: Store, docs: list[StoredDoc] | tuple[StoredDoc, ...], batch: int = 1000) -> None:
    for i in range(0, len(docs), batch):
        report = store.put(list(docs[i : i + batch]))
        assert report.failed == []
        assert report.written == len(docs[i : i + batch])
    store.refresh()


def docs_of(n: int, prefix: str = "doc", version: str = VERSION, seed: int = 1) -> list[StoredDoc]:
    rng = np.random.default_rng(seed)
    return [
        StoredDoc(f"{prefix}-{i}", int(rng.integers(0, MAX, dtype=np.uint64, endpoint=True)), version,
                  f"text {prefix} {i}", f"title {i}")
        for i in range(n)
    ]


# --------------------------------------------------------------------------- basics


def test_empty_store_has_no_candidates(store: Store) -> None:
    store.refresh()
    assert store.count() == 0
    for q in (0, MAX, 0x0123456789ABCDEF):
        ids, fps = store.candidates(q, VERSION, k=K)
        assert ids == [] and len(fps) == 0
    assert store.get(["nothing"]) == []
    assert store.get([]) == []


def test_put_and_count(store: Store) -> None:
    report = store.put(docs_of(25))
    assert report == BulkReport(written=25, failed=[])
    store.refresh()
    assert store.count() == 25


def test_versions_count_documents_by_fingerprint_version(store: Store) -> None:
    store.refresh()
    assert store.versions() == {}
    old = [StoredDoc(d.id + "-old", d.fingerprint, "0.older", d.text) for d in docs_of(3, seed=2)]
    load(store, docs_of(7) + old)
    assert store.versions() == {VERSION: 7, "0.older": 3}
    load(store, [StoredDoc(d.id, d.fingerprint, VERSION, d.text) for d in old])  # fingerprinted again
    assert store.versions() == {VERSION: 10}


def test_force_merge_keeps_every_answer(store: Store) -> None:
    docs = docs_of(60)
    for i in range(0, 60, 20):  # three writes: three segments on a cluster
        load(store, docs[i : i + 20])
    store.delete([d.id for d in docs[:5]])
    store.refresh()

    def answers() -> tuple[int, list[tuple[list[str], list[int]]], list[StoredDoc]]:
        found = [store.candidates(d.fingerprint, VERSION, k=K) for d in docs]
        return store.count(), [(ids, fps.tolist()) for ids, fps in found], store.get([d.id for d in docs])

    before = answers()
    assert before[0] == 55
    store.force_merge()
    store.refresh()
    assert answers() == before


def test_setup_is_idempotent(store: Store) -> None:
    load(store, docs_of(5))
    store.setup()
    store.refresh()
    assert store.count() == 5


def test_reput_same_ids_replaces_and_keeps_count(store: Store) -> None:
    first = docs_of(30, seed=1)
    load(store, first)
    second = [StoredDoc(d.id, d.fingerprint ^ 0xFFFF_0000_FFFF_0000, d.version, d.text + " (v2)", "new")
              for d in first]
    load(store, second)
    assert store.count() == 30
    got = {d.id: d for d in store.get([d.id for d in first])}
    assert {i: (d.fingerprint, d.text, d.title) for i, d in got.items()} == {
        d.id: (d.fingerprint, d.text, "new") for d in second
    }
    for old, new in zip(first, second):
        assert old.id not in store.candidates(old.fingerprint, VERSION, k=K)[0]  # 32 bits away now
        assert old.id in store.candidates(new.fingerprint, VERSION, k=K)[0]


def test_get_returns_text_and_title_and_omits_unknown_ids(store: Store) -> None:
    docs = docs_of(10) + [StoredDoc("no-title", 42, VERSION, "only text", None)]
    load(store, docs)
    got = store.get(["doc-3", "unknown", "doc-7", "no-title", "also-unknown"])
    assert {d.id: d for d in got} == {
        "doc-3": docs[3],
        "doc-7": docs[7],
        "no-title": StoredDoc("no-title", 42, VERSION, "only text", None),
    }


def test_get_returns_the_url_author_and_date_and_a_replaced_document_loses_them(store: Store) -> None:
    meta = (("url", "https://example.org/文章?id=1"), ("author", "张三"), ("date", "2023年5月"))
    load(store, [StoredDoc("with-meta", 42, VERSION, "正文", "标题", meta=meta), StoredDoc("bare", 43, VERSION, "x")])
    assert store.get(["with-meta", "bare"]) == [StoredDoc("with-meta", 42, VERSION, "正文", "标题", meta=meta),
                                               StoredDoc("bare", 43, VERSION, "x")]
    load(store, [StoredDoc("with-meta", 42, VERSION, "正文", "标题", meta=meta[1:])])
    assert store.get(["with-meta"])[0].meta == meta[1:]
    load(store, [StoredDoc("with-meta", 42, VERSION, "正文", "标题")])
    assert store.get(["with-meta"])[0].meta == ()
    report = store.put([StoredDoc("bad-meta", 44, VERSION, "x", meta=(("colour", "red"),)),
                        StoredDoc("twice", 45, VERSION, "x", meta=(("url", "a"), ("url", "b")))])
    assert [i for i, _ in report.failed] == ["bad-meta", "twice"] and all("meta" in why for _, why in report.failed)


@pytest.mark.parametrize(
    "doc_id",
    ["文档/一", "a/b/c", "/leading-slash", "with space", "emoji-😀", "é-ü-ß", "q?x=1&y=2#frag", "percent%20", "dot.."],
)
def test_ids_with_unicode_and_slashes_round_trip(store: Store, doc_id: str) -> None:
    fp = 0xDEAD_BEEF_0BAD_F00D
    load(store, [StoredDoc(doc_id, fp, VERSION, "正文", "标题"), StoredDoc("plain", fp ^ 1, VERSION, "x", None)])
    assert store.get([doc_id]) == [StoredDoc(doc_id, fp, VERSION, "正文", "标题")]
    ids, fps = store.candidates(fp, VERSION, k=K)
    assert sorted(ids) == sorted([doc_id, "plain"])
    assert store.candidates(fp, VERSION, exclude_id=doc_id, k=K)[0] == ["plain"]


def test_edge_fingerprints_round_trip(store: Store) -> None:
    docs = [StoredDoc(f"e{i}", fp, VERSION, "t", None) for i, fp in enumerate([0, 1, 1 << 63, MAX, MAX - 1, (1 << 63) - 1])]
    load(store, docs)
    assert sorted((d.id, d.fingerprint) for d in store.get([d.id for d in docs])) == sorted(
        (d.id, d.fingerprint) for d in docs
    )
    for d in docs:
        ids, fps = store.candidates(d.fingerprint, VERSION, k=K)
        assert dict(zip(ids, fps.tolist()))[d.id] == d.fingerprint


def test_one_id_or_document_alone_is_refused_where_a_list_is_wanted(store: Store) -> None:
    store.put(docs_of(4))
    store.refresh()
    for call in (lambda: store.delete("doc"), lambda: store.get("doc"), lambda: store.put(docs_of(1)[0])):  # type: ignore[arg-type]
        with pytest.raises(ConfigError, match="as a list"):
            call()
    assert store.count() == 4


def test_bad_records_are_reported_and_the_rest_written(store: Store) -> None:
    good = docs_of(4)
    bad = [
        StoredDoc("too-big", 1 << 64, VERSION),
        StoredDoc("negative", -1, VERSION),
        StoredDoc("surrogate", 1, VERSION, text="半个\ud800字符"),  # no store can write it (UTF-8 cannot)
    ]
    report = store.put(good[:2] + bad + good[2:])
    assert report.written == 4
    assert sorted(i for i, _ in report.failed) == ["negative", "surrogate", "too-big"]
    assert all(reason for _, reason in report.failed)
    assert "lone surrogate (U+D800 at offset 2)" in dict(report.failed)["surrogate"]
    store.refresh()
    assert store.count() == 4


# --------------------------------------------------------------------------- candidates


def test_candidates_cover_brute_force_and_rerank_equals_it(store: Store) -> None:
    """For every ``k`` the stores answer (0 to 7), what brute force finds within ``k``: the same near-duplicates
    from every store, one at a time and many at once."""
    data = corpus()
    load(store, data.docs)
    assert store.count() == len({d.id for d in data.docs})
    for k in range(8):
        assert_candidates_within(store, data, k)


def assert_candidates_within(store: Store, data: Corpus, k: int) -> None:
    """Every query's candidates within ``k`` cover brute force, re-rank to exactly it, and ``candidates_many`` finds
    them too."""
    stored = {d.id: d.fingerprint for d in data.docs}
    misses, extras, nonempty = [], [], 0
    many = store.candidates_many([(q, VERSION) for q in data.queries], k=k)
    for q, (many_ids, many_fps) in zip(data.queries, many):
        expected = data.within(q, k)
        ids, fps = store.candidates(q, VERSION, k=k)
        assert len(ids) == len(fps)
        assert all(stored[i] == f for i, f in zip(ids, fps.tolist())), "fingerprints must match ids"
        missing = set(expected) - set(ids)
        if missing:
            misses.append((hex(q), sorted(missing)))
        want = sorted(expected.items(), key=lambda kv: (kv[1], kv[0]))
        for found_ids, found_fps in ((ids, fps), (many_ids, many_fps)):
            got = [(m.id, m.distance) for m in rerank(q, found_ids, found_fps, k)]
            if got != want:
                extras.append((hex(q), got, want))
        nonempty += bool(expected)
    assert misses == [], f"{len(misses)} queries missed documents within k={k}: {misses[:5]}"
    assert extras == [], f"{len(extras)} queries re-ranked differently from brute force at k={k}: {extras[:3]}"
    assert nonempty >= 190 + 10 * min(k, 4)  # the data really exercises near neighbours (194 at k = 0, 295 from 4)


def test_a_k_no_lookup_answers_is_refused_alike(store: Store) -> None:
    for k in (-1, 8, 3.0, True):
        with pytest.raises(ConfigError, match="k must be a whole number from 0 to 7"):
            store.candidates(0, VERSION, k=k)  # type: ignore[arg-type]
        with pytest.raises(ConfigError, match="k must be a whole number from 0 to 7"):
            store.candidates_many([(0, VERSION)], k=k)  # type: ignore[arg-type]


def test_candidates_follow_the_fingerprint_version(store: Store) -> None:
    data = corpus()
    load(store, data.docs)
    others = [d for d in data.docs if d.version == OTHER_VERSION]
    assert others
    for d in others:
        ids, _ = store.candidates(d.fingerprint, VERSION, k=K)
        assert not any(i.startswith("other-") for i in ids)
        ids, fps = store.candidates(d.fingerprint, OTHER_VERSION, k=K)
        assert d.id in ids
        assert all(i.startswith("other-") for i in ids)
        assert [(m.id, m.distance) for m in rerank(d.fingerprint, ids, fps, K)] == sorted(
            data.within(d.fingerprint, K, OTHER_VERSION).items(), key=lambda kv: (kv[1], kv[0])
        )
    ids, fps = store.candidates(others[0].fingerprint, "never-indexed-version", k=K)
    assert ids == [] and len(fps) == 0


def test_candidates_many_are_each_querys_candidates(store: Store) -> None:
    # More than 100 queries (one search holds 100 on Elasticsearch), of both versions and of none stored.
    data = corpus()
    load(store, data.docs)
    queries = [(q, VERSION) for q in data.queries] + [(d.fingerprint, d.version) for d in data.docs[::7]]
    queries += [(data.queries[0], "never-indexed-version")]
    assert len(queries) > 250
    many = store.candidates_many(queries, k=K)
    assert len(many) == len(queries)
    found = 0
    for (fp, version), (ids, fps) in zip(queries, many):
        want_ids, want_fps = store.candidates(fp, version, k=K)
        assert sorted(zip(ids, fps.tolist())) == sorted(zip(want_ids, want_fps.tolist())), (hex(fp), version)
        found += bool(ids)
    assert found > 200 and many[-1][0] == []


def test_same_id_under_a_new_version_moves(store: Store) -> None:
    load(store, [StoredDoc("moving", 7, VERSION, "t", None)])
    load(store, [StoredDoc("moving", 7, OTHER_VERSION, "t", None)])
    assert store.count() == 1
    assert store.candidates(7, VERSION, k=K)[0] == []
    assert store.candidates(7, OTHER_VERSION, k=K)[0] == ["moving"]


def test_put_writes_the_group_fields_only_when_asked_and_keys_are_known_before(store: Store) -> None:
    grouped = [StoredDoc(f"g{n}", n, VERSION, group="0123456789abcdef", group_size=2, group_kind="near-duplicate")
               for n in (1, 3)]
    keys = store.put_keys(["g1", "g3", "plain"])
    assert store.put([*grouped, StoredDoc("plain", 7, VERSION)], with_groups=True).written == 3
    assert store.put([StoredDoc("ignored", 15, VERSION, group="ffffffffffffffff", group_size=2)]).written == 1
    store.refresh()
    rows = {row.id: row for row in store.group_rows(ids=["g1", "g3", "plain", "ignored"])}
    assert keys == [rows[i].key for i in ("g1", "g3", "plain")]
    assert [(rows[i].group, rows[i].size, rows[i].kind) for i in ("g1", "g3")] == [
        ("0123456789abcdef", 2, "near-duplicate")] * 2
    assert (rows["plain"].group, rows["ignored"].group) == (None, None)
    assert [d.id for d in store.get(["g1"]) if d.group == "0123456789abcdef"] == ["g1"]


def test_exclude_id(store: Store) -> None:
    fp = 0x0F0F_0F0F_F0F0_F0F0
    load(store, [StoredDoc("self", fp, VERSION), StoredDoc("twin", fp, VERSION), StoredDoc("near", fp ^ 0b101, VERSION)])
    ids, _ = store.candidates(fp, VERSION, exclude_id="self", k=K)
    assert sorted(ids) == ["near", "twin"]
    ids, _ = store.candidates(fp, VERSION, exclude_id="not-there", k=K)
    assert sorted(ids) == ["near", "self", "twin"]


# --------------------------------------------------------------------------- groups


def test_groups_equal_the_components_of_brute_force_pairs(store: Store) -> None:
    """``update_groups`` over the seam: every store writes the same groups, re-runs write nothing."""
    from simdup_es.groups import components, update_groups

    rng = np.random.default_rng(5)
    docs = list(corpus(bases=40, randoms=200).docs)
    docs.append(StoredDoc("exact-copy", docs[0].fingerprint, VERSION, "copy", None))
    load(store, docs)
    summary = update_groups(store)
    want: dict[str, set[str]] = {}
    same = [d for d in docs if d.version == VERSION]
    pairs = [(a, b) for a in range(len(same)) for b in range(a + 1, len(same))
             if (same[a].fingerprint ^ same[b].fingerprint).bit_count() <= 3]
    others = [d for d in docs if d.version == OTHER_VERSION]
    pairs_other = [(a, b) for a in range(len(others)) for b in range(a + 1, len(others))
                   if (others[a].fingerprint ^ others[b].fingerprint).bit_count() <= 3]
    for group, roots in ((same, components(pairs)), (others, components(pairs_other))):
        for pos, root in roots.items():
            want.setdefault(group[root].id, set()).add(group[pos].id)
    got: dict[str, set[str]] = {}
    stored = store.get([d.id for d in docs])
    for doc in stored:
        if doc.group is not None:
            got.setdefault(doc.group, set()).add(doc.id)
    assert sorted(map(sorted, got.values())) == sorted(map(sorted, want.values()))
    assert all(doc.group_size == len(got[doc.group]) for doc in stored if doc.group is not None)
    assert (summary.groups, summary.grouped, summary.set) == (len(want), sum(map(len, want.values())), summary.grouped)
    again = update_groups(store)
    assert (again.set, again.cleared, again.unchanged) == (0, 0, summary.grouped)
    # A member replaced by a far fingerprint leaves its group; a group of two falls apart.
    two = next(ids for ids in want.values() if len(ids) == 2)
    leaver = sorted(two)[0]
    load(store, [StoredDoc(leaver, int(rng.integers(0, MAX, dtype=np.uint64, endpoint=True)), VERSION)])
    third = update_groups(store)
    assert third.cleared == 1 and third.groups == len(want) - 1
    assert {d.id: d.group for d in store.get(sorted(two))} == dict.fromkeys(sorted(two))
