"""Options and helpers shared by the commands."""

from __future__ import annotations

import json
import os
import re
import stat
import sys
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, TextIO, TypeVar

import click

from ..config import FingerprintParams, Retry
from ..fingerprint import Fingerprinter
from ..errors import ConfigError, InputError
from ..sources import Fields, Item, Record, Reject, path_id, read_file, read_jsonl, read_paths
from ..extract import kind_of

if TYPE_CHECKING:
    from rich.console import Console

    from ..search import MatrixComparer
    from ..service import Service
    from ..store.base import Store

T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., Any])


def field_options(func: F) -> F:
    """--text-field/--title-field/--id-field for JSON Lines and CSV input."""
    func = click.option("--id-field", default="id", show_default=True,
                        help="Record field with the document id (a record without one gets an id made from its "
                             "content; when you name the field, a record without it is rejected).")(func)
    func = click.option("--title-field", default="title", show_default=True, help="Record field with the title.")(func)
    func = click.option("--text-field", default="text", show_default=True, help="Record field with the text.")(func)
    return func


def record_fields(text_field: str, title_field: str, id_field: str) -> Fields:
    """The fields of :func:`field_options`; an id field named on the command line is required of every record."""
    return Fields(text_field, title_field or None, id_field or None, require_id=_named("id_field") and bool(id_field))


def _named(param: str) -> bool:
    """Whether the running command's option ``param`` was given on the command line."""
    ctx = click.get_current_context(silent=True)
    return ctx is not None and ctx.get_parameter_source(param) is click.core.ParameterSource.COMMANDLINE


def counted(n: int, word: str, plural: str | None = None) -> str:
    """``1 copy``, ``2 copies``: ``n`` and the word in its number."""
    return f"{n} {word if n == 1 else plural or word + 's'}"


def stored_ids(store: Store, ids: list[str], id_base: Path | None = None) -> list[str]:
    """``ids``, each one the store does not hold replaced by the id ``index`` (with ``id_base``) gives the file it
    names, when the store holds that one (``./corpus/a.txt`` or an absolute path for ``corpus/a.txt``, indexed from
    here; ``corpus/a.txt`` for ``a.txt``, indexed with ``--id-base corpus``)."""
    held = {doc.id for doc in store.get(ids)}
    as_paths = {doc_id: path_id(Path(doc_id), id_base) for doc_id in ids if doc_id not in held}
    found = {doc.id for doc in store.get([p for doc_id, p in as_paths.items() if p != doc_id])}
    return [as_paths[doc_id] if as_paths.get(doc_id) in found else doc_id for doc_id in ids]


def id_base_option(func: F) -> F:
    """--id-base: the folder the ids of document files are relative to."""
    return click.option(
        "--id-base", type=click.Path(file_okay=False, path_type=Path), envvar="SIMDUP_ID_BASE",
        help="A document file's id is its path relative to this folder (default: the current folder), however "
             "the file is named; a file outside it gets its absolute path [env SIMDUP_ID_BASE].")(func)


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
        "--max-bytes", type=click.IntRange(min=1), default=FingerprintParams.max_bytes, show_default=True,
        help="Refuse larger documents."
    )(func)
    return func


def bulk_options(func: F) -> F:
    """--workers/--batch-size/--rejects for commands that fingerprint and write in bulk."""
    func = click.option("--rejects", type=click.Path(dir_okay=False, path_type=Path), default=Path("rejects.jsonl"),
                        show_default=True, help="Where rejected records go, with their reasons (JSON Lines).")(func)
    func = click.option("--batch-size", type=click.IntRange(min=1), default=500, show_default=True,
                        help="Documents per bulk request.")(func)
    return click.option("--workers", type=click.IntRange(min=1), help="Fingerprinting processes (default: all cores).")(func)


def make_fingerprinter(idf_path: Path | None, marked_words: Path | None, max_bytes: int) -> Fingerprinter:
    words: frozenset[str] = frozenset()
    if marked_words is not None:
        try:
            lines = marked_words.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"cannot read marked words {marked_words}: {exc}; it must be UTF-8 text") from None
        words = frozenset(w.strip() for w in lines if w.strip() and not w.startswith("#"))
    return Fingerprinter(FingerprintParams(idf_path=idf_path, marked_words=words, max_bytes=max_bytes))


def read_inputs(inputs: tuple[str, ...], fields: Fields, skip: Iterable[Path] = (),
                id_base: Path | None = None) -> Iterator[Item]:
    """Items from INPUT arguments: files, folders, or ``-`` for JSON Lines on stdin.

    Folder walks leave out simdup's own outputs, and the files in ``skip`` (the command's).
    Document files get ids relative to ``id_base`` (default: the current folder). When
    ``--title-field`` was given and no record had that field, says so at the end.
    """
    skip = tuple(skip)
    records = titled = 0
    for name in inputs:
        items = (read_jsonl(sys.stdin.buffer, "<stdin>", fields) if name == "-"
                 else read_paths([Path(name)], fields, skip=skip, id_base=id_base))
        for item in items:
            if isinstance(item, Record):
                records, titled = records + 1, titled + (item.title is not None)
            yield item
    if records and not titled and fields.title and _named("title_field"):  # a mistyped field name, most likely
        click.echo(f"no record had a title in field {fields.title!r}: check --title-field", err=True)


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


#: What each phase of ``simdup groups`` is called on the progress display.
_PHASES = {"read": "reading fingerprints", "join": "finding pairs", "members": "reading group members",
           "matrix": "comparing pairs (matrix)", "partial": "looking up partial copies", "components": "joining groups",
           "write": "writing groups", "fingerprint": "fingerprinting", "compare": "comparing candidates"}


@contextmanager
def phase_progress() -> Iterator[Callable[[str, int, int | None], None] | None]:
    """A :data:`simdup_es.groups.Progress` that draws each phase on stderr if it is a terminal (else ``None``).

    A phase with a total gets a bar with items per second; one without, a spinner
    and a count. The previous phase's line stays, with its time.
    """
    if not sys.stderr.isatty():
        yield None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    columns = [SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
               TimeElapsedColumn(), TextColumn("{task.fields[rate]}")]
    with Progress(*columns, console=Console(stderr=True)) as bar:
        tasks: dict[str, Any] = {}

        def update(phase: str, done: int, total: int | None) -> None:
            if phase not in tasks:
                for other in tasks.values():  # the earlier phase ended: stop its clock
                    bar.stop_task(other)
                tasks[phase] = bar.add_task(_PHASES.get(phase, phase), total=total, rate="")
            task = tasks[phase]
            bar.update(task, completed=done, total=total)
            speed = next(t.speed for t in bar.tasks if t.id == task)
            if speed:
                bar.update(task, rate=f"{speed:,.1f}/s")

        yield update


def progress(items: Iterable[T], label: str, total: int | None = None) -> Iterator[T]:
    """Pass ``items`` through, drawing a progress bar."""
    with progress_bar(label, total) as update:
        for done, item in enumerate(items, 1):
            yield item
            update(done)


def echo_json(obj: object) -> None:
    click.echo(json.dumps(obj, ensure_ascii=False))


def _is_regular_file(path: Path) -> bool:
    try:
        return stat.S_ISREG(path.stat().st_mode)
    except OSError:
        return False


# Rejects shown on stderr as they happen, besides the rejects file.
SHOWN_REJECTS = 5


class RejectLog:
    """Appends rejected items to a JSON Lines file (if asked) and counts them; without a file, or the first
    ``show`` of them, on stderr too.

    Each run's rejects follow a header line of their own, ``{"run": START, "command": ...}``
    (UTC, ISO 8601), written before the first of them: the rejects of earlier runs stay
    (a scheduled job keeps every run's), and a run that rejects nothing writes nothing.
    ``keep`` (bytes) cuts the file there first: a resumed run continues the rejects of the
    run it resumes, which began at ``start``, under its header.
    """

    def __init__(self, path: Path | None, keep: int | None = None, show: int = 0, start: int | None = None) -> None:
        self.path = path
        self.count = 0
        self.show = show  # the first rejects also shown on stderr when they go to the file
        self.started = datetime.now(UTC).isoformat(timespec="seconds")
        ctx = click.get_current_context(silent=True)
        # "simdup index", however the program was started (python -c, a test runner)
        self.command = " ".join(["simdup", *ctx.command_path.split(" ")[1:]]) if ctx is not None else "simdup"
        # A resumed run's rejects go on under the header of the stopped run, which began at ``start``, if it wrote one.
        self.header = keep is not None and start is not None and keep > start
        # Opened now (by ``simdup index`` once the store is open): an unwritable path fails before any work.
        self._file: TextIO | None = None
        # A file this run made and left empty is removed; never a device (``--rejects /dev/null``), a FIFO or a
        # symlink's target, nor a file that was there.
        self._removable = False
        if path is not None:
            existed = path.exists() or path.is_symlink()
            self._file = open_output(path, append=True)
            self._removable = not existed and _is_regular_file(path)
            if keep is not None:
                if self.size() < keep:
                    self._file.close()
                    raise ConfigError(f"{path} is shorter than the resume point says: rejects of the earlier run "
                                      "were removed; run without --resume to start over")
                self._file.truncate(keep)  # lines past the resume point: the resumed run writes them again
        self.start = start if keep is not None and start is not None else self.size()  # where this run's lines begin

    def size(self) -> int:
        """Bytes in the file so far (all of them flushed to it)."""
        if not self._file:
            return 0
        self._file.flush()
        return os.fstat(self._file.fileno()).st_size

    def add(self, source: str, reason: str, id: str | None = None) -> None:
        self.count += 1
        if self._file:
            if not self.header:
                self._file.write(json.dumps({"run": self.started, "command": self.command}) + "\n")
                self.header = True
            line = {"source": source, "id": id, "reason": reason}
            self._file.write(json.dumps(line, ensure_ascii=False) + "\n")
        if not self._file or self.count <= self.show:
            click.echo(f"rejected {source}: {reason}", err=True)

    def note(self) -> str:
        """Where this run's rejects are, for the summary."""
        shown = f"; the first {self.show} of {self.count} are above" if self.count > self.show > 0 else ""
        return f"rejected records and reasons: {self.path} (this run's after the line {{\"run\": \"{self.started}\", ...}}" \
               f"{shown})"

    def close(self) -> None:
        if self._file:
            empty = self.size() == 0
            self._file.close()
            self._file = None
            if empty and self.path and self._removable:
                self.path.unlink(missing_ok=True)  # made by this run, which rejected nothing


def output_console() -> Console:
    """A rich console for stdout: a terminal's width; piped, ``COLUMNS`` or 160 (rich would cut at 80)."""
    from rich.console import Console

    return Console() if sys.stdout.isatty() or os.environ.get("COLUMNS") else Console(width=160)


def open_output(path: Path, *, append: bool = False) -> TextIO:
    """Open a file the command will write (creating its folder), or say plainly why it cannot."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"cannot write {path}: its folder cannot be made ({exc.strerror or exc}: "
                          f"{exc.filename or path.parent})") from None
    try:
        return open(path, "a" if append else "w", encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot write {path}: {exc.strerror or exc}") from None


def retry_options(func: F) -> F:
    """--max-retries/--initial-backoff: how long a bulk write waits out a busy or unreachable cluster."""
    default = Retry()
    func = click.option(
        "--initial-backoff", type=click.FloatRange(min=0), default=default.initial_backoff, show_default=True,
        help=f"Seconds before the first retry; each next wait doubles, up to {default.max_backoff:g} s.")(func)
    return click.option(
        "--max-retries", type=click.IntRange(min=0), default=default.max_retries, show_default=True,
        help="Retries of a bulk request, or of documents in it, that the cluster rejects as too busy (429, or "
             "502/503/504), cannot be reached or does not answer in time: a request is sent at most this many times "
             f"plus one (the client does not retry it as well). The defaults wait {default.budget:.0f} s in all "
             "between the tries before the run stops.")(func)


class Checkpoint:
    """The resume point of ``simdup index``: a small JSON file next to the rejects file.

    It records the inputs and fields of the run, how many input items are settled
    (each written or in the rejects file) and how long the rejects file was then.
    It is replaced after every batch and removed when the run finishes.
    """

    VERSION = 1

    def __init__(self, rejects: Path, inputs: tuple[str, ...], fields: Fields) -> None:
        # Beside the rejects file; in the working folder when that is a device or a
        # pipe (``--rejects /dev/null``), whose folder is not the user's to write in.
        regular = _is_regular_file(rejects) or not rejects.exists()
        self.path = (rejects.with_name(rejects.stem + ".resume.json") if regular
                     else Path("simdup-index.resume.json").absolute())
        self.run = {"inputs": [os.path.abspath(i) if i != "-" else i for i in inputs],  # no lookup: any name
                    # (the required id only when it is: resume points written before it still match)
                    "fields": [fields.text, fields.title, fields.id, *(["id required"] if fields.require_id else [])]}
        self.settled = self.rejects_bytes = 0  # the last state saved (or loaded)
        self.rejects_start = 0  # where the run's rejects begin in the file (the rejects of earlier runs before it)

    def load(self) -> dict[str, Any] | None:
        """The saved state of an earlier run of the same inputs; ``None`` when there is none."""
        try:
            state = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:
            raise ConfigError(f"cannot read the resume point {self.path}: {exc}; delete it to start over") from None
        if not isinstance(state, dict) or state.get("version") != self.VERSION or not isinstance(
                state.get("settled"), int) or not isinstance(state.get("rejects_bytes"), int):
            raise ConfigError(f"{self.path} is not a resume point of this simdup; delete it to start over")
        if {k: state.get(k) for k in self.run} != self.run:
            raise ConfigError(f"the resume point {self.path} is for other inputs or fields "
                              f"({' '.join(state.get('inputs') or [])}): give the same ones, or run without --resume "
                              "to start over")
        self.settled, self.rejects_bytes = state["settled"], state["rejects_bytes"]
        start = state.get("rejects_start")  # (not in resume points written before rejects were appended)
        self.rejects_start = start if isinstance(start, int) and 0 <= start <= self.rejects_bytes else 0
        return state

    def save(self, settled: int, rejects_bytes: int) -> None:
        tmp = self.path.with_name(self.path.name + ".tmp")
        try:
            tmp.write_text(json.dumps({"version": self.VERSION, **self.run, "settled": settled,
                                       "rejects_bytes": rejects_bytes, "rejects_start": self.rejects_start}),
                           encoding="utf-8")
            os.replace(tmp, self.path)  # a kill leaves the old state or the new, never half of one
        except OSError as exc:
            raise ConfigError(f"cannot write the resume point {self.path}: {exc.strerror or exc}") from None
        self.settled, self.rejects_bytes = settled, rejects_bytes

    def remove(self) -> None:
        self.path.unlink(missing_ok=True)


def split(items: Iterable[Item], rejects: RejectLog) -> Iterator[Record]:
    """Records, sending rejects to the log."""
    for item in items:
        if isinstance(item, Reject):
            rejects.add(item.source, item.reason, item.id)
        else:
            yield item


def read_document(arg: str, label: str = "literal text", *, text: bool = False) -> Record:
    """A document argument: an existing file is read (as ``simdup index`` reads it,
    title included, so fingerprints agree); anything else (all of it with ``text``) is
    literal text named ``label``."""
    if text:
        return Record(arg, label)
    path = existing_file(arg)
    if path is not None:
        items = list(read_file(path, Fields()))
        if len(items) != 1 or not isinstance(items[0], Record):
            reason = getattr(items[0], "reason", "holds several records; give one document") if items else "empty"
            raise InputError(reason, source=arg)
        return items[0]
    if is_folder(Path(arg)):
        raise InputError("a folder, not a document (give --text to use its name as text)", source=arg)
    if looks_like_path(arg):
        raise InputError("no such file (give --text to use it as text)", source=arg)
    return Record(arg, label)


def _excluded_text(name: str) -> str:
    """The text of an ``--exclude-file``, read as ``simdup index`` reads a file."""
    if is_folder(Path(name)):
        raise InputError("a folder, not a file: --exclude-file takes one file, a document whose text never counts",
                         source=name)
    if existing_file(name) is None:
        raise InputError("no such file (--exclude-file names a document whose text never counts)", source=name)
    text = read_document(name, "--exclude-file").text
    if not any(c.isalnum() for c in text):
        raise InputError("no words (empty, whitespace or punctuation only), so it would exclude nothing: give the "
                         "file of a template or base text", source=name)
    return text


def existing_file(arg: str) -> Path | None:
    """``arg`` as a path when it names a file (``None`` for text, or a name too long to be one)."""
    path = Path(arg)
    try:
        return path if path.is_file() else None
    except OSError:  # literal text longer than a file name (ENAMETOOLONG)
        return None


#: A file name: no space, a name and an extension of letters and digits (``essay.tx``, ``报告.docx``), not a number.
_FILE_NAME = re.compile(r"[^\s/]+\.(?=[0-9]*[A-Za-z])[A-Za-z0-9]{1,10}")


def looks_like_path(arg: str) -> bool:
    """Whether ``arg``, which names no file, is a mistyped path rather than text: a document's name, a
    name with an extension and no space, a path without spaces or CJK, or one in an existing folder."""
    return bool(kind_of(arg)) or _FILE_NAME.fullmatch(arg) is not None or "/" in arg and (
        not any(ch.isspace() or ord(ch) > 0x2E7F for ch in arg) or is_folder(Path(arg).parent))


def is_folder(path: Path) -> bool:
    """Whether ``path`` is a folder other than the current one (``False`` for a name too long to be one)."""
    try:
        return path != Path(".") and path.is_dir()
    except OSError:  # a name too long
        return False


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
        click.option("--unwrap", is_flag=True,
                     help="Read hard-wrapped text (PDF, mail) as its sentences: a line break after a full line that "
                          "does not end a sentence does not end one."),
    ]
    for option in reversed(options):
        func = option(func)
    return func


COMPARE_KEYS = ("similar_weight", "right_weight", "synonym_file", "no_synonyms", "trim_boilerplate", "unwrap")


def make_comparer(kwargs: dict[str, Any], matrix: bool = True) -> MatrixComparer | None:
    """:func:`simdup_es.search.comparer` from the compare options (popped from ``kwargs``); ``None`` without
    ``matrix`` (nothing loaded for a search that compares nothing)."""
    from ..compare import CompareParams
    from ..search import comparer

    opts = {k: kwargs.pop(k) for k in COMPARE_KEYS}
    params = CompareParams(similar_weight=opts["similar_weight"], right_weight=opts["right_weight"],
                           use_synonyms=not opts["no_synonyms"], trim_boilerplate=opts["trim_boilerplate"],
                           unwrap=opts["unwrap"])
    return comparer(params, opts["synonym_file"]) if matrix else None


def k_option(func: F) -> F:
    """``-k``: the document level's distance, the same range and words in every command that takes it."""
    from .. import keys
    from ..multilevel import MultiParams

    return k_range(MultiParams.k, f"Largest Hamming distance of a near-duplicate, 0 to {keys.MAX_K} (it shares at "
                   "least 8 - k of the fingerprint's 8 blocks). Above 3 the comparison matrix should decide: see "
                   "docs/design.md.")(func)


def k_range(default: int, help: str) -> Callable[[F], F]:
    """A ``-k`` option over the range every lookup answers (0 to :data:`simdup_es.keys.MAX_K`): :func:`k_option`'s,
    or a command's own default and words (``dedup``'s)."""
    from .. import keys

    return click.option("-k", "--k", "k", type=click.IntRange(0, keys.MAX_K), default=default, show_default=True,
                        help=help)


def search_options(func: F) -> F:
    """-k, --partial-threshold, --common and --exclude-file: what a search takes for a near-duplicate, for a partial
    copy, and for common text."""
    from ..multilevel import MultiParams

    func = click.option("--exclude-file", "exclude_files", multiple=True, metavar="FILE",
                        help="A document whose text never counts as copied: a template, a base file (MOSS's -b). "
                             "Repeatable.")(func)
    func = common_option("")(func)
    func = click.option("--partial-threshold", type=click.FloatRange(0.0, 1.0), default=MultiParams.partial_threshold,
                        show_default=True, help="A partial copy has at least this share of either side copied (0: "
                        "any copied sentence that few stored documents hold).")(func)
    return k_option(func)


def common_option(when: str) -> Callable[[F], F]:
    """``--common N|P%`` (``when``: the words that say when it applies, e.g. "With --partial: ")."""
    help = (f"{when}text held by more than N stored documents, or by more than P% of them (at least 10), is common "
            "text (a footer, a template sentence): shown apart, never counted as copied (MOSS's -m).")
    return click.option("--common", callback=_common_threshold, default="1%", show_default=True, metavar="N|P%",
                        help=help[0].upper() + help[1:])


def _common_threshold(ctx: click.Context, param: click.Parameter, value: str) -> tuple[int | None, float]:
    """``--common``: ``(count, share)`` of :class:`~simdup_es.multilevel.MultiParams` (``common``, ``common_share``)."""
    from ..commontext import COMMON_SHARE

    text = value.strip()
    try:
        if text.endswith("%"):
            share = float(text[:-1]) / 100
            if 0 <= share <= 1:
                return None, share
        elif int(text) >= 0:
            return int(text), COMMON_SHARE
    except ValueError:
        pass
    raise click.BadParameter(f"give a number of documents (50) or a share of the store (1%), not {value!r}")


def service_options(func: F) -> F:
    """What a :class:`~simdup_es.service.Service` is made of: the fingerprint, compare and search options."""
    return fingerprint_options(compare_options(search_options(func)))


def make_service(kwargs: dict[str, Any], *, matrix: bool = True) -> Service:
    """The :class:`~simdup_es.service.Service` the options of :func:`service_options` give (popped from ``kwargs``),
    without a store yet (:meth:`~simdup_es.service.Service.with_store`); without ``matrix``, no comparer is made."""
    from ..multilevel import MultiParams
    from ..service import Service

    fingerprinter = make_fingerprinter(kwargs.pop("idf_path"), kwargs.pop("marked_words"), kwargs.pop("max_bytes"))
    comparer = make_comparer(kwargs, matrix)
    common, share = kwargs.pop("common")
    params = MultiParams(k=kwargs.pop("k"), partial_threshold=kwargs.pop("partial_threshold"), common=common,
                         common_share=share)
    excluded = [_excluded_text(name) for name in kwargs.pop("exclude_files")]
    return Service(None, fingerprinter=fingerprinter, comparer=comparer, params=params, exclude_texts=excluded)
