"""Kibana and OpenSearch Dashboards saved objects shipped in the package, and their import.

The objects (a data view, a saved search of the duplicate groups, five panels and a
dashboard) live in ``simdup_es.kibana`` (the repository's ``kibana/`` folder):
``saved_objects.ndjson`` for Kibana 8 and ``saved_objects.opensearch-dashboards.ndjson``
for OpenSearch Dashboards, which knows neither Lens nor Kibana 8's formats.

:func:`saved_objects` gives the NDJSON to import with the user's choices written in:
the address of ``simdup serve`` (the data view formats ``_id`` as a link to
``{base_url}/report/{id}``) and the documents' date field. :func:`import_objects`
sends it to the saved-objects import API.
"""

from __future__ import annotations

import base64
import json
import logging
import re
import ssl
import urllib.error
import urllib.request
import uuid
from dataclasses import dataclass, field
from importlib import resources
from typing import Literal

from .errors import ConfigError, StoreError

log = logging.getLogger(__name__)

Dashboards = Literal["kibana", "opensearch-dashboards"]
DASHBOARDS: tuple[Dashboards, ...] = ("kibana", "opensearch-dashboards")
FILES: dict[Dashboards, str] = {"kibana": "saved_objects.ndjson",
                                "opensearch-dashboards": "saved_objects.opensearch-dashboards.ndjson"}
#: Where ``simdup serve`` listens by default; the shipped objects link there.
DEFAULT_BASE_URL = "http://127.0.0.1:8000"
#: The date field the "duplicate share over time" panel names until the user gives theirs.
DATE_PLACEHOLDER = "@timestamp"
DATA_VIEW = "simdup-data-view"
DASHBOARD_PATH = "/app/dashboards#/view/simdup-dashboard"
_FIELD_NAME = re.compile(r"[A-Za-z0-9_.@-]+")
_XSRF: dict[Dashboards, str] = {"kibana": "kbn-xsrf", "opensearch-dashboards": "osd-xsrf"}


def report_link(base_url: str) -> dict[str, object]:
    """The data view's field format of ``_id``: a link to the document's report page (``format=html``: an id that
    itself ends in ``.json`` gets its page too, not the JSON of the id without it)."""
    return {"id": "url", "params": {"urlTemplate": f"{base_url.rstrip('/')}/report/{{{{value}}}}?format=html",
                                    "labelTemplate": "{{value}}"}}


def _check_base_url(base_url: str) -> str:
    if not re.match(r"https?://[^/\s]+", base_url) or any(c.isspace() or c in '"{}<>' for c in base_url):
        raise ConfigError(f"--base-url must be the http:// or https:// address of simdup serve, e.g. "
                          f"{DEFAULT_BASE_URL}, got {base_url!r}")
    return base_url.rstrip("/")


def saved_objects(dashboards: Dashboards = "kibana", *, base_url: str = DEFAULT_BASE_URL,
                  date_field: str = DATE_PLACEHOLDER) -> bytes:
    """The saved objects for ``dashboards``, as NDJSON to import.

    ``base_url`` is where ``simdup serve`` answers: each document's ``_id`` links to
    ``{base_url}/report/{id}`` (the id URL-encoded, so ``a/b.txt`` is ``a%2Fb.txt``).
    ``date_field`` replaces the placeholder ``@timestamp`` of the over-time panel.
    """
    if not _FIELD_NAME.fullmatch(date_field):
        raise ConfigError(f"the date field must be a field name (letters, digits, _ . @ -), got {date_field!r}")
    link = report_link(_check_base_url(base_url))
    text = resources.files("simdup_es.kibana").joinpath(FILES[dashboards]).read_text(encoding="utf-8")
    lines = []
    for line in text.replace(DATE_PLACEHOLDER, date_field).splitlines():
        obj = json.loads(line)
        if obj["id"] == DATA_VIEW:
            formats = json.loads(obj["attributes"].get("fieldFormatMap") or "{}")
            obj["attributes"]["fieldFormatMap"] = json.dumps({**formats, "_id": link}, separators=(",", ":"))
        lines.append(json.dumps(obj, ensure_ascii=False, separators=(",", ":")))
    return ("\n".join(lines) + "\n").encode("utf-8")


@dataclass(frozen=True)
class Target:
    """A Kibana or OpenSearch Dashboards to import into, with how to log in to it."""

    url: str
    username: str | None = None
    password: str | None = field(default=None, repr=False)
    api_key: str | None = field(default=None, repr=False)
    ca_certs: str | None = None
    verify_certs: bool = True
    timeout: float = 30.0

    def _headers(self) -> dict[str, str]:
        if self.api_key:
            return {"Authorization": f"ApiKey {self.api_key}"}
        if self.username is not None:
            token = base64.b64encode(f"{self.username}:{self.password or ''}".encode()).decode()
            return {"Authorization": f"Basic {token}"}
        return {}

    def _context(self) -> ssl.SSLContext | None:
        if not self.url.startswith("https:"):
            return None
        context = ssl.create_default_context(cafile=self.ca_certs)
        if not self.verify_certs:
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
        return context

    def request(self, method: str, path: str, body: bytes | None = None,
                headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
        """One request: its status, headers (lower-case names) and body; :class:`StoreError` if none came back."""
        req = urllib.request.Request(self.url.rstrip("/") + path, data=body, method=method,
                                     headers={**self._headers(), **(headers or {})})
        try:
            with urllib.request.urlopen(req, timeout=self.timeout, context=self._context()) as response:
                return response.status, {k.lower(): v for k, v in response.headers.items()}, response.read()
        except urllib.error.HTTPError as exc:
            return exc.code, {k.lower(): v for k, v in exc.headers.items()}, exc.read()
        except (urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            raise StoreError(f"cannot reach {_masked(self.url)}: {reason}; check --kibana-url and that Kibana "
                             "(or OpenSearch Dashboards) is up") from None


def _masked(url: str) -> str:
    return re.sub(r"(://)[^/@\s]+@", r"\1***@", url)


def detect(target: Target) -> Dashboards:
    """Which of the two answers at ``target``: OpenSearch Dashboards sends an ``osd-name`` header."""
    status, headers, _ = target.request("GET", "/api/status")
    if status in (401, 403):
        raise ConfigError(f"{_masked(target.url)} answered {status} to /api/status: give credentials "
                          "(--user/--password or --api-key) of a user who may manage saved objects")
    return "opensearch-dashboards" if "osd-name" in headers else "kibana"


def _multipart(name: str, content: bytes) -> tuple[bytes, str]:
    boundary = uuid.uuid4().hex
    body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{name}\"\r\n"
            "Content-Type: application/ndjson\r\n\r\n").encode() + content + f"\r\n--{boundary}--\r\n".encode()
    return body, f"multipart/form-data; boundary={boundary}"


def import_objects(target: Target, ndjson: bytes, dashboards: Dashboards) -> int:
    """Import ``ndjson`` (from :func:`saved_objects`) with overwrite; the number of objects imported.

    Raises :class:`~simdup_es.errors.StoreError` with the server's errors when the
    import fails, or :class:`~simdup_es.errors.ConfigError` when it refuses the login.
    """
    body, content_type = _multipart("simdup.ndjson", ndjson)  # the API wants a name ending in .ndjson
    status, _, answer = target.request("POST", "/api/saved_objects/_import?overwrite=true", body,
                                       {"Content-Type": content_type, _XSRF[dashboards]: "true"})
    if status in (401, 403):
        raise ConfigError(f"{_masked(target.url)} refused the import ({status}): give credentials of a user "
                          "who may manage saved objects (--user/--password or --api-key)")
    try:
        result = json.loads(answer)
    except ValueError:
        result = None
    if status != 200 or not isinstance(result, dict) or result.get("success") is not True:
        detail = json.dumps(result.get("errors", result), ensure_ascii=False)[:2000] if isinstance(result, dict) \
            else answer[:300].decode("utf-8", "replace")
        hint = (" (is it OpenSearch Dashboards? give --dashboards opensearch-dashboards)" if dashboards == "kibana"
                else " (is it Kibana? give --dashboards kibana)")
        raise StoreError(f"{_masked(target.url)} did not import the saved objects (HTTP {status}): {detail}{hint}")
    count = int(result.get("successCount", 0))
    log.info("imported %d saved objects into %s", count, dashboards)
    return count
