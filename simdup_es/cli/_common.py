"""Options and helpers shared by the commands."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import click

from ..config import FingerprintParams
from ..fingerprint import Fingerprinter
from ..sources import Fields, Item, Record, Reject, read_jsonl, read_paths

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


def make_fingerprinter(idf_path: Path | None, marked_words: Path | None, max_bytes: int) -> Fingerprinter:
    words: frozenset[str] = frozenset()
    if marked_words is not None:
        lines = marked_words.read_text(encoding="utf-8").splitlines()
        words = frozenset(w.strip() for w in lines if w.strip() and not w.startswith("#"))
    return Fingerprinter(FingerprintParams(idf_path=idf_path, marked_words=words, max_bytes=max_bytes))


def read_inputs(inputs: tuple[str, ...], fields: Fields) -> Iterator[Item]:
    """Items from INPUT arguments: files, folders, or ``-`` for JSON Lines on stdin."""
    for name in inputs:
        if name == "-":
            yield from read_jsonl(sys.stdin, "<stdin>", fields)
        else:
            yield from read_paths([Path(name)], fields)


def progress(items: Iterable[T], label: str, total: int | None = None) -> Iterator[T]:
    """Show a progress bar with a rate on stderr when it is a terminal."""
    if not sys.stderr.isatty():
        yield from items
        return
    from rich.console import Console
    from rich.progress import MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    columns = [SpinnerColumn(), TextColumn("{task.description}"), MofNCompleteColumn(), TimeElapsedColumn(),
               TextColumn("{task.fields[rate]}")]
    with Progress(*columns, console=Console(stderr=True), transient=False) as bar:
        task = bar.add_task(label, total=total, rate="")
        for item in items:
            yield item
            bar.advance(task)
            speed = bar.tasks[0].speed
            if speed:
                bar.update(task, rate=f"{speed:,.0f} docs/s")


def echo_json(obj: object) -> None:
    click.echo(json.dumps(obj, ensure_ascii=False))


class RejectLog:
    """Writes rejected items to a JSON Lines file (if asked) and counts them."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.count = 0
        self._file = open(path, "w", encoding="utf-8") if path else None

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


def split(items: Iterable[Item], rejects: RejectLog) -> Iterator[Record]:
    """Records, sending rejects to the log."""
    for item in items:
        if isinstance(item, Reject):
            rejects.add(item.source, item.reason, item.id)
        else:
            yield item
