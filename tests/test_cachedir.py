"""``openbook._cachedir.cache_folder``: the per-user cache folder of each platform, as platformdirs names it."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from openbook import _cachedir
from openbook._cachedir import cache_folder


@pytest.fixture
def no_override(monkeypatch, tmp_path):
    monkeypatch.delenv("OPENBOOK_CACHE_DIR", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("USERPROFILE", str(tmp_path))
    return tmp_path


def test_the_variable_wins(monkeypatch, tmp_path):
    monkeypatch.setenv("OPENBOOK_CACHE_DIR", str(tmp_path / "c"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "x"))
    assert cache_folder("wordnet") == tmp_path / "c" / "wordnet"


@pytest.mark.parametrize("xdg, expected", [
    ("/var/xdg", Path("/var/xdg/openbook")),
    ("", None),  # unset -> ~/.cache
    ("relative/cache", None),  # a relative XDG_CACHE_HOME is ignored (XDG Base Directory spec)
])
def test_linux(monkeypatch, no_override, xdg, expected):
    monkeypatch.setattr(sys, "platform", "linux")
    monkeypatch.setenv("XDG_CACHE_HOME", xdg)
    assert cache_folder("w") == (expected or no_override / ".cache" / "openbook") / "w"


def test_macos(monkeypatch, no_override):
    monkeypatch.setattr(sys, "platform", "darwin")
    assert cache_folder("w") == no_override / "Library" / "Caches" / "openbook" / "w"


def test_windows(monkeypatch, no_override):
    monkeypatch.setattr(sys, "platform", "win32")
    monkeypatch.setenv("LOCALAPPDATA", str(no_override / "Local"))
    assert cache_folder("w") == no_override / "Local" / "openbook" / "Cache" / "w"
    monkeypatch.delenv("LOCALAPPDATA")
    assert cache_folder("w") == no_override / "AppData" / "Local" / "openbook" / "Cache" / "w"


@pytest.mark.skipif(sys.platform not in ("linux", "win32"), reason="platformdirs >= 4.4 reads XDG_* on macOS too")
def test_same_folder_as_platformdirs(no_override):
    platformdirs = pytest.importorskip("platformdirs")
    assert _cachedir._user_cache_folder() == Path(platformdirs.user_cache_dir("openbook", appauthor=False))
