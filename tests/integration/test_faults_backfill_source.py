"""What the README says of backfill: partial updates re-spell the numbers of ``_source``.

Kept as a test so the README's warning stays true for the Elasticsearch in CI.
"""

from __future__ import annotations

import json
import urllib.request

from simdup_es.backfill import backfill


def test_backfill_keeps_values_but_not_the_spelling_of_numbers(es_url: str, es_client, es_index: str,  # type: ignore[no-untyped-def]
                                                               fingerprinter) -> None:
    es_client.indices.create(index=es_index, mappings={"dynamic": False, "properties": {"text": {"type": "text"}}})
    raw = '{"text": "今天下午三点在三楼开会，请准时参加。", "a": 1e+300, "b": 1.00000000000000000001, "c": 10.50}'
    put = urllib.request.Request(f"{es_url}/{es_index}/_doc/1?refresh=true", data=raw.encode(), method="PUT",
                                 headers={"Content-Type": "application/json"})
    urllib.request.urlopen(put, timeout=30).close()  # the client would re-serialise the body itself

    def source() -> str:
        with urllib.request.urlopen(f"{es_url}/{es_index}/_source/1", timeout=30) as response:
            return response.read().decode()

    assert source() == raw  # as written
    summary = backfill(es_client, es_index, "text", fingerprinter, on_reject=lambda r: None, workers=1)
    assert summary.fingerprinted == 1
    after = source()
    assert '"a":1.0E300' in after and '"b":1.0' in after and '"c":10.5' in after  # what the README says
    values = json.loads(after)
    assert values["a"] == 1e300 and values["c"] == 10.5 and values["text"] == json.loads(raw)["text"]
