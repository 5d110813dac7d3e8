"""File helpers every layer may use (it imports nothing from openbook).

    write_json_atomic    path, JSON-able data -> the file replaced whole, never half-written
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

__all__ = ["write_json_atomic"]


def write_json_atomic(path: Path, data: Any) -> None:
    """Write ``data`` as JSON (UTF-8, indent 1) to ``path`` through a temporary file beside it, ``fsync`` and
    ``os.replace``: a reader sees the old file or the new one, never a part. Raises ``OSError`` from the file
    system and ``TypeError`` for data JSON cannot hold."""
    tmp = path.with_suffix(path.suffix + ".tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(data, fh, ensure_ascii=False, indent=1)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)
