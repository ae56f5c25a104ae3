"""Schemathesis hooks for the fuzz run of ``simdup serve`` (tests/fuzz/test_serve_fuzz.py; SCHEMATHESIS_HOOKS).

``valid_requests_answered`` replaces schemathesis' ``positive_data_acceptance``: a request its OpenAPI
description allows gets 2xx, or 404 (an id the store does not hold) or 409 (a document of another
fingerprint version), or one 400 the description cannot state, a text without a word to fingerprint
(all stop words, or punctuation).
"""

from __future__ import annotations

from typing import Any

import schemathesis

NO_WORDS = "no words to fingerprint"


@schemathesis.check
def valid_requests_answered(ctx: Any, response: Any, case: Any) -> bool | None:
    meta = case.meta
    if meta is None or not meta.generation.mode.is_positive:
        return None
    status = response.status_code
    if status < 300 or status in (404, 409) or (status == 400 and NO_WORDS in response.text):
        return None
    raise AssertionError(f"a request the OpenAPI description allows got {status}: {response.text[:300]}")
