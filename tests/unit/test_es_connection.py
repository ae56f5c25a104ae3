"""Connection settings and an unreachable cluster: the Elasticsearch layer without a node."""

from __future__ import annotations

import logging
import socket
import time

import pytest
from click.testing import CliRunner
from elasticsearch import Elasticsearch

from simdup_es.cli import main
from simdup_es.errors import ConfigError, ConnectionFailed
from simdup_es.store.base import StoredDoc
from simdup_es.es.connection import ConnectionSettings, redact_url
from simdup_es.store.elasticsearch import ElasticsearchStore

VERSION = "test.v1"


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_unreachable_cluster_fails_fast_and_clearly(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    url = f"http://127.0.0.1:{_closed_port()}"
    started = time.monotonic()
    # auto: the engine is asked first, so the message cannot name it yet.
    with pytest.raises(ConnectionFailed, match="cannot reach the cluster at .* while asking which engine it runs"):
        ConnectionSettings(url=url, request_timeout=2, max_retries=1).client()
    # Named engine: no question first, so the store's own paths (bulk backoff) meet the closed port.
    settings = ConnectionSettings(url=url, username="elastic", password="hunter2-secret", request_timeout=2,
                                  max_retries=1, engine="elasticsearch")
    store = ElasticsearchStore(settings, "simdup-unreachable", max_retries=2, initial_backoff=0.05)
    with pytest.raises(ConnectionFailed, match="cannot reach Elasticsearch at") as info:
        store.setup()
    assert url in str(info.value) and "SIMDUP_ES_URL" in str(info.value)
    store._layout, store._write_checked = "8x8", True  # past the mapping and alias checks: the bulk path's own retries
    with pytest.raises(ConnectionFailed, match="cannot reach") as info:
        store.put([StoredDoc("1", 1, VERSION)])
    assert info.value.report.written == 0  # type: ignore[attr-defined]
    assert "retry 2 of 2" in caplog.text  # the bulk path backed off before giving up
    for call in (store.count, lambda: store.candidates(1, VERSION, k=3), lambda: store.get(["1"])):
        with pytest.raises(ConnectionFailed):
            call()
    assert time.monotonic() - started < 10
    store.close()
    assert "hunter2" not in caplog.text and "hunter2" not in repr(store) and "hunter2" not in str(info.value)


def test_messages_name_the_configured_engine() -> None:
    """OpenSearch is called OpenSearch; a cluster whose engine is not known yet, the cluster."""
    url = f"http://127.0.0.1:{_closed_port()}"
    settings = ConnectionSettings(url=url, request_timeout=2, max_retries=0, engine="opensearch")
    with ElasticsearchStore(settings, "simdup-unreachable") as store:
        with pytest.raises(ConnectionFailed, match=f"cannot reach OpenSearch at {url}") as info:
            store.count()
    assert "Elasticsearch" not in str(info.value)
    for engine, name in (("opensearch", "OpenSearch URL"), ("elasticsearch", "Elasticsearch URL"),
                         ("auto", "cluster URL")):
        with pytest.raises(ConfigError, match=f"^{name} must look like") as refused:
            ConnectionSettings(url="es.example:9200", engine=engine)
        assert "Elasticsearch" not in str(refused.value) or engine == "elasticsearch"


def test_settings_repr_hides_secrets() -> None:
    s = ConnectionSettings(url="https://u:pw-in-url@es.example:9200", api_key="key-secret-123")
    text = repr(s) + str(s)
    assert "key-secret-123" not in text and "pw-in-url" not in text and "api_key=***" in text
    s = ConnectionSettings(username="elastic", password="pass-secret-456")
    assert "pass-secret-456" not in repr(s) and "'elastic'" in repr(s)
    assert redact_url("https://a:b@h:1/p") == "https://***@h:1/p" and redact_url("http://h:9200") == "http://h:9200"


def test_settings_from_env_and_overrides(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    ca = tmp_path / "ca.pem"
    ca.write_text("-----BEGIN CERTIFICATE-----\n")
    for name in ("URL", "API_KEY", "USER", "PASSWORD", "CA_CERT", "VERIFY_CERTS", "ENGINE"):
        monkeypatch.delenv(f"SIMDUP_ES_{name}", raising=False)
    assert ConnectionSettings.from_env() == ConnectionSettings()
    monkeypatch.setenv("SIMDUP_ES_URL", "https://es.example:9243")
    monkeypatch.setenv("SIMDUP_ES_USER", "elastic")
    monkeypatch.setenv("SIMDUP_ES_PASSWORD", "pw")
    monkeypatch.setenv("SIMDUP_ES_CA_CERT", str(ca))
    monkeypatch.setenv("SIMDUP_ES_VERIFY_CERTS", "false")
    monkeypatch.setenv("SIMDUP_ES_ENGINE", "Elasticsearch")  # named: the client is built without asking
    s = ConnectionSettings.from_env(url=None, request_timeout=5)
    assert (s.url, s.username, s.password, s.ca_certs, s.verify_certs, s.request_timeout, s.engine) == (
        "https://es.example:9243", "elastic", "pw", ca, False, 5, "elasticsearch")
    assert ConnectionSettings.from_env(url="http://other:9200").url == "http://other:9200"
    client = s.client()
    try:
        assert isinstance(client, Elasticsearch)
    finally:
        client.close()
    monkeypatch.setenv("SIMDUP_ES_VERIFY_CERTS", "maybe")
    with pytest.raises(ConfigError, match="SIMDUP_ES_VERIFY_CERTS"):
        ConnectionSettings.from_env()


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"url": "es.example:9200"}, "URL"),
        ({"api_key": "k", "username": "u", "password": "p"}, "not both"),
        ({"username": "u"}, "both a user and a password"),
        ({"ca_certs": "/nonexistent/ca.pem"}, "CA certificate"),
        ({"request_timeout": 0}, "request_timeout"),
    ],
)
def test_settings_validate(kwargs: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        ConnectionSettings(**kwargs)


def test_unreachable_cluster_is_a_clear_error_on_the_command_line() -> None:
    result = CliRunner().invoke(main, ["search", "--text", "文档", "--es-url", "http://127.0.0.1:9", "--index", "x"])
    assert result.exit_code == 1
    assert "Traceback" not in result.output and "127.0.0.1:9" in result.output


@pytest.mark.parametrize("auth", [{"username": "u", "password": "hunter2"}, {"api_key": "id:k3y-hunter2"}],
                         ids=["basic", "api_key"])
def test_credentials_over_plain_http_warn_once_per_process(auth: dict[str, str], caplog: pytest.LogCaptureFixture,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    from simdup_es.es import connection

    monkeypatch.setattr(connection, "_plain_http_warned", False)
    caplog.set_level(logging.WARNING)
    url = "http://es.example:9200"  # not this machine (no request is made: the engine is named)
    for _ in range(3):
        ConnectionSettings(url=url, engine="elasticsearch", **auth).client().close()
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1, warnings
    assert "plain http://" in warnings[0] and "use an https:// URL" in warnings[0] and url in warnings[0]
    assert "hunter2" not in caplog.text


def test_no_plain_http_warning_without_credentials_or_over_https(caplog: pytest.LogCaptureFixture,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    from simdup_es.es import connection

    monkeypatch.setattr(connection, "_plain_http_warned", False)
    caplog.set_level(logging.WARNING)
    ConnectionSettings(url="http://127.0.0.1:9", engine="elasticsearch").client().close()
    ConnectionSettings(url="https://127.0.0.1:9", engine="elasticsearch", username="u", password="p").client().close()
    for here in ("http://127.0.0.1:9", "http://localhost:9", "http://[::1]:9"):  # this machine: no network on the way
        ConnectionSettings(url=here, engine="elasticsearch", username="u", password="p").client().close()
    assert not [r for r in caplog.records if "plain http" in r.getMessage()]


def test_a_ca_file_without_a_certificate_is_named_for_what_it_is(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """TLS said "no certificate or crl found" and the message asked for the CA certificate that was given."""
    empty, der, pem = tmp_path / "empty.pem", tmp_path / "ca.der", tmp_path / "ca.pem"
    empty.write_bytes(b"\n")
    der.write_bytes(bytes(range(48, 120)))
    pem.write_text("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n")
    with pytest.raises(ConfigError, match=r"the CA certificate file .*empty.pem is empty: give the file"):
        ConnectionSettings(url="https://h:9200", ca_certs=empty)
    with pytest.raises(ConfigError, match=r"ca.der holds no certificate in PEM form.*openssl x509 -inform der"):
        ConnectionSettings(url="https://h:9200", ca_certs=der)
    assert ConnectionSettings(url="https://h:9200", ca_certs=pem).ca_certs == pem
    result = CliRunner().invoke(main, ["search", "--es-url", "https://h:9200", "--ca-cert", str(empty), "--text", "x"])
    assert result.exit_code == 1 and "is empty" in result.output and result.exception is not None
