#!/bin/sh
# kibana/import.sh: install simdup's index templates into the cluster (Elasticsearch or
# OpenSearch) and import the saved objects (data view, saved search, dashboard) into
# Kibana or OpenSearch Dashboards. Safe to run again: the templates are replaced and the
# saved objects overwritten.
#
#   ES_URL=http://127.0.0.1:9200 KIBANA_URL=http://127.0.0.1:5601 kibana/import.sh
#
# Kibana gets saved_objects.ndjson (Kibana 8.19, Lens panels); OpenSearch Dashboards,
# which knows neither Lens nor Kibana 8's object formats, gets
# saved_objects.opensearch-dashboards.ndjson (the same ids, Visualize and Vega panels).
# Which one runs is told by its responses (OpenSearch Dashboards sends an osd-name header).
#
# docker/compose.yml runs it once Kibana is healthy (the `setup` service). It needs
# only sh, sed and curl, and talks to clusters without authentication (the compose
# stack has security off); for a secured cluster use the curl commands in
# docker/README.md with your credentials.
#
# Environment:
#   ES_URL              the cluster (default http://127.0.0.1:9200)
#   KIBANA_URL          Kibana or OpenSearch Dashboards, with /s/<space> appended for a
#                       Kibana space other than the default (default http://127.0.0.1:5601)
#   SIMDUP_DASHBOARDS   kibana, opensearch-dashboards, or auto (default: ask the server)
#   SIMDUP_DATE_FIELD   the date field of your documents, used by the "duplicate
#                       share over time" panel instead of the placeholder @timestamp
#                       (default @timestamp)
#   SIMDUP_BASE_URL     where `simdup serve` answers for the browser: each document's
#                       _id links to $SIMDUP_BASE_URL/report/<id> (default
#                       http://127.0.0.1:8000)
#   SIMDUP_WAIT_SECONDS how long to wait for the cluster and Kibana (default 300)
set -eu

ES_URL=${ES_URL:-http://127.0.0.1:9200}
KIBANA_URL=${KIBANA_URL:-http://127.0.0.1:5601}
DATE_FIELD=${SIMDUP_DATE_FIELD:-@timestamp}
BASE_URL=${SIMDUP_BASE_URL:-http://127.0.0.1:8000}
BASE_URL=${BASE_URL%/}
WAIT_SECONDS=${SIMDUP_WAIT_SECONDS:-300}
DASHBOARDS=${SIMDUP_DASHBOARDS:-auto}
HERE=$(cd "$(dirname "$0")" && pwd)
MAPPINGS=$HERE/../mappings
# Template names: simdup_es/store/elasticsearch.py (COMPONENT_TEMPLATE, INDEX_TEMPLATE).
COMPONENT_TEMPLATE=simdup-fingerprint
INDEX_TEMPLATE=simdup

# Credentials in a URL (https://user:password@host) are masked in every message.
say() { printf 'simdup-import: %s\n' "$*" | sed -E 's#(://)[^/@[:space:]]+@#\1***@#g' >&2; }
die() { say "error: $*"; exit 1; }

case $DATE_FIELD in
    '' | *[!A-Za-z0-9_.@-]*) die "SIMDUP_DATE_FIELD must be a field name (letters, digits, _ . @ -), got '$DATE_FIELD'" ;;
esac
case $BASE_URL in
    http://?* | https://?*) ;;
    *) die "SIMDUP_BASE_URL must be the http:// or https:// address of simdup serve, got '$BASE_URL'" ;;
esac
case $BASE_URL in
    *[!A-Za-z0-9_.:/%@-]*) die "SIMDUP_BASE_URL may hold only letters, digits and _ . : / % @ -, got '$BASE_URL'" ;;
esac
case $WAIT_SECONDS in
    '' | *[!0-9]*) die "SIMDUP_WAIT_SECONDS must be a number of seconds, got '$WAIT_SECONDS'" ;;
esac
case $DASHBOARDS in
    auto | kibana | opensearch-dashboards) ;;
    *) die "SIMDUP_DASHBOARDS must be kibana, opensearch-dashboards or auto, got '$DASHBOARDS'" ;;
esac
for f in "$MAPPINGS/component-template.json" "$MAPPINGS/index-template.json" \
    "$HERE/saved_objects.ndjson" "$HERE/saved_objects.opensearch-dashboards.ndjson"; do
    [ -r "$f" ] || die "cannot read $f"
done

# wait_until WHAT COMMAND...: retry COMMAND every 5 s until it succeeds or time runs out.
wait_until() {
    what=$1
    shift
    waited=0
    until "$@" >/dev/null 2>&1; do
        [ "$waited" -ge "$WAIT_SECONDS" ] && die "$what not available after ${WAIT_SECONDS}s"
        sleep 5
        waited=$((waited + 5))
    done
}
es_ready() { curl -fsS "$ES_URL/_cluster/health?wait_for_status=yellow&timeout=5s"; }
# Kibana 8: {"status":{"overall":{"level":"available"...; OpenSearch Dashboards (Kibana
# 7.10's format): {"status":{"overall":{"since":...,"state":"green"...
kibana_ready() {
    curl -fsS "$KIBANA_URL/api/status" \
        | grep -Eq '"level" *: *"available"|"overall" *: *\{[^}]*"state" *: *"green"'
}
is_opensearch_dashboards() { curl -sS -o /dev/null -D - "$KIBANA_URL/api/status" | grep -qi '^osd-name:'; }

say "waiting for the cluster at $ES_URL"
wait_until "the cluster" es_ready

# The component template first: the index template is composed of it.
put_template() { # PATH FILE
    # Not -f: the cluster's answer says why it refused (a template of the same priority, say).
    answer=$(curl -sS -w '\n%{http_code}' -X PUT "$ES_URL/$1" -H 'Content-Type: application/json' --data-binary "@$2") \
        || die "PUT $1 failed: the cluster at $ES_URL did not answer"
    nl='
'
    case "${answer##*"$nl"}" in
        2??) ;;
        *) die "PUT $1 failed (HTTP ${answer##*"$nl"}): ${answer%"$nl"*}" ;;
    esac
    say "installed $1"
}
put_template "_component_template/$COMPONENT_TEMPLATE" "$MAPPINGS/component-template.json"
put_template "_index_template/$INDEX_TEMPLATE" "$MAPPINGS/index-template.json"

say "waiting for Kibana or OpenSearch Dashboards at $KIBANA_URL"
wait_until "Kibana or OpenSearch Dashboards" kibana_ready

if [ "$DASHBOARDS" = auto ]; then
    if is_opensearch_dashboards; then DASHBOARDS=opensearch-dashboards; else DASHBOARDS=kibana; fi
fi
if [ "$DASHBOARDS" = opensearch-dashboards ]; then
    objects=$HERE/saved_objects.opensearch-dashboards.ndjson
    xsrf='osd-xsrf: true'
else
    objects=$HERE/saved_objects.ndjson
    xsrf='kbn-xsrf: true'
fi

# The import API wants a file whose name ends in .ndjson.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The shipped objects link _id to http://127.0.0.1:8000/report/{{value}}?format=html (simdup serve's default).
sed -e "s/@timestamp/$DATE_FIELD/g" -e "s#http://127.0.0.1:8000/report/#$BASE_URL/report/#g" "$objects" \
    >"$tmp/simdup.ndjson"
response=$(curl -sS -X POST "$KIBANA_URL/api/saved_objects/_import?overwrite=true" \
    -H "$xsrf" --form "file=@$tmp/simdup.ndjson") || die "could not reach $KIBANA_URL"
printf '%s' "$response" | grep -Eq '"success" *: *true' || die "import failed: $response"
say "imported $(basename "$objects") into $DASHBOARDS (date field: $DATE_FIELD; reports: $BASE_URL/report/<id>); dashboard: /app/dashboards#/view/simdup-dashboard"
