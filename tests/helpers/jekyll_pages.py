"""Six real Markdown pages (Jekyll's documentation, ``shared/samples/markdown``) cut into small chunks (30 words):
the corpus of the tests that need several batches of vectors in seconds."""

from __future__ import annotations

import shutil
from pathlib import Path

from openbook.config import Config

SAMPLES = (Path(__file__).resolve().parents[2] / ".." / "shared" / "samples" / "markdown").resolve()
PAGES = ("docs__permalinks.md", "docs__datafiles.md", "docs__pagination.md", "docs__github-pages.md",
         "docs__front-matter.md", "docs__structure.md")
SMALL = {"chunking.target_words": 30, "chunking.overlap_words": 5, "chunking.max_words": 50}


def small_config(store: Path | str) -> Config:
    """The default configuration with ``SMALL`` chunks, for the store at ``store``."""
    return Config().with_overrides({"store": str(store), **SMALL})


def copy_pages(folder: Path) -> Path:
    """``PAGES`` copied into ``folder/jekyll`` (created); returns that folder."""
    target = folder / "jekyll"
    target.mkdir()
    for name in PAGES:
        shutil.copy(SAMPLES / name, target / name)
    return target
