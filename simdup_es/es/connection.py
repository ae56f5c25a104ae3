"""How to reach a cluster: URL, credentials, TLS, and the client built from them.

Secrets (API key, password) are never part of a ``repr``, a log line or an error
message; URLs are shown without any ``user:password@`` part.
"""

from __future__ import annotations

import base64
import logging
import os
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from elasticsearch import Elasticsearch

from ..errors import ConfigError
from .engine import ELASTICSEARCH, ENGINES, PRODUCTS, UNKNOWN_PRODUCT, Engine, detect, opensearch_client, redact_url
from .io import translated

log = logging.getLogger(__name__)

DEFAULT_URL = "http://localhost:9200"


def _url_name(engine: str) -> str:
    """``Elasticsearch URL``, ``OpenSearch URL``, or ``cluster URL`` while the engine is ``auto``."""
    return f"{PRODUCTS.get(engine, 'cluster')} URL"


def check_url(url: str, engine: str = "auto") -> None:
    """Raise :class:`ConfigError` (credentials redacted) for a URL the client would refuse.

    The client's own parser would raise a ``ValueError`` that quotes the whole
    URL, password included; every check it makes is made here first. The message
    names the configured ``engine``.
    """
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises for a port out of range or not a number
    except ValueError as exc:
        # Not the exception's text: Python's URL parser quotes the whole netloc, password included.
        raise ConfigError(f"{_url_name(engine)} {redact_url(url)!r} is not valid ({type(exc).__name__}): it must look "
                          "like https://host:9200 (SIMDUP_ES_URL / --es-url)") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(f"{_url_name(engine)} must look like https://host:9200, got {redact_url(url)!r}")


_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


def _env_bool(name: str, value: str) -> bool:
    low = value.strip().lower()
    if low in _TRUE:
        return True
    if low in _FALSE:
        return False
    raise ConfigError(f"{name} must be one of true/false, yes/no, 1/0, on/off; got {value!r}")


def _check_pem(path: Path) -> None:
    """Refuse a CA file that holds no PEM certificate, which TLS would report as "no certificate or crl found"."""
    try:
        with open(path, "rb") as f:
            head = f.read(1 << 20)
    except OSError as exc:
        raise ConfigError(f"cannot read the CA certificate {path}: {exc.strerror or exc}") from None
    if b"-----BEGIN CERTIFICATE-----" in head:
        return
    what = "is empty" if not head.strip() else "holds no certificate in PEM form (-----BEGIN CERTIFICATE-----)"
    raise ConfigError(f"the CA certificate file {path} {what}: give the file with the CA certificate that signed the "
                      "cluster's (Elasticsearch 8 writes it to config/certs/http_ca.crt); a DER file converts with "
                      "'openssl x509 -inform der -in FILE -out ca.pem' (SIMDUP_ES_CA_CERT / --ca-cert)")


@dataclass(frozen=True, repr=False)
class ConnectionSettings:
    """How to reach a cluster: URL, credentials, TLS.

    Give either ``api_key`` or ``username`` + ``password`` (or neither, for a cluster
    without security). TLS certificates are verified unless ``verify_certs`` is
    false; ``ca_certs`` names the CA bundle for a self-signed cluster.

    ``request_timeout`` is in seconds; ``max_retries`` is how often the client
    retries a request that timed out, could not connect, or got 429/502/503/504.
    """

    url: str = DEFAULT_URL
    api_key: str | None = None
    username: str | None = None
    password: str | None = None
    ca_certs: Path | None = None
    verify_certs: bool = True
    request_timeout: float = 30.0
    max_retries: int = 3
    engine: str = "auto"
    """``elasticsearch``, ``opensearch``, or ``auto``: ask the cluster (:func:`simdup_es.es.engine.detect`)."""

    def __post_init__(self) -> None:
        if self.engine not in ENGINES:
            raise ConfigError(f"the engine must be one of {', '.join(ENGINES)} (SIMDUP_ES_ENGINE / --engine), "
                              f"got {self.engine!r}")
        check_url(self.url, self.engine)
        if self.api_key is not None and (self.username is not None or self.password is not None):
            raise ConfigError("give either an API key or a user and password, not both")
        if (self.username is None) != (self.password is None):
            raise ConfigError("basic auth needs both a user and a password (SIMDUP_ES_USER, SIMDUP_ES_PASSWORD)")
        for name, value, where in (("API key", self.api_key, "SIMDUP_ES_API_KEY / --api-key"),
                                   ("user", self.username, "SIMDUP_ES_USER / --user"),
                                   ("password", self.password, "SIMDUP_ES_PASSWORD / --password")):
            _check_credential(name, value, where)
        if self.ca_certs is not None:
            object.__setattr__(self, "ca_certs", Path(self.ca_certs))
            if not self.ca_certs.is_file():
                raise ConfigError(f"CA certificate {self.ca_certs} does not exist or is not a file")
            _check_pem(self.ca_certs)
        if not self.request_timeout > 0:
            raise ConfigError(f"request_timeout must be positive, got {self.request_timeout}")
        if self.max_retries < 0:
            raise ConfigError(f"max_retries must not be negative, got {self.max_retries}")

    @classmethod
    def from_env(cls, **overrides: Any) -> ConnectionSettings:
        """Settings from ``SIMDUP_ES_*`` variables; ``overrides`` that are not ``None`` win.

        Reads ``SIMDUP_ES_URL``, ``SIMDUP_ES_API_KEY``, ``SIMDUP_ES_USER``,
        ``SIMDUP_ES_PASSWORD``, ``SIMDUP_ES_CA_CERT``, ``SIMDUP_ES_VERIFY_CERTS`` and
        ``SIMDUP_ES_ENGINE`` (the names say ES; they mean the cluster, OpenSearch too).
        Empty variables count as unset.
        """
        names = {f.name for f in fields(cls)}
        unknown = sorted(set(overrides) - names)
        if unknown:
            raise TypeError(f"unknown connection settings: {', '.join(unknown)}")
        env = {k: v for k, v in os.environ.items() if k.startswith("SIMDUP_ES_") and v.strip()}
        values: dict[str, Any] = {
            "url": env.get("SIMDUP_ES_URL"),
            "api_key": env.get("SIMDUP_ES_API_KEY"),
            "username": env.get("SIMDUP_ES_USER"),
            "password": env.get("SIMDUP_ES_PASSWORD"),
            "ca_certs": env.get("SIMDUP_ES_CA_CERT"),
            "engine": env.get("SIMDUP_ES_ENGINE", "").strip().lower() or None,
        }
        if "SIMDUP_ES_VERIFY_CERTS" in env:
            values["verify_certs"] = _env_bool("SIMDUP_ES_VERIFY_CERTS", env["SIMDUP_ES_VERIFY_CERTS"])
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**{k: v for k, v in values.items() if v is not None})

    def __repr__(self) -> str:
        auth = "api_key=***" if self.api_key else (f"username={self.username!r}, password=***" if self.username else "no auth")
        tls = f", ca_certs={str(self.ca_certs)!r}" if self.ca_certs else ""
        return (
            f"ConnectionSettings(url={redact_url(self.url)!r}, {auth}{tls}, verify_certs={self.verify_certs}, "
            f"request_timeout={self.request_timeout}, max_retries={self.max_retries}, engine={self.engine!r})"
        )

    def client(self) -> Any:
        """A new client for these settings: elasticsearch-py's, or an :class:`~simdup_es.es.engine.OpenSearchClient`.

        With ``engine="auto"`` the first client built for these settings asks the
        cluster which engine it runs (one request, remembered for the process);
        with an explicit engine no request is made until the client is used.
        """
        engine, asked = self.engine, None
        if engine == "auto":
            if self not in _engines:
                asked = self._elasticsearch()
                try:
                    _engines[self] = _detect(self, asked)
                except BaseException:
                    asked.close()
                    raise
            engine = _engines[self].name
        if engine == ELASTICSEARCH:
            return asked if asked is not None else self._elasticsearch()
        if asked is not None:
            asked.close()
        return opensearch_client(self.url, _engines.get(self), label=redact_url(self.url), **self._opensearch_kwargs())

    def _opensearch_kwargs(self) -> dict[str, Any]:
        kwargs: dict[str, Any] = {
            "timeout": self.request_timeout,
            "max_retries": self.max_retries,
            "retry_on_timeout": True,
            "retry_on_status": (429, 502, 503, 504),  # as elasticsearch-py retries
        }
        if self.api_key:
            key = self.api_key
            if ":" in key:
                key = base64.b64encode(key.encode()).decode()
            kwargs["headers"] = {"authorization": f"ApiKey {key}"}
        elif self.username is not None and self.password is not None:
            kwargs["http_auth"] = (self.username, self.password)
        return {**kwargs, **self._tls()}

    def _tls(self) -> dict[str, Any]:
        """TLS keywords, the same for both clients."""
        parts = urlsplit(self.url)
        if parts.scheme != "https":
            global _plain_http_warned
            # Not for this machine: the traffic to a loopback address never reaches a network.
            if not _plain_http_warned and not is_loopback(self.url) and (self.api_key or self.username is not None
                                                                         or "@" in parts.netloc):
                _plain_http_warned = True
                log.warning("credentials go over plain %s:// to %s, readable by anyone on the way: use an https:// "
                            "URL (SIMDUP_ES_URL / --es-url)", parts.scheme, redact_url(self.url))
            return {}
        kwargs: dict[str, Any] = {"verify_certs": self.verify_certs}
        if not self.verify_certs:
            kwargs["ssl_show_warn"] = False
            log.warning("TLS certificate verification is off for %s", redact_url(self.url))
        if self.ca_certs is not None:
            kwargs["ca_certs"] = str(self.ca_certs)
        return kwargs

    def _elasticsearch(self) -> Elasticsearch:
        kwargs: dict[str, Any] = {
            "request_timeout": self.request_timeout,
            "max_retries": self.max_retries,
            "retry_on_timeout": True,
        }
        if self.api_key:
            # Either the encoded key, or "id:api_key" as Kibana shows the two parts.
            kwargs["api_key"] = tuple(self.api_key.split(":", 1)) if ":" in self.api_key else self.api_key
        elif self.username is not None and self.password is not None:
            kwargs["basic_auth"] = (self.username, self.password)
        try:
            return Elasticsearch(self.url, **kwargs, **self._tls())
        except (ValueError, TypeError) as exc:  # a URL it refuses; its message quotes the URL, password and all
            raise ConfigError(f"{_url_name(self.engine)} {redact_url(self.url)!r} is not valid ({type(exc).__name__}): "
                              "it must look like https://host:9200 (SIMDUP_ES_URL / --es-url)") from None


def is_loopback(url: str) -> bool:
    """Whether ``url`` names this machine (its traffic never reaches a network)."""
    return (urlsplit(url).hostname or "") in {"127.0.0.1", "localhost", "::1"}


def _check_credential(name: str, value: str | None, where: str) -> None:
    """Refuse what no HTTP header can carry, saying which setting, never its value (the clients' own errors
    quote the whole header)."""
    if value is None:
        return
    if any(ord(c) < 32 or ord(c) == 127 for c in value):
        raise ConfigError(f"the {name} holds a control character (a line end from a file written on Windows?): "
                          f"check {where}")
    if name == "API key" and not value.isascii():
        raise ConfigError(f"the {name} holds characters that are not ASCII, which an API key never has: check {where}")
    try:
        value.encode("latin-1")
    except UnicodeEncodeError:
        raise ConfigError(f"the {name} holds characters that HTTP basic auth cannot send (outside Latin-1): "
                          f"check {where}, or use an API key") from None


_engines: dict[ConnectionSettings, Engine] = {}
_plain_http_warned = False  # credentials over http:// are warned about once per process


def _detect(settings: ConnectionSettings, client: Elasticsearch) -> Engine:
    with translated(client, "asking which engine it runs", cluster=UNKNOWN_PRODUCT):
        engine = detect(client, redact_url(settings.url))
    log.info("%s runs %s", redact_url(settings.url), engine)
    return engine


__all__ = ["DEFAULT_URL", "ConnectionSettings", "check_url", "redact_url"]
