"""weigh's shortcuts: a document without title words, and every token already cached, give the same floats."""

from __future__ import annotations

from simdup_es.config import FingerprintParams
from simdup_es.text import unify
from simdup_es.tokens import IdfTable, Lexicon, Tokenizer, weigh
from tests._data import load_corpus


def test_no_title_words_and_cached_tokens_change_no_bit() -> None:
    params = FingerprintParams()
    tokenizer = Tokenizer()
    docs = [tokenizer.segment(unify(d["text"])) for d in load_corpus("zh-docs.jsonl")[::10]]
    assert len(docs) > 300
    cold = Lexicon(params, IdfTable.load())
    first = [weigh(tokens, cold) for tokens in docs]  # tokens missing from the cache
    assert cold.cache
    warm = [weigh(tokens, cold) for tokens in docs]  # all cached
    # A title word found in no document takes the branch that adds TITLE (0.0 for every word).
    titled = [weigh(tokens, cold, title_words=frozenset({"\x00not a token"})) for tokens in docs]
    assert first == warm == titled
    assert sum(len(h) for h, _ in first) > 10_000
    # The title branch does weigh title words.
    word = next(t for t in docs[0] if cold.entry(t) is not None)
    assert weigh(docs[0], cold, title_words=frozenset({word})) != first[0]
