"""to_simplified's shortcuts: the OpenCC passes it skips could not have changed the text."""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
import sys
import unicodedata
from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import simdup_es.text as text_module
from simdup_es.opencc_tables import CONFIGS, _build_shortcuts, _dict_files, _flatten, converter, _read_shortcuts, load_shortcuts
from simdup_es.text import to_simplified, to_simplified_many
from simdup_es.paths import package_dir as _package_dir
from tests._data import load_corpus

SHARE = _package_dir("opencc") / "clib" / "share" / "opencc"
TOOL = SHARE.parent.parent / "bin" / "opencc_dict"


def three_passes(text: str) -> str:
    """The conversion as the configs state it, every pass run."""
    return converter("tw2sp").convert(converter("s2twp").convert(converter("t2s").convert(text)))


def entries(files: list[str]) -> list[tuple[str, list[str]]]:
    """Every entry of the named .ocd2 tables, dumped to text by the wheel's opencc_dict (a second reading of them)."""
    out = []
    for name in files:
        dump = subprocess.run(
            [str(TOOL), "-i", str(SHARE / name), "-o", "/dev/stdout", "-f", "ocd2", "-t", "text"],
            check=True, capture_output=True,
        ).stdout.decode("utf-8")
        out += [(k, v.split(" ")) for k, _, v in (line.partition("\t") for line in dump.splitlines())]
    return out


def config(name: str) -> dict:
    return json.loads((SHARE / f"{name}.json").read_text(encoding="utf-8"))


def test_shortcuts_are_there_and_mark_what_they_should() -> None:
    shortcuts = load_shortcuts()
    assert shortcuts is not None
    assert shortcuts.mark("软件测试，用户") == 0  # Simplified: t2s leaves it alone
    assert shortcuts.mark("軟體測試") == 1 and converter("t2s").convert("軟體測試") != "軟體測試"
    assert shortcuts.mark("\uf900") == 2 and converter("t2s").convert("\uf900") != "\uf900"  # a compatibility ideograph
    assert shortcuts.mark("abc\U0010ffff") == 0


def test_every_changing_t2s_key_holds_a_marked_character() -> None:
    shortcuts = load_shortcuts()
    assert shortcuts is not None
    keys = [k for k, values in entries(_dict_files(config("t2s")["conversion_chain"])) if any(v != k for v in values)]
    assert len(keys) > 5000
    assert [k for k in keys if shortcuts.mark(k) == 0] == []


def test_normalization_keys_are_marked_and_never_made_by_a_conversion() -> None:
    shortcuts = load_shortcuts()
    assert shortcuts is not None
    normalization = {
        k for name in CONFIGS for k, values in entries(_dict_files(config(name).get("normalization", []))) if values != [k]
    }
    assert len(normalization) > 1000
    assert all(len(k) == 1 and shortcuts.mark(k) == 2 for k in normalization)
    produced = {c for name in CONFIGS for _, values in entries(_dict_files(config(name)["conversion_chain"])) for v in values for c in v}
    assert not produced & normalization
    # NFKC replaces every one of them: unify's text never takes the long way.
    assert all(unicodedata.normalize("NFKC", k) != k for k in normalization)


_PIECES = st.sampled_from(
    ["软件", "軟體", "使用者", "預設", "檔名", "執行", "乾隆", "乾燥", "U盘", "B超", "程序", "后来", "後來", "〇", "著名", "着"]
    + ["\uf900", "\ufa0e", "\U0002f800", "豈", "⿰氵青", "信息", "資訊", "打印机", "鼠标", "，", "。", " ", "\n", "a-b", "2.5%"]
)


@given(st.lists(st.one_of(_PIECES, st.text(alphabet=st.characters(min_codepoint=0x2E80, max_codepoint=0x9FFF), max_size=3)), max_size=25).map("".join))
@settings(max_examples=400, deadline=None)
def test_to_simplified_is_the_three_passes(text: str) -> None:
    assert to_simplified(text) == three_passes(text)


@given(st.lists(st.lists(_PIECES | st.just("abc"), max_size=6).map("".join), max_size=8))
@settings(max_examples=200, deadline=None)
def test_converting_texts_together_is_converting_each(texts: list[str]) -> None:
    assert to_simplified_many(texts) == [three_passes(t) for t in texts]


@given(st.lists(st.lists(_PIECES | st.sampled_from(["abc", "\x00", "\x01", "⿰", "⿱", "执行"]), max_size=6).map("".join),
                max_size=8))
@settings(max_examples=200, deadline=None)
def test_converting_texts_together_is_converting_each_alone(texts: list[str]) -> None:
    # Joined for one OpenCC call, but for texts that hold the separator, a NUL or an ideographic description character.
    assert to_simplified_many(texts) == [to_simplified(t) for t in texts]


def test_a_description_character_ending_a_text_reaches_no_further() -> None:
    # Joined to the next text for one OpenCC call, the operator would take JOIN and that text's first character
    # as its operands (OpenCC copies a sequence whole), and leave that character unconverted.
    assert converter("s2twp").convert("⿱\x01执行") == "⿱\x01执行"
    assert to_simplified_many(["⿱", "执行程序"]) == [to_simplified("⿱"), to_simplified("执行程序")] == ["⿱", "运行程序"]


def test_a_nul_does_not_end_the_text() -> None:
    # OpenCC's s2twp and tw2sp stop at a NUL (a C string somewhere); to_simplified converts what follows too.
    assert converter("s2twp").convert("漢\x00字") == "漢"
    assert to_simplified("使用者\x00預設") == to_simplified("使用者") + "\x00" + to_simplified("預設") == "用户\x00预设"
    assert to_simplified_many(["漢\x00字", "軟體", "檔名"]) == ["汉\x00字", "软件", "文件名"]


def test_to_simplified_is_the_three_passes_on_the_corpus() -> None:
    texts = [d["text"] for d in load_corpus("zh-docs.jsonl")]
    texts += [p[side] for p in load_corpus("manpages-pairs.jsonl")[::4] for side in ("zh_cn", "zh_tw")]
    assert len(texts) > 5000
    expected = [three_passes(t) for t in texts]
    assert [to_simplified(t) for t in texts] == expected
    assert [t for i in range(0, len(texts), 64) for t in to_simplified_many(texts[i : i + 64])] == expected
    shortcuts = load_shortcuts()
    assert shortcuts is not None
    marks = [shortcuts.mark(t) for t in texts]
    assert marks.count(0) > len(texts) / 2 and marks.count(1) > 0  # both ways are taken


def test_without_shortcuts_every_pass_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(text_module, "load_shortcuts", lambda: None)
    assert to_simplified_many(["軟體", "abc", "\uf900"]) == [three_passes(t) for t in ("軟體", "abc", "\uf900")]
    assert to_simplified_many(["軟體", "abc", "\uf900"]) == [three_passes(t) for t in ("軟體", "abc", "\uf900")]
    assert to_simplified("使用者可以用預設的檔名執行指令碼") == three_passes("使用者可以用預設的檔名執行指令碼") == "用户可以用预设的文件名运行脚本"


def test_shortcuts_are_built_into_an_empty_cache_and_rebuilt_when_broken(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SIMDUP_CACHE", str(tmp_path))
    load_shortcuts.cache_clear()
    try:
        built = load_shortcuts()
        assert built is not None and sorted(p.name.split("-")[1] for p in tmp_path.glob("opencc-*-*.json") if "shortcuts" not in p.name) == sorted(CONFIGS)
        (cache,) = tmp_path.glob("opencc-shortcuts-*.json")
        cache.write_text("{", encoding="utf-8")
        load_shortcuts.cache_clear()
        again = load_shortcuts()
        assert again is not None and (again.marks == built.marks).all() and _read_shortcuts(cache)["main"] == again.main
    finally:
        load_shortcuts.cache_clear()


def _build_in(folder: Path, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    monkeypatch.setenv("SIMDUP_CACHE", str(folder))
    load_shortcuts.cache_clear()
    try:
        return load_shortcuts()
    finally:
        load_shortcuts.cache_clear()


@pytest.mark.parametrize("damage", ["shortcuts", "config"])
def test_a_changed_cache_file_is_rebuilt_not_used(damage: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    built = _build_in(tmp_path, monkeypatch)
    assert built is not None
    (cache,) = tmp_path.glob("opencc-shortcuts-*.json")
    if damage == "shortcuts":  # still JSON, but no longer what was built: t2s would skip every pass
        digest, _, body = cache.read_text(encoding="utf-8").partition("\n")
        cache.write_text(digest + "\n" + json.dumps({**json.loads(body), "t2s": ""}), encoding="utf-8")
    else:
        Path(built.main["t2s"]).write_text('{"name": "changed"}', encoding="utf-8")
    again = _build_in(tmp_path, monkeypatch)
    assert again is not None and (again.marks == built.marks).all() and again.main == built.main
    assert _read_shortcuts(cache) and json.loads(Path(built.main["t2s"]).read_text(encoding="utf-8"))["conversion_chain"]


def test_an_unwritable_cache_gives_no_shortcuts_and_the_same_text(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("", encoding="utf-8")  # the cache folders' places are taken by a file
    monkeypatch.setenv("SIMDUP_CACHE", str(blocked / "cache"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocked / "xdg"))
    monkeypatch.setattr(tempfile, "tempdir", str(blocked))
    load_shortcuts.cache_clear()
    try:
        assert load_shortcuts() is None
        assert to_simplified_many(["軟體", "abc", "\uf900"]) == [three_passes(t) for t in ("軟體", "abc", "\uf900")]
        assert to_simplified("使用者可以用預設的檔名執行指令碼") == three_passes("使用者可以用預設的檔名執行指令碼")
    finally:
        load_shortcuts.cache_clear()
    assert [p.name for p in tmp_path.iterdir()] == ["file"]


def test_processes_building_at_once_all_get_the_shortcuts(tmp_path: Path) -> None:
    code = "from simdup_es.text import load_shortcuts; s = load_shortcuts(); print(s is not None and int(s.marks.sum()))"
    env = {**os.environ, "SIMDUP_CACHE": str(tmp_path)}
    runs = [subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, env=env) for _ in range(4)]
    outs = [run.communicate(timeout=120)[0].split() for run in runs]
    assert all(run.returncode == 0 for run in runs)
    assert len({tuple(out) for out in outs}) == 1 and outs[0] != ["False"]
    assert not list(tmp_path.glob("*.tmp"))
    (cache,) = tmp_path.glob("opencc-shortcuts-*.json")
    assert _read_shortcuts(cache)


@pytest.fixture(scope="module")
def flat_configs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The configs :func:`_build_shortcuts` writes, each of its tables flat."""
    return _build_shortcuts(SHARE, TOOL, tmp_path_factory.mktemp("flat"))["main"]  # type: ignore[return-value]


def test_flat_configs_have_the_stock_steps_each_with_one_text_table(flat_configs: dict[str, str]) -> None:
    for name, path in flat_configs.items():
        flat, stock = json.loads(Path(path).read_text(encoding="utf-8")), config(name)
        assert "normalization" not in flat and ("segmentation" in flat) == ("segmentation" in stock)
        assert len(flat["conversion_chain"]) == len(stock["conversion_chain"])
        steps = flat["conversion_chain"] + ([flat["segmentation"]] if "segmentation" in flat else [])
        assert all(step["dict"]["type"] == "text" and Path(step["dict"]["file"]).is_file() for step in steps)


def shadowed() -> list[str]:
    """The keys a short_circuit group of the stock configs never uses: a table before holds a start of them."""
    out = []
    for name in CONFIGS:
        for part in config(name)["conversion_chain"]:
            group = part["dict"]
            if group.get("type") != "group" or group.get("match_policy") == "union":
                continue
            earlier: set[str] = set()
            for table in group["dicts"]:
                keys = [k for k, _ in entries(_dict_files(table))]
                out += [k for k in keys if any(k[:n] in earlier for n in range(1, len(k) + 1))]
                earlier.update(keys)
    return out


def test_keys_the_flat_tables_leave_out_convert_as_the_stock_groups_do(flat_configs: dict[str, str]) -> None:
    keys = shadowed()
    assert len(keys) > 500  # TSCharacters' keys that TSCharactersExt has too, and phrases of TWVariantsRevPhrases
    neighbours = [k for k, _ in entries(_dict_files(config("tw2sp")["conversion_chain"]))][::97]
    texts = keys + ["".join(t) for t in zip(keys, neighbours * (len(keys) // len(neighbours) + 1))]
    texts += ["".join(t) for t in zip(neighbours * (len(keys) // len(neighbours) + 1), keys)]
    for name, path in flat_configs.items():
        assert [converter(path).convert(t) for t in texts] == [converter(name).convert(t) for t in texts], name


_TABLES = st.dictionaries(st.text("abc", min_size=1, max_size=3), st.text("xyz", min_size=1, max_size=2), max_size=6)
_GROUPS = st.recursive(_TABLES, lambda inner: st.tuples(st.sampled_from(["union", "short_circuit"]), st.lists(inner, min_size=1, max_size=3)), max_leaves=5)


@given(_GROUPS, st.text("abcd", max_size=12))
@settings(max_examples=150, deadline=None)
def test_a_flat_table_converts_as_its_group_does(group: object, text: str) -> None:
    """Against OpenCC itself, on made-up tables where a group's match policy decides."""
    import tempfile

    import opencc

    with tempfile.TemporaryDirectory() as folder:
        files: dict[str, dict[str, str]] = {}

        def node(g: object) -> dict:
            if isinstance(g, dict):
                path = f"{folder}/t{len(files)}.txt"
                files[path] = g
                Path(path).write_text("".join(f"{k}\t{v}\n" for k, v in sorted(g.items())), encoding="utf-8")
                return {"type": "text", "file": path}
            policy, children = g  # type: ignore[misc]
            return {"type": "group", "match_policy": policy, "dicts": [node(c) for c in children]}

        def converter(dict_node: dict, name: str) -> opencc.OpenCC:
            path = f"{folder}/{name}.json"
            Path(path).write_text(json.dumps({"name": name, "conversion_chain": [{"dict": dict_node}]}), encoding="utf-8")
            return opencc.OpenCC(path)

        stock = node(group)
        flat = _flatten(stock, files.__getitem__)
        assume(flat)  # OpenCC takes no empty table
        assert converter(node(flat), "flat").convert(text) == converter(stock, "stock").convert(text)


def every_key() -> list[str]:
    return sorted({k for name in CONFIGS for k, _ in entries(_dict_files(config(name)["conversion_chain"]))})


@given(st.lists(st.deferred(lambda: st.sampled_from(every_key())) | st.text(alphabet=st.characters(min_codepoint=0x4E00, max_codepoint=0x4E80), max_size=2),
                max_size=12).map("".join))
@settings(max_examples=300, deadline=None)
def test_flat_configs_convert_as_the_stock_ones(flat_configs: dict[str, str], text: str) -> None:
    for name, path in flat_configs.items():
        assert converter(path).convert(text) == converter(name).convert(text)


def test_jieba_rs_is_loaded_once() -> None:
    # rjieba's package builds a Jieba of its own at import; ours must not import it.
    code = "from simdup_es.tokens import _rust_jieba; import sys; print(_rust_jieba().cut('你好世界', True), 'rjieba' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    assert out.split() == ["['你好',", "'世界']", "False"]
