import pytest

from openbook.errors import IngestError, UnsupportedFormatError
from openbook.ingest import SUPPORTED_SUFFIXES, discover, load_file


def test_walks_folders_sorted_and_skips_hidden(tmp_path):
    (tmp_path / "b").mkdir()
    (tmp_path / ".git").mkdir()
    (tmp_path / "b" / "z.md").write_text("# Z\n", encoding="utf-8")
    (tmp_path / "a.txt").write_text("A\n", encoding="utf-8")
    (tmp_path / ".hidden.md").write_text("x", encoding="utf-8")
    (tmp_path / ".git" / "config.txt").write_text("x", encoding="utf-8")
    (tmp_path / "image.png").write_bytes(b"\x89PNG")
    single = tmp_path / "b" / "z.md"
    found = discover([tmp_path, single])
    assert [doc_id for _, doc_id in found] == ["a.txt", "b/z.md", "image.png"]  # z.md listed once
    assert discover([single]) == [(single, "z.md")]


def test_missing_path_raises(tmp_path):
    with pytest.raises(IngestError, match="no such file or folder"):
        discover([tmp_path / "nope"])


def test_unsupported_suffix_is_reported(tmp_path):
    path = tmp_path / "image.png"
    path.write_bytes(b"\x89PNG")
    with pytest.raises(UnsupportedFormatError, match=r"image\.png: unsupported file type '\.png'"):
        load_file(path, "image.png")
    assert {".md", ".html", ".txt", ".csv", ".pdf", ".jsonl"} <= SUPPORTED_SUFFIXES
