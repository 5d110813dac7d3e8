"""Every error the server answers, whoever produces it (openbook, FastAPI's validation, Starlette's routing, an
upload that ingests nothing, a stream that fails), has the documented shape ``{"error": {"type", "message",
"code"}}``, the OpenAPI schema documents it on every operation, and no message names the server's own paths.
A real server and a real HTTP client."""

from __future__ import annotations

import json

import httpx

from helpers.served import Served, ServerThread, build_store, server_config


def client(served: Served, who: str = "staff") -> httpx.Client:
    return httpx.Client(base_url=served.url, headers=served.auth(who), timeout=60)


def assert_error_shape(response: httpx.Response, status: int) -> dict[str, str]:
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body["error"]) == {"type", "message", "code"}, body
    assert all(isinstance(v, str) and v for v in body["error"].values()), body
    return body["error"]


def _events(text: str) -> list[dict[str, str]]:
    events = []
    for block in text.strip().split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.splitlines())
        events.append(fields)
    return events


def test_the_schema_documents_the_error_shape_and_the_streams_on_every_operation(served):
    with client(served) as c:
        schema = c.get("/openapi.json").json()
    operations = {f"{method.upper()} {path}": op for path, item in schema["paths"].items()
                  for method, op in item.items()}
    assert len(operations) >= 10
    for name, op in operations.items():
        for status in ("4XX", "5XX"):
            content = op["responses"][status]["content"]["application/json"]["schema"]
            assert content == {"$ref": "#/components/schemas/ErrorBody"}, (name, status)
    assert "HTTPValidationError" not in json.dumps(schema)
    assert set(schema["components"]["schemas"]["ErrorDetail"]["required"]) == {"type", "message", "code"}
    for name in ("POST /v1/ask", "POST /v1/chat/completions"):
        assert "text/event-stream" in operations[name]["responses"]["200"]["content"], name
    # the key scheme is stated, on every operation that checks a key (all but the liveness and model list)
    assert schema["components"]["securitySchemes"]["apiKey"] == {
        "type": "http", "scheme": "bearer", "description": schema["components"]["securitySchemes"]["apiKey"]
        ["description"]}
    keyed = {name for name, op in operations.items() if op.get("security") == [{"apiKey": []}]}
    assert keyed == set(operations) - {"GET /v1/health", "GET /v1/models"}


def test_a_body_that_is_not_json_an_unknown_path_and_an_unserved_method_answer_in_the_error_shape(served):
    with client(served) as c:
        garbled = c.post("/v1/search", content=b"\xff\x0fw{", headers={"Content-Type": "application/json"})
        unknown = c.get("/v1/nothing-here")
        unserved = c.put("/v1/search", json={"query": "leave"})
    assert assert_error_shape(garbled, 400)["type"] == "BadRequest"
    assert assert_error_shape(unknown, 404)["type"] == "NotFound"
    error = assert_error_shape(unserved, 405)
    assert error["type"] == "MethodNotAllowed" and "POST" in error["message"]
    assert unserved.headers["Allow"] == "POST"


def test_a_path_served_by_several_routes_allows_the_methods_of_them_all(served):
    with client(served) as c:
        r = c.request("OPTIONS", "/v1/documents/notes/kiln-cleaning.txt")
    assert_error_shape(r, 405)
    assert r.headers["Allow"] == "DELETE, GET"


def test_error_messages_never_name_the_servers_paths(tmp_path):
    from openbook.server import KeyStore, create_app

    store = build_store(tmp_path)
    keys = KeyStore(store)
    token = keys.add("staff", ["staff"])
    private = [str(tmp_path), str(tmp_path.resolve())]
    with ServerThread(create_app(store, server_config(store), readers=1)) as server, \
            httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {token}"}, timeout=60) as c:
        # the store has no embeddings: the message says to re-embed it, naming the store without its path
        hybrid = c.post("/v1/search", json={"query": "kiln", "mode": "hybrid"})
        streamed = c.post("/v1/ask", json={"question": "How do I clean the kiln?", "mode": "hybrid",
                                           "stream": True})
        keys.path.write_text("{ not json", encoding="utf-8")  # a damaged key file: the server fails closed
        damaged = c.get("/v1/stats")
        damaged_mcp = c.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
                             headers={"Accept": "application/json, text/event-stream"})
    message = assert_error_shape(hybrid, 400)["message"]
    assert "STORE" in message and "--reembed" in message
    (event,) = _events(streamed.text)
    assert event["event"] == "error"
    streamed_error = json.loads(event["data"])["error"]
    assert set(streamed_error) == {"type", "message", "code"} and "STORE" in streamed_error["message"]
    damaged_message = assert_error_shape(damaged, 503)["message"]
    assert "keys.json" in damaged_message
    assert assert_error_shape(damaged_mcp, 503)["message"] == damaged_message
    seen = [message, streamed_error["message"], damaged_message]
    assert not [m for m in seen if any(p in m for p in private)], seen


def test_an_upload_that_ingests_nothing_is_an_error_that_carries_its_report(served):
    with client(served, "admin") as c:
        r = c.post("/v1/ingest", files=[("files", ("broken.pdf", b"%PDF-1.4 not really", "application/pdf"))])
    error = assert_error_shape(r, 422)
    assert error["type"] == "IngestError" and "broken.pdf" in error["message"]
    report = r.json()
    assert report["ok"] is False and [path for path, _ in report["failed"]] == ["broken.pdf"]
    assert str(served.store) not in r.text
    with client(served, "admin") as c:  # a file with no text ingests nothing either, and says which
        r = c.post("/v1/ingest", files=[("files", ("blank.md", b"\n\n", "text/markdown"))])
    error = assert_error_shape(r, 422)
    assert "blank.md: no text to index" in error["message"] and r.json()["ok"] is False, r.text


def test_a_chat_stream_that_fails_ends_with_an_event_in_the_error_shape(served):
    with client(served) as c:
        r = c.post("/v1/chat/completions", json={"model": "openbook", "stream": True,
                                                 "messages": [{"role": "user", "content": "kiln " * 1000}]})
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
    *events, done = _events(r.text)
    assert done == {"data": "[DONE]"}
    error = json.loads(events[-1]["data"])["error"]
    assert error["type"] == "QueryError" and error["code"] == "QueryError" and "too long" in error["message"]
