"""``GET /docs``: the API reference, one static HTML page rendered from the OpenAPI document
(docs/leads.md).

Rendered here, with jinja2 (already in the dependency set, through Dagster), rather than by
Redoc, Scalar or Swagger UI: none of them is a Python package of the dependency set, each is
a JavaScript bundle of a megabyte or more to vendor and keep patched, and fetched from a CDN
it would make the page depend on a third party and leak every reader's visit to it. The page
is built once per process from :func:`~.openapi.openapi_document`, so it cannot say anything
the document does not; it needs no script and works offline. Each problem type has an
anchor (``#problem-<code>``), which is what an error's ``type`` points at.
"""

from __future__ import annotations

import functools
import json
from typing import Any

import jinja2

from morpheus_pipelines.crm.api.openapi import openapi_document
from morpheus_pipelines.crm.api.problems import TITLES

_TEMPLATE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{{ info.title }} — API reference</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body { font: 15px/1.5 system-ui, sans-serif; max-width: 62rem; margin: 2rem auto;
       padding: 0 1rem; color: #1d1d1f; }
h2 { border-bottom: 1px solid #ddd; padding-bottom: .2rem; margin-top: 2.5rem; }
h3 { margin-bottom: .2rem; }
code, pre { font: 13px/1.4 ui-monospace, monospace; }
pre { background: #f6f6f6; padding: .6rem; overflow-x: auto; }
table { border-collapse: collapse; margin: .4rem 0 1rem; }
td, th { border: 1px solid #ddd; padding: .2rem .5rem; text-align: left;
         vertical-align: top; }
.method { font-weight: 700; text-transform: uppercase; }
nav li { list-style: none; }
</style>
</head>
<body>
<h1>{{ info.title }} <small>v{{ info.version }}</small></h1>
<p>{{ info.description }}</p>
<p>The machine-readable document: <a href="/openapi.json">/openapi.json</a>.
Every <code>/v1/</code> request but the webhooks carries
<code>Authorization: Bearer &lt;key&gt;</code>.</p>
<nav><ul>
{% for op in operations %}
<li><a href="#{{ op.id }}"><span class="method">{{ op.method }}</span> {{ op.path }}</a>
— {{ op.summary }}</li>
{% endfor %}
<li><a href="#headers">Headers</a></li>
<li><a href="#problems">Problems</a></li>
</ul></nav>

{% for op in operations %}
<section id="{{ op.id }}">
<h2><span class="method">{{ op.method }}</span> <code>{{ op.path }}</code></h2>
<p>{{ op.summary }}
<small>(<code>{{ op.id }}</code>{% if op.public %}, no key{% endif %})</small></p>
{% if op.parameters %}
<h3>Parameters</h3>
<table><tr><th>name</th><th>in</th><th>required</th><th>schema</th><th>description</th></tr>
{% for p in op.parameters %}
<tr><td><code>{{ p.name }}</code></td><td>{{ p.in }}</td>
<td>{{ "yes" if p.required else "no" }}</td>
<td><code>{{ p.schema | tojson }}</code></td><td>{{ p.get("description", "") }}</td></tr>
{% endfor %}
</table>
{% endif %}
{% if op.body %}
<h3>Body</h3>
<pre>{{ op.body }}</pre>
{% endif %}
<h3>Answers</h3>
<table><tr><th>status</th><th>what</th><th>body</th><th>headers</th><th>links</th></tr>
{% for status, answer in op.responses %}
<tr><td>{{ status }}</td><td>{{ answer.description }}</td>
<td>{% for media, content in answer.get("content", {}).items() %}<code>{{ media }}</code>
{{ content.schema.get("$ref", "") | replace("#/components/schemas/", "") }}{% endfor %}</td>
<td>{% for name in answer.get("headers", {}) %}<code>{{ name }}</code> {% endfor %}</td>
<td>{% for name, link in answer.get("links", {}).items() %}
<a href="#{{ link.operationId }}">{{ name }}</a> {% endfor %}</td></tr>
{% endfor %}
</table>
</section>
{% endfor %}

<section id="headers">
<h2>Headers</h2>
<table><tr><th>header</th><th>what</th><th>schema</th></tr>
{% for name, header in headers.items() %}
<tr><td><code>{{ name }}</code></td><td>{{ header.get("description", "") }}</td>
<td><code>{{ header.schema | tojson }}</code></td></tr>
{% endfor %}
</table>
</section>

<section id="problems">
<h2>Problems</h2>
<p>Every error is <code>application/problem+json</code> (RFC 9457): <code>type</code>,
<code>title</code>, <code>status</code>, <code>detail</code>, and <code>error</code>, the code to
match on. A 422 names each refused field in <code>fields</code>. A spent budget (429) is of type
<code>https://iana.org/assignments/http-problem-types#quota-exceeded</code> and names the spent
policies in <code>violated-policies</code>.</p>
<table><tr><th>error</th><th>title</th></tr>
{% for code, title in problems %}
<tr id="problem-{{ code }}"><td><code>{{ code }}</code></td><td>{{ title }}</td></tr>
{% endfor %}
</table>
</section>

<section id="schemas">
<h2>Schemas</h2>
{% for name, schema in schemas %}
<h3 id="schema-{{ name }}">{{ name }}</h3>
<pre>{{ schema }}</pre>
{% endfor %}
</section>
</body>
</html>
"""

_environment = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined)
_environment.policies["json.dumps_kwargs"] = {"sort_keys": False}


def _operations(document: dict[str, Any]) -> list[dict[str, Any]]:
    operations = []
    for path, methods in document["paths"].items():
        for method, operation in methods.items():
            body = operation.get("requestBody", {}).get("content", {}).get("application/json")
            operations.append(
                {
                    "id": operation["operationId"],
                    "method": method,
                    "path": path,
                    "summary": operation["summary"],
                    "public": operation.get("security") == [],
                    "parameters": operation.get("parameters", []),
                    "body": json.dumps(body["schema"], indent=2) if body else None,
                    "responses": list(operation["responses"].items()),
                }
            )
    return operations


@functools.cache
def reference_page() -> str:
    document = openapi_document()
    return _environment.from_string(_TEMPLATE).render(
        info=document["info"],
        operations=_operations(document),
        headers=document["components"]["headers"],
        problems=sorted(TITLES.items()),
        schemas=[
            (name, json.dumps(schema, indent=2))
            for name, schema in document["components"]["schemas"].items()
        ],
    )
