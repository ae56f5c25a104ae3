"""simdup as a service account or in a container: no writable home, no cache folder of its own."""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from simdup_es import paths, tokens
from simdup_es.tokens import IdfTable

NOBODY = 65534
TEXT = "今天天气很好，我们一起去公园散步，然后在湖边的茶馆里喝茶聊天，一直坐到太阳下山才回家。"


def _unprivileged(args: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """``args`` run by a user who cannot write where root or the developer can, with ``HOME=/nonexistent``.

    As root: the ``nobody`` user (``setpriv``), allowed to read and search every folder
    (``CAP_DAC_READ_SEARCH``: the interpreter may live under ``/root``), never to write
    one it does not own. Otherwise the user running the tests, who cannot make
    ``/nonexistent`` either.
    """
    if os.getuid() == 0:
        setpriv = shutil.which("setpriv")
        assert setpriv, "setpriv (util-linux) is needed to run a command as nobody"
        os.chown(cwd, NOBODY, NOBODY)
        args = [setpriv, f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "--inh-caps=+dac_read_search",
                "--ambient-caps=+dac_read_search", *args]
    base = {"PATH": "/usr/bin:/bin", "HOME": "/nonexistent", "LANG": "C.UTF-8", "PYTHONPATH": os.environ.get("PYTHONPATH", "")}
    return subprocess.run(args, cwd=cwd, env={**base, **env}, capture_output=True, text=True, timeout=300)


def _simdup(*args: str) -> list[str]:
    return [sys.executable, "-c", "from simdup_es.cli import main; main()", *args]


def test_every_command_runs_without_a_writable_home(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "a.txt").write_text(TEXT, encoding="utf-8")
    (work / "b.txt").write_text(TEXT.replace("茶馆", "小店"), encoding="utf-8")
    fp = _unprivileged(_simdup("fingerprint", "--text", TEXT), work)
    assert fp.returncode == 0 and '"fingerprint"' in fp.stdout, fp.stderr
    same = _unprivileged(_simdup("compare", "a.txt", "b.txt", "--json"), work)
    assert same.returncode == 0 and '"kind": "near-duplicate"' in same.stdout, same.stderr
    indexed = _unprivileged(_simdup("index", "a.txt", "--store", "st"), work)
    assert indexed.returncode == 0 and "indexed 1" in indexed.stderr, indexed.stderr
    found = _unprivileged(_simdup("search", "b.txt", "--store", "st", "--json"), work)
    assert found.returncode == 0 and '"id": "a.txt"' in found.stdout, found.stderr
    # The tables were cached for the next start, in the user's own folder of the temporary folder.
    cached = list(Path("/tmp").glob(f"simdup-es-{os.getuid() if os.getuid() else NOBODY}/idf-*.npy"))
    assert cached and all(os.stat(p).st_uid == (os.getuid() or NOBODY) for p in cached)


def test_an_unwritable_simdup_cache_is_named_and_another_folder_used(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    run = _unprivileged(_simdup("fingerprint", "--text", TEXT), work, SIMDUP_CACHE="/nonexistent/cache")
    assert run.returncode == 0 and '"fingerprint"' in run.stdout, run.stderr
    assert "cannot write the cache folder SIMDUP_CACHE=/nonexistent/cache" in run.stderr, run.stderr


def test_no_cache_folder_at_all_costs_a_rebuild_and_says_how_to_give_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("", encoding="utf-8")  # every folder's place is taken by a file: none can be made
    monkeypatch.setenv("SIMDUP_CACHE", str(blocked / "cache"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocked / "xdg"))
    with caplog.at_level(logging.WARNING, "simdup_es.paths"):
        assert paths._cache_dir(str(blocked / "cache"), str(blocked / "xdg"), "/nonexistent", str(blocked)) is None
    assert "set SIMDUP_CACHE to a folder you can write" in caplog.text
    monkeypatch.setattr(tokens, "cache_dir", lambda: None)
    idf = tokens._jieba_dir() / "analyse" / "idf.txt"
    table = IdfTable.load(idf)  # read straight from jieba's world-readable file
    assert len(table.idf) > 100_000 and table.idf.get("公园") is not None
    assert [p.name for p in tmp_path.iterdir()] == ["file"]
