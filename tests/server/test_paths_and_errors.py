"""What a caller of the server sees never holds the server's own file paths (upload reports, document lists and
views, MCP resources), and a tool call with bad input is a clear tool error, not a crash with a traceback in the
server's log. A real server, real HTTP and MCP clients."""

from __future__ import annotations

import logging
from typing import Any

import anyio
import httpx
import httpx2
from mcp.client.client import Client
from mcp.client.streamable_http import streamable_http_client

from helpers.served import ServerThread, build_store, server_config


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def test_callers_see_paths_relative_to_the_ingest_folder_never_the_servers(tmp_path):
    from openbook.server import KeyStore, create_app

    store = build_store(tmp_path)
    token = KeyStore(store).add("admin", ["staff", "finance"], write=True)
    private = [str(tmp_path), str(tmp_path.resolve())]

    async def mcp_resources(url: str) -> list[str]:
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60) as http:
            async with Client(streamable_http_client(f"{url}/mcp", http_client=http)) as client:
                return [r.description or "" for r in (await client.list_resources()).resources]

    with ServerThread(create_app(store, server_config(store), readers=1)) as server, \
            httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {token}"}, timeout=60) as c:
        r = c.post("/v1/ingest", files=[("files", ("plan.md", b"# Plan\n\nThe canteen opens at noon.\n",
                                                   "text/markdown")),
                                        ("files", ("broken.docx", b"not a zip at all", "application/msword"))])
        assert r.status_code == 200, r.text
        report = r.json()
        assert report["added"] == ["plan.md"]
        assert [(p, why.split(":")[0]) for p, why in report["failed"]] == [("broken.docx", "broken.docx")]
        assert [p["path"] for p in report["problems"]] == ["broken.docx"]
        listed = c.get("/v1/documents").json()["documents"]
        sources = {d["doc_id"]: d["source"] for d in listed}
        assert sources["plan.md"] == "plan.md" and sources["finance/budget.md"] == "finance/budget.md"
        shown = c.get("/v1/documents/finance/budget.md").json()
        assert shown["source"] == "finance/budget.md"
        descriptions = anyio.run(mcp_resources, server.url)
        seen = _strings(report) + _strings(listed) + _strings(shown) + descriptions
        assert descriptions and not [s for s in seen if any(p in s for p in private)]


def test_an_mcp_search_with_an_empty_query_is_a_clear_tool_error_without_a_traceback(served, caplog):
    async def empty_search() -> Any:
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {served.tokens['staff']}"},
                                      timeout=60) as http:
            async with Client(streamable_http_client(f"{served.url}/mcp", http_client=http)) as client:
                return await client.call_tool("search", {"query": ""})

    with caplog.at_level(logging.INFO):
        result = anyio.run(empty_search)
    assert result.is_error
    text = " ".join(getattr(part, "text", "") for part in result.content)
    assert "QueryError" in text and "empty" in text.lower(), text
    assert not [r for r in caplog.records if r.exc_info or r.levelno >= logging.ERROR]
