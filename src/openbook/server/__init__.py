"""``openbook serve``: the HTTP API, the web page, the MCP server and the OpenAI-compatible chat endpoint.

    app.py        FastAPI app: /v1 REST API, /v1/chat/completions, /mcp, the page at /
    service.py    reader threads and the writer thread over one store
    keys.py       API keys (hashed) -> access roles
    shapes.py     the CLI's --json shapes, shared by every endpoint
    chat.py       OpenAI chat-completions shapes
    mcp_tools.py  MCP tools and resources (stdio and streamable HTTP)
    static/       the web page (plain HTML, CSS and JavaScript; no build step)
"""

from .app import create_app
from .keys import KeyStore, Principal

__all__ = ["KeyStore", "Principal", "create_app"]
