"""The engine adapter's pure parts: versions, the calling convention, errors, the walk's choice.

The requests themselves are tested on real nodes of each engine (tests/contract and
tests/integration, run by scripts/test-engines).
"""

from __future__ import annotations

import elasticsearch as es
import opensearchpy.exceptions as ose
import pytest
from elastic_transport import ApiResponseMeta, HttpHeaders, NodeConfig

from simdup_es.errors import ConfigError
from simdup_es.es import engine as eng
from simdup_es.es.connection import ConnectionSettings


def test_versions() -> None:
    assert eng.parse_version("3.8.0") == (3, 8, 0) and eng.parse_version("9.5.4-SNAPSHOT") == (9, 5, 4)
    body = {"nodes": {"a": {"version": "3.8.0"}, "b": {"version": "2.19.6"}}}
    assert eng.nodes_version(body) == (2, 19, 6)  # a cluster mid-upgrade can do what its oldest node does
    assert eng.nodes_version({}) == ()
    assert str(eng.Engine(eng.OPENSEARCH, (3, 8, 0))) == "OpenSearch 3.8.0"


def test_elasticsearch_keywords_become_an_opensearch_body() -> None:
    assert eng._arguments({"index": "i", "query": {"match_all": {}}, "size": 3, "seq_no_primary_term": True}) == {
        "index": "i", "seq_no_primary_term": True, "body": {"query": {"match_all": {}}, "size": 3}}
    assert eng._arguments({"index": "i", "ids": ["a"], "source_includes": ["t"]}) == {
        "index": "i", "_source_includes": ["t"], "body": {"ids": ["a"]}}
    assert eng._arguments({"index": "i", "document": {"x": 1}, "refresh": True}) == {
        "index": "i", "refresh": True, "body": {"x": 1}}
    assert eng._arguments({"index": "i", "body": {"query": {}}, "filter_path": ["hits"]}) == {
        "index": "i", "filter_path": ["hits"], "body": {"query": {}}}
    assert eng._arguments({"index": "i", "ignore_status": 404}) == {"index": "i", "ignore": 404}


@pytest.mark.parametrize(
    "raised, expected",
    [
        (ose.NotFoundError(404, "index_not_found_exception", {"error": {"type": "index_not_found_exception"}}),
         es.NotFoundError),
        (ose.RequestError(400, "x_content_parse_exception", {}), es.BadRequestError),
        (ose.AuthorizationException(403, "security_exception", {}), es.AuthorizationException),
        (ose.TransportError(429, "es_rejected_execution_exception", {}), es.ApiError),
        (ose.ConnectionTimeout("TIMEOUT", "read timed out", None), es.ConnectionTimeout),
        (ose.SSLError("N/A", "certificate verify failed", None), es.SSLError),
        (ose.ConnectionError("N/A", "connection refused", None), es.ConnectionError),
        (ose.SerializationError("cannot encode"), es.SerializationError),
    ],
)
def test_opensearch_errors_are_raised_as_elasticsearch_ones(raised: Exception, expected: type) -> None:
    with pytest.raises(expected) as info, eng._translating("http://h:9200"):
        raise raised
    if isinstance(info.value, es.ApiError):
        assert info.value.meta.status == raised.status_code  # type: ignore[attr-defined]
        assert info.value.error == raised.error  # type: ignore[attr-defined]  # the error type, as elasticsearch-py has it


def test_client_9_against_server_8_names_the_fix() -> None:
    body = {"error": {"type": "media_type_header_exception",
                      "reason": "Invalid media-type value on headers [Accept]",
                      "caused_by": {"reason": "Accept version must be either version 8 or 7, but found 9"}}}
    meta = ApiResponseMeta(400, "1.1", HttpHeaders(), 0.0, NodeConfig("http", "h", 9200))
    message = eng.client_mismatch(es.BadRequestError("media_type_header_exception", meta, body))
    assert message is not None and eng.CLIENT_PIN in message and es.__versionstr__ in message
    assert eng.client_mismatch(es.BadRequestError("x_content_parse_exception", meta, {})) is None
    refused = "Content-Type header [application/vnd.elasticsearch+json; compatible-with=8] is not supported"
    meta = ApiResponseMeta(406, "1.1", HttpHeaders(), 0.0, NodeConfig("http", "h", 9200))
    assert "set it to opensearch" in (eng.client_mismatch(es.ApiError(refused, meta, {"error": refused})) or "")


def test_walks_scroll_on_opensearch() -> None:
    def client(version: tuple[int, ...]) -> eng.OpenSearchClient:
        import opensearchpy

        return eng.OpenSearchClient(opensearchpy.OpenSearch("http://h:9200"), eng.Engine(eng.OPENSEARCH, version))

    assert not any(eng.uses_point_in_time(client(v)) for v in ((2, 19, 6), (3, 2, 0), (3, 3, 0), (3, 8, 0)))
    assert eng.uses_point_in_time(es.Elasticsearch("http://h:9200"))


def test_engine_setting() -> None:
    with pytest.raises(ConfigError, match="SIMDUP_ES_ENGINE"):
        ConnectionSettings(engine="solr")
    client = ConnectionSettings(url="http://h:9200", engine="opensearch").client()  # named: no request
    try:
        assert isinstance(client, eng.OpenSearchClient) and client.url == "http://h:9200"
    finally:
        client.close()


def test_a_server_that_is_no_search_engine_is_named_with_what_it_sent() -> None:
    """A web server at the URL: the message said "the cluster", without its URL, and nothing of what answered."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from simdup_es.errors import ConfigError
    from simdup_es.es.connection import ConnectionSettings

    page = b"<!DOCTYPE html><html><head><title>Welcome to nginx!</title></head><body>" + b"<p>x</p>" * 5000 + b"</body>"

    class Web(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_GET(self) -> None:  # noqa: N802
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(page)))
            self.end_headers()
            self.wfile.write(page)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Web)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_port}"
    try:
        with pytest.raises(ConfigError) as raised:
            ConnectionSettings(url=url, max_retries=0).client()
    finally:
        server.shutdown()
        server.server_close()
    message = str(raised.value)
    assert message.startswith(f"{url} answers neither as Elasticsearch nor as OpenSearch")
    assert "an HTML page titled 'Welcome to nginx!'" in message and "check the URL" in message
    assert "<p>" not in message and len(message) < 500
