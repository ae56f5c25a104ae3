// kibana/check-vega.js: run the two Vega panels of saved_objects.opensearch-dashboards.ndjson
// on a real cluster's answer and check the shares they compute.
//
//   npm install --prefix /tmp/vega vega@5 vega-lite@5
//   NODE_PATH=/tmp/vega/node_modules node kibana/check-vega.js http://127.0.0.1:9200
//
// The cluster must be OpenSearch (2.x or 3.x, what OpenSearch Dashboards runs on): the
// over-time panel uses date_histogram's `interval`, which OpenSearch Dashboards' Vega docs use
// with %autointerval% and which Elasticsearch 8+ no longer accepts.
//
// No OpenSearch Dashboards needed: it makes a throwaway index (10 documents over 3 days, 4
// of them with a dup_group, all on the first day), sends each panel's request body as
// OpenSearch Dashboards would (its %context%, %autointerval% and %timefilter% filled in),
// renders the Vega-Lite spec on the response with Vega, compares the shares with the
// expected ones, deletes the index, and exits 1 on any difference.
'use strict';
const fs = require('fs');
const path = require('path');
const vega = require('vega');
const vl = require('vega-lite');

const url = (process.argv[2] || 'http://127.0.0.1:9200').replace(/\/$/, '');
const index = `simdup-vega-check-${process.pid}`;
const file = path.join(__dirname, 'saved_objects.opensearch-dashboards.ndjson');
const objects = fs.readFileSync(file, 'utf8').trim().split('\n').map((line) => JSON.parse(line));
const expected = {
  'simdup-duplicate-share': [0.4],
  'simdup-duplicate-share-over-time': [null, 1, 0, 0, null], // empty days around the data: no share
};

function fill(node) {
  if (Array.isArray(node)) return node.map(fill);
  if (node && typeof node === 'object') {
    if (node['%autointerval%']) return '1d';
    if (node['%timefilter%']) return node['%timefilter%'] === 'min' ? '2025-12-31T00:00:00Z' : '2026-01-04T00:00:00Z';
    return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, fill(v)]));
  }
  return node;
}

async function call(method, where, body, type = 'application/json') {
  const response = await fetch(`${url}${where}`, {method, headers: {'content-type': type}, body});
  const json = await response.json();
  if (!response.ok || json.errors) throw new Error(`${method} ${where}: ${JSON.stringify(json).slice(0, 500)}`);
  return json;
}

(async () => {
  const mappings = {properties: {'@timestamp': {type: 'date'}, dup_group: {type: 'keyword'}}};
  await call('PUT', `/${index}`, JSON.stringify({mappings}));
  let failed = false;
  try {
    const lines = [];
    for (let i = 0; i < 10; i++) {
      const doc = {'@timestamp': `2026-01-0${1 + Math.floor(i / 4)}T00:00:00Z`};
      if (i < 4) doc.dup_group = `g${i % 2}`;
      lines.push('{"index":{}}', JSON.stringify(doc));
    }
    await call('POST', `/${index}/_bulk?refresh=true`, lines.join('\n') + '\n', 'application/x-ndjson');
    for (const [id, want] of Object.entries(expected)) {
      const spec = JSON.parse(JSON.parse(objects.find((o) => o.id === id).attributes.visState).params.spec);
      const body = {...fill(spec.data.url.body), query: {match_all: {}}}; // %context% with no filters
      spec.data = {values: await call('POST', `/${index}/_search`, JSON.stringify(body)), format: spec.data.format};
      const view = new vega.View(vega.parse(vl.compile(spec).spec), {renderer: 'none'});
      await view.runAsync();
      await view.toSVG(); // renders without error
      const shares = view.data('data_0').map((row) => row.share);
      const ok = JSON.stringify(shares) === JSON.stringify(want);
      failed = failed || !ok;
      console.log(`${id}: shares ${JSON.stringify(shares)} ${ok ? 'ok' : `FAIL, expected ${JSON.stringify(want)}`}`);
    }
  } finally {
    await call('DELETE', `/${index}`);
  }
  process.exit(failed ? 1 : 0);
})().catch((error) => {
  console.error(error);
  process.exit(1);
});
