"""The pages of ``simdup serve`` for people: ``GET /`` (paste or upload a text and read its report, or
open a stored document's) and ``GET /docs`` (the API, read from its OpenAPI description).

Both are made here, with nothing loaded from elsewhere (users may be offline). The start page's one
script is inline and allowed by its hash alone (:data:`START_HEADERS`); it posts JSON to ``/report``
and shows the answer in a sandboxed frame, where no script runs.
"""

from __future__ import annotations

import base64
import hashlib
import json
from html import escape
from typing import Any

_CSS = """body{font-family:system-ui,"Noto Sans CJK SC","WenQuanYi Micro Hei",sans-serif;margin:0 auto;max-width:72rem;
padding:1rem 1.5rem;line-height:1.5;color:#1b1b1b}h1{font-size:1.5rem}h2{font-size:1.2rem;margin-top:2rem}
textarea{width:100%;min-height:12rem;font:inherit;box-sizing:border-box}input[type=text]{font:inherit;min-width:20rem}
fieldset{border:1px solid #ccc;margin:1rem 0;padding:.5rem 1rem}button{font:inherit;padding:.2rem 1rem}
#status{min-height:1.5em;color:#8a1c1c}iframe{width:100%;height:80vh;border:1px solid #ccc}
table{border-collapse:collapse;margin:.5rem 0}td,th{border:1px solid #ddd;padding:.2rem .5rem;text-align:left;
vertical-align:top}code{background:#f3f3f3;padding:0 .2rem}.method{font-weight:bold;text-transform:uppercase}
nav a{margin-right:1rem}"""

_SCRIPT = """
const $ = (id) => document.getElementById(id);
function say(text) { $("status").textContent = text; }
async function report(body) {
  say("Searching…");
  const answer = await fetch("report", {method: "POST", headers: {"Content-Type": "application/json"},
                                        body: JSON.stringify({...body, format: "html"})});
  if (!answer.ok) {
    let message = answer.status + " " + answer.statusText;
    try { message = (await answer.json()).error.message; } catch (e) {}
    say(message);
    return;
  }
  $("result").srcdoc = await answer.text();
  $("result").hidden = false;
  say("");
}
$("file").addEventListener("change", async () => {
  const file = $("file").files[0];
  if (file) { $("text").value = await file.text(); if (!$("title").value) $("title").value = file.name; }
});
$("by-text").addEventListener("submit", (event) => {
  event.preventDefault();
  const text = $("text").value;
  if (!text.trim()) { say("Paste a text, or choose a file."); return; }
  const body = {text, exclude_quotations: $("quotations").checked, exclude_references: $("references").checked};
  if ($("title").value.trim()) body.title = $("title").value.trim();
  report(body).catch((e) => say("The server did not answer: " + e));
});
$("by-id").addEventListener("submit", (event) => {
  event.preventDefault();
  const id = $("id").value.trim();
  if (id) window.location.href = "report/" + encodeURIComponent(id) + "?format=html";
});
"""

_SCRIPT_HASH = base64.b64encode(hashlib.sha256(_SCRIPT.encode()).digest()).decode()
START_HEADERS = {"Content-Security-Policy": f"default-src 'none'; style-src 'unsafe-inline'; script-src "
                                            f"'sha256-{_SCRIPT_HASH}'; connect-src 'self'; frame-src 'self'; "
                                            "form-action 'self'",
                 "X-Content-Type-Options": "nosniff"}
"""The start page runs its own script only (by its hash), talks to this server only, and loads nothing."""


def _head(title: str) -> str:
    return (f'<!DOCTYPE html>\n<html lang="zh">\n<head>\n<meta charset="utf-8">\n<meta name="viewport" '
            f'content="width=device-width, initial-scale=1">\n<title>{escape(title)}</title>\n<style>{_CSS}</style>\n'
            '</head>\n')


def start_page() -> str:
    """``GET /``: a form for a text (pasted, or read from a file) whose report shows below, and one for a stored id."""
    return _head("simdup: similarity report") + f"""<body>
<nav><a href="docs">API</a><a href="health">Store</a></nav>
<h1>Similarity report</h1>
<p>Paste a text or choose a file (plain text or Markdown, UTF-8): the report shows which passages are found in
the store's documents, and where.</p>
<form id="by-text">
<textarea id="text" name="text" placeholder="Paste the text here"></textarea>
<p><label>File <input type="file" id="file" accept=".txt,.md,.markdown,.text,text/*"></label>
<label>Title <input type="text" id="title" name="title"></label></p>
<fieldset><legend>Not counted</legend>
<label><input type="checkbox" id="quotations"> quotations</label>
<label><input type="checkbox" id="references"> the list of references</label></fieldset>
<p><button type="submit" id="go">Report</button></p>
</form>
<form id="by-id">
<p><label>Or the report of a stored document, by its id: <input type="text" id="id" name="id"></label>
<button type="submit" id="open">Open</button></p>
</form>
<p id="status" role="status"></p>
<iframe id="result" title="The report" sandbox hidden></iframe>
<script>{_SCRIPT}</script>
</body>
</html>
"""


def _type(schema: dict[str, Any]) -> str:
    """A schema in a few words: its type, allowed values and range."""
    if "$ref" in schema:
        return str(schema["$ref"]).rsplit("/", 1)[-1]
    if "oneOf" in schema:
        return " or ".join(_type(s) for s in schema["oneOf"])
    kind = schema.get("type", "any")
    words = " or ".join(kind) if isinstance(kind, list) else str(kind)
    if kind == "array" and "items" in schema:
        words = f"array of {_type(schema['items'])}"
    if "enum" in schema:
        words += ": " + ", ".join(json.dumps(v) for v in schema["enum"])
    bounds = [f"{word} {schema[key]}" for key, word in (("minimum", "from"), ("maximum", "to"),
                                                         ("minLength", "length from"), ("maxLength", "length to"))
              if key in schema]
    return words + (f" ({', '.join(bounds)})" if bounds else "")


def _fields(rows: list[tuple[str, str, bool, str]]) -> str:
    if not rows:
        return ""
    body = "".join(f"<tr><td><code>{escape(name)}</code></td><td>{escape(where)}</td><td>{'yes' if required else ''}"
                   f"</td><td>{escape(what)}</td></tr>" for name, where, required, what in rows)
    return f"<table><tr><th>field</th><th>in</th><th>required</th><th>what</th></tr>{body}</table>"


def _operation(path: str, method: str, op: dict[str, Any]) -> str:
    rows = [(p["name"], p["in"], bool(p.get("required")), " ".join(filter(None, (_type(p.get("schema", {})),
                                                                               p.get("description")))))
            for p in op.get("parameters", [])]
    body = op.get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema")
    if body:
        required = set(body.get("required", ()))
        rows += [(name, "body", name in required, " ".join(filter(None, (_type(s), s.get("description")))))
                 for name, s in body.get("properties", {}).items()]
    answers = ", ".join(f"{code} {escape(r.get('description', ''))}" for code, r in op.get("responses", {}).items())
    anchor = f"{method}-{path}".replace("/", "-").replace("{", "").replace("}", "")
    return (f'<h3 id="{escape(anchor)}"><span class="method">{escape(method)}</span> <code>{escape(path)}</code></h3>'
            f"<p>{escape(op.get('summary', ''))}</p>{_fields(rows)}<p>Answers: {answers}</p>")


def api_page(spec: dict[str, Any]) -> str:
    """``GET /docs``: every route of the OpenAPI description ``spec`` with its fields and answers."""
    info = spec.get("info", {})
    parts = [_operation(path, method, op) for path, ops in spec.get("paths", {}).items() for method, op in ops.items()]
    return _head(f"{info.get('title', 'API')} {info.get('version', '')}") + f"""<body>
<nav><a href="./">Report a text</a><a href="openapi.json">openapi.json</a></nav>
<h1>{escape(info.get('title', 'API'))} <small>{escape(info.get('version', ''))}</small></h1>
<p>{escape(info.get('description', ''))} Bodies are JSON, sent with <code>Content-Type: application/json</code>;
every error is <code>{{"error": {{"type", "message"}}}}</code> with its status.</p>
{''.join(parts)}
</body>
</html>
"""
