"""The Python API: ``Engine`` ties the five stages to one store. The CLI and the server call only this.

    engine = Engine.open(".openbook", config)
    report = engine.ingest(["docs/"])
    hits = engine.search("how long is trash kept", k=10, roles=["staff"])
    answer = engine.ask("How long is trash kept?", roles=["staff"])
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from .config import Config
from .types import Answer, Hit


@dataclass
class IngestReport:
    """What one ``ingest`` call did; counts are documents unless named otherwise."""

    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)  # (path, one-line reason)
    chunks_added: int = 0
    chunks_removed: int = 0
    chunks_total: int = 0

    @property
    def ok(self) -> bool:
        """False only when files were given and nothing at all could be ingested."""
        return not (self.failed and not (self.added or self.updated or self.unchanged))
