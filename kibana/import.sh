#!/bin/sh
# kibana/import.sh: install simdup's index templates into Elasticsearch and import the
# Kibana saved objects (data view, saved search, dashboard). Safe to run again: the
# templates are replaced and the saved objects overwritten.
#
#   ES_URL=http://127.0.0.1:9200 KIBANA_URL=http://127.0.0.1:5601 kibana/import.sh
#
# docker/compose.yml runs it once Kibana is healthy (the `setup` service). It needs
# only sh, sed and curl, and talks to clusters without authentication (the compose
# stack has security off); for a secured cluster use the curl commands in
# docker/README.md with your credentials.
#
# Environment:
#   ES_URL              Elasticsearch (default http://127.0.0.1:9200)
#   KIBANA_URL          Kibana, with /s/<space> appended for a space other than the
#                       default (default http://127.0.0.1:5601)
#   SIMDUP_DATE_FIELD   the date field of your documents, used by the "duplicate
#                       share over time" panel instead of the placeholder @timestamp
#                       (default @timestamp)
#   SIMDUP_WAIT_SECONDS how long to wait for Elasticsearch and Kibana (default 300)
set -eu

ES_URL=${ES_URL:-http://127.0.0.1:9200}
KIBANA_URL=${KIBANA_URL:-http://127.0.0.1:5601}
DATE_FIELD=${SIMDUP_DATE_FIELD:-@timestamp}
WAIT_SECONDS=${SIMDUP_WAIT_SECONDS:-300}
HERE=$(cd "$(dirname "$0")" && pwd)
MAPPINGS=$HERE/../mappings
# Template names: simdup_es/store/elasticsearch.py (COMPONENT_TEMPLATE, INDEX_TEMPLATE).
COMPONENT_TEMPLATE=simdup-fingerprint
INDEX_TEMPLATE=simdup

say() { printf 'simdup-import: %s\n' "$*" >&2; }
die() { say "error: $*"; exit 1; }

case $DATE_FIELD in
    '' | *[!A-Za-z0-9_.@-]*) die "SIMDUP_DATE_FIELD must be a field name (letters, digits, _ . @ -), got '$DATE_FIELD'" ;;
esac
case $WAIT_SECONDS in
    '' | *[!0-9]*) die "SIMDUP_WAIT_SECONDS must be a number of seconds, got '$WAIT_SECONDS'" ;;
esac
for f in "$MAPPINGS/component-template.json" "$MAPPINGS/index-template.json" "$HERE/saved_objects.ndjson"; do
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
kibana_ready() { curl -fsS "$KIBANA_URL/api/status" | grep -Eq '"level" *: *"available"'; }

say "waiting for Elasticsearch at $ES_URL"
wait_until Elasticsearch es_ready

# The component template first: the index template is composed of it.
put_template() { # PATH FILE
    curl -fsS -X PUT "$ES_URL/$1" -H 'Content-Type: application/json' --data-binary "@$2" >/dev/null \
        || die "PUT $1 failed"
    say "installed $1"
}
put_template "_component_template/$COMPONENT_TEMPLATE" "$MAPPINGS/component-template.json"
put_template "_index_template/$INDEX_TEMPLATE" "$MAPPINGS/index-template.json"

say "waiting for Kibana at $KIBANA_URL"
wait_until Kibana kibana_ready

# The import API wants a file whose name ends in .ndjson.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sed "s/@timestamp/$DATE_FIELD/g" "$HERE/saved_objects.ndjson" >"$tmp/simdup.ndjson"
response=$(curl -sS -X POST "$KIBANA_URL/api/saved_objects/_import?overwrite=true" \
    -H 'kbn-xsrf: true' --form "file=@$tmp/simdup.ndjson") || die "could not reach $KIBANA_URL"
printf '%s' "$response" | grep -Eq '"success" *: *true' || die "import failed: $response"
say "imported the saved objects (date field: $DATE_FIELD); dashboard: /app/dashboards#/view/simdup-dashboard"
