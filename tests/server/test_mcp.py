"""The MCP server with the official ``mcp`` client: ``openbook mcp`` over stdio, and streamable HTTP at /mcp."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
import httpx2
from mcp.client.client import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from helpers.served import FINANCE_SECRET

REPO = Path(__file__).resolve().parents[2]
QUESTION = "How many days of annual leave do full-time employees get?"


async def _session(target: Any) -> dict[str, Any]:
    """Everything a staff client can get: tools, both tool results, the resource list, one resource, and what the
    finance-only questions return."""
    out: dict[str, Any] = {}
    async with Client(target) as client:
        out["tools"] = sorted(t.name for t in (await client.list_tools()).tools)
        out["search"] = (await client.call_tool("search", {"query": "annual leave", "k": 3})).structured_content
        out["ask"] = (await client.call_tool("ask", {"question": QUESTION})).structured_content
        resources = (await client.list_resources()).resources
        out["resources"] = [(str(r.uri), r.name) for r in resources]
        leave = next(str(r.uri) for r in resources if r.name == "leave-policy.md")
        out["document"] = json.loads((await client.read_resource(leave)).contents[0].text)
        secret = [
            await client.call_tool("search", {"query": "marketing budget approval code", "k": 50}),
            await client.call_tool("ask", {"question": "What is the budget approval code?"}),
        ]
        try:
            secret.append(await client.read_resource("openbook://documents/finance%2Fbudget.md"))
        except MCPError as exc:
            assert "no document 'finance/budget.md'" in str(exc)
        out["finance"] = " ".join(repr(s) for s in secret)
    return out


def _check(out: dict[str, Any]) -> None:
    assert out["tools"] == ["ask", "search"]
    assert out["search"]["hits"][0]["doc_id"] == "leave-policy.md" and out["search"]["hits"][0]["text"]
    assert "25 days" in out["ask"]["answer"] and out["ask"]["citations"][0]["doc_id"] == "leave-policy.md"
    names = [name for _, name in out["resources"]]
    assert "leave-policy.md" in names and "staff/parking.md" in names
    assert out["document"]["title"] == "Leave Policy" and out["document"]["chunks"]
    assert "finance/budget.md" not in names
    assert FINANCE_SECRET not in out["finance"] and "480,000" not in out["finance"]


def test_stdio_with_the_official_client(served):
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "openbook", "mcp", "--store", str(served.store)],
        env={**os.environ, "PYTHONPATH": str(REPO / "src"), "OPENBOOK_API_KEY": served.tokens["staff"],
             "OPENBOOK_EMBEDDING_ENABLED": "false"})
    _check(anyio.run(_session, params))


def test_streamable_http_under_serve(served):
    async def over_http(token: str) -> dict[str, Any]:
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60) as http:
            return await _session(streamable_http_client(f"{served.url}/mcp", http_client=http))

    _check(anyio.run(over_http, served.tokens["staff"]))
    r = httpx2.post(f"{served.url}/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    assert r.status_code == 401
