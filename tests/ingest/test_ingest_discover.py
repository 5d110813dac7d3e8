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


@pytest.mark.parametrize(
    "name, data, kind",
    [
        ("notes.txt", b"\x7fELF\x02\x01\x01" + bytes(200), "ELF executable"),
        ("random.txt", bytes((i * 197 + 13) % 256 for i in range(4096)), "binary content"),
        ("page.html", b"PK\x03\x04" + bytes(100), "zip archive"),
        ("table.csv", b"a,b\n1,2\n" + b"\x00\x00\x00\x01" * 20, "NUL bytes"),  # many NUL runs (one is text)
        ("ls.1", b"\x89PNG\r\n\x1a\n" + bytes(50), "PNG image"),
    ],
)
def test_binary_content_is_skipped(tmp_path, name, data, kind):
    path = tmp_path / name
    path.write_bytes(data)
    with pytest.raises(UnsupportedFormatError, match=f"{name}: binary content.*{kind}|{name}: binary content") as info:
        load_file(path, name)
    assert kind in str(info.value) or kind == "binary content"


def test_utf16_text_is_text(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_bytes("Relay notes\n\nPort 9090 is the default.\n".encode("utf-16"))
    assert "Port 9090" in load_file(path, "notes.txt")[0].text


def test_unsupported_and_compressed_binary_types_are_skips(tmp_path):
    for name in ("archive.tar.gz", "data.bin", "Makefile"):
        (tmp_path / name).write_bytes(b"x")
        with pytest.raises(UnsupportedFormatError, match="unsupported"):
            load_file(tmp_path / name, name)


def test_symlinked_folders_followed_once(tmp_path):
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "a.md").write_text("# A\n", encoding="utf-8")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "b.md").write_text("# B\n", encoding="utf-8")
    (tmp_path / "docs" / "linked").symlink_to(tmp_path / "real", target_is_directory=True)
    (tmp_path / "docs" / "loop").symlink_to(tmp_path / "docs", target_is_directory=True)
    found = [doc_id for _, doc_id in discover([tmp_path / "docs"])]
    assert found == ["b.md", "linked/a.md"]


def test_conventional_text_names_are_text(tmp_path):
    import gzip

    (tmp_path / "README").write_text("Relay\n\nInstall with make.\n", encoding="utf-8")
    (tmp_path / "changelog.Debian.gz").write_bytes(gzip.compress(b"relay (2.3-1) unstable; urgency=low\n\n  * New upstream.\n"))
    assert load_file(tmp_path / "README", "README")[0].format == "text"
    doc = load_file(tmp_path / "changelog.Debian.gz", "changelog.Debian.gz")[0]
    assert doc.format == "text" and "New upstream" in doc.text


def test_beir_queries_and_qrels_beside_a_corpus_are_skipped(tmp_path):
    (tmp_path / "corpus.jsonl").write_text('{"_id": "1", "title": "Wings", "text": "Lift on a wing."}\n', encoding="utf-8")
    (tmp_path / "queries.jsonl").write_text('{"_id": "1", "text": "what is lift?"}\n', encoding="utf-8")
    (tmp_path / "qrels").mkdir()
    (tmp_path / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n1\t1\t1\n", encoding="utf-8")
    assert [d.doc_id for d in load_file(tmp_path / "corpus.jsonl", "corpus.jsonl")] == ["1"]
    with pytest.raises(UnsupportedFormatError, match="BEIR queries"):
        load_file(tmp_path / "queries.jsonl", "queries.jsonl")
    with pytest.raises(UnsupportedFormatError, match="BEIR relevance"):
        load_file(tmp_path / "qrels" / "test.tsv", "qrels/test.tsv")
    alone = tmp_path / "other"
    alone.mkdir()
    (alone / "queries.jsonl").write_text('{"_id": "q", "text": "a record named queries"}\n', encoding="utf-8")
    assert [d.doc_id for d in load_file(alone / "queries.jsonl", "queries.jsonl")] == ["q"]


def test_a_link_to_a_folder_of_the_same_tree_does_not_take_its_files_ids(tmp_path):
    (tmp_path / "docs" / "current").mkdir(parents=True)
    (tmp_path / "docs" / "current" / "vpn.txt").write_text("version five\n", encoding="utf-8")
    (tmp_path / "docs" / "archive").symlink_to("current", target_is_directory=True)  # sorts first
    assert [doc_id for _, doc_id in discover([tmp_path / "docs"])] == ["current/vpn.txt"]
