"""Duplicate groups on a local Dask cluster (worker processes) against the real node: the same groups
as the single-process job, written so that ``simdup groups`` then finds nothing to change."""

from __future__ import annotations

import json
from collections.abc import Iterator
from importlib import resources

import numpy as np
import pytest
from distributed import Client, LocalCluster

from simdup_es import default_fingerprinter
from simdup_es.dask_groups import dask_update_groups
from simdup_es.errors import ConfigError
from simdup_es.es.connection import ConnectionSettings
from simdup_es.es.engine import OPENSEARCH, engine_of
from simdup_es.groups import stored_groups, update_groups
from simdup_es.store.base import StoredDoc
from simdup_es.store.elasticsearch import ElasticsearchStore


@pytest.fixture(scope="module")
def dask_client() -> Iterator[Client]:
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        yield client


def _corpus() -> list[StoredDoc]:
    """The sample corpus, and planted fingerprints: clusters, exact copies, chains, another version."""
    fingerprinter = default_fingerprinter()
    text = resources.files("simdup_es.data").joinpath("sample.jsonl").read_text(encoding="utf-8")
    docs = []
    for record in map(json.loads, text.splitlines()):
        fp = fingerprinter.fingerprint(record["text"], title=record.get("title"))
        docs.append(StoredDoc(record["id"], fp.value, fp.version, record["text"], record.get("title")))
    rng = np.random.default_rng(29)
    fps = rng.integers(0, np.iinfo(np.uint64).max, size=3000, dtype=np.uint64, endpoint=True).tolist()
    for pos in range(1, len(fps)):
        if rng.random() < 0.3:
            fp = fps[int(rng.integers(0, pos))]
            for b in rng.choice(64, size=int(rng.integers(0, 4)), replace=False).tolist():
                fp ^= 1 << b
            fps[pos] = fp
    docs += [StoredDoc(f"p{n:05d}", fp, "v2" if n % 7 == 0 else "v1") for n, fp in enumerate(fps)]
    return docs


def _state(store: ElasticsearchStore) -> dict[str, tuple[str | None, int | None, str | None]]:
    return {d.id: (d.group, d.group_size, d.group_kind) for d in store.get([d.id for d in _corpus()])}


def test_dask_job_writes_the_groups_of_the_single_process_job(dask_client: Client, es_url: str, es_client,
                                                             es_index: str) -> None:
    store = ElasticsearchStore(es_client, es_index)
    store.setup()
    docs = _corpus()
    assert store.put(docs).written == len(docs)
    store.refresh()
    single = update_groups(store, dry_run=True)  # what the single-process job would write
    settings = ConnectionSettings(url=es_url)
    if engine_of(es_client).name == OPENSEARCH:  # no sliced point in time there: a clear refusal, nothing written
        with pytest.raises(ConfigError, match="sliced point in time"):
            dask_update_groups(dask_client, settings, es_index, slices=3, buckets=3)
        assert update_groups(store, dry_run=True).set == single.set
        return

    first = dask_update_groups(dask_client, settings, es_index, slices=3, buckets=3)
    assert (first.pairs, first.groups, first.grouped, first.largest, first.exact) == \
        (single.pairs, single.groups, single.grouped, single.largest, single.exact)
    assert first.set == single.set and first.groups > 100
    after = update_groups(store, dry_run=True)  # the single-process job agrees with every field written
    assert (after.set, after.cleared, after.unchanged) == (0, 0, single.grouped)
    written = _state(store)

    # Change the index: the single-process job and the distributed one write the same again.
    store.delete([d.id for d in docs[40:400:3]])
    store.put([StoredDoc(f"n{n}", d.fingerprint ^ 1, d.version) for n, d in enumerate(docs[500:700:2])])
    store.refresh()
    second = dask_update_groups(dask_client, settings, es_index, slices=2, buckets=4)
    assert second.set > 0 and second.cleared > 0
    after = update_groups(store, dry_run=True)
    assert (after.set, after.cleared) == (0, 0)
    assert written != _state(store)
    again = dask_update_groups(dask_client, settings, es_index)  # nothing changed: nothing written
    assert (again.set, again.cleared, again.unchanged) == (0, 0, after.grouped)
    assert len(stored_groups(store)) == again.groups


def test_groups_command_runs_on_a_local_dask_cluster(es_url: str, es_client, es_index: str,  # type: ignore[no-untyped-def]
                                                     tmp_path) -> None:
    from click.testing import CliRunner

    from simdup_es.cli import main

    def run(*args: str):  # type: ignore[no-untyped-def]
        return CliRunner().invoke(main, [*args, "--es-url", es_url, "--index", es_index])

    sample = str(resources.files("simdup_es.data") / "sample.jsonl")
    assert run("index", sample, "--rejects", str(tmp_path / "rejects.jsonl")).exit_code == 0
    result = run("groups", "--dask", "local:2", "--json")
    if engine_of(es_client).name == OPENSEARCH:
        assert result.exit_code == 1 and "run 'simdup groups' without --dask" in result.output, result.output
        return
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout.splitlines()[0])
    assert (summary["groups"], summary["grouped"], summary["set"]) == (6, 12, 12)
    full = json.loads(run("groups", "--dry-run", "--json").stdout)
    assert (full["set"], full["cleared"], full["unchanged"]) == (0, 0, 12)
    result = run("groups", "--dask", "local:2", "--matrix")
    assert result.exit_code == 2 and "leave out --matrix and --partial" in result.output
    result = run("groups", "--dask", "local:x")
    assert result.exit_code == 1 and "needs a number of workers" in result.output, result.output
