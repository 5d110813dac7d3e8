"""``openbook serve``: the HTTP API, the web page, the MCP server and the OpenAI-compatible chat endpoint.

    app.py        FastAPI app: /v1 REST API, /v1/chat/completions, /mcp, the page at /
    service.py    reader threads and the writer thread over one store
    keys.py       API keys (hashed) -> access roles
    shapes.py     the CLI's --json shapes, shared by every endpoint
    chat.py       OpenAI chat-completions shapes
    mcp_tools.py  MCP tools and resources (stdio and streamable HTTP)
    static/       the web page (plain HTML, CSS and JavaScript; no build step)

The server's packages are the ``server`` extra (``pip install 'openbook[server]'``); ``KeyStore`` needs none of
them, so ``openbook keys`` works without it. ``create_app`` is imported on first use.
"""

from typing import Any

from .._extras import require
from .keys import KeyStore, Principal

__all__ = ["KeyStore", "Principal", "create_app", "require_server"]

SERVER_MODULES = ("fastapi", "uvicorn", "mcp")
"""The import names of the ``server`` extra's packages (FastAPI brings starlette and pydantic)."""


def require_server(feature: str = "openbook serve") -> None:
    """Raise ``MissingExtraError`` naming the ``server`` extra when one of its packages is not installed.

    Args:
        feature: what needs it, starting the message (``"openbook mcp"``).
    """
    for module in SERVER_MODULES:
        require(module, "server", feature)


def __getattr__(name: str) -> Any:
    if name == "create_app":
        require_server("the HTTP server")
        from .app import create_app

        return create_app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
