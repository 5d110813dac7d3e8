"""``openbook delete`` by file path: a path that names no stored document is reported and fails, like an id."""

from __future__ import annotations

from openbook.cli import main


def delete(capsys, *args: str) -> tuple[int, str]:
    code = 0
    try:
        main(["delete", *args])
    except SystemExit as exc:  # main exits only on a failure
        code = exc.code
    return code, capsys.readouterr().out


def test_a_path_of_a_file_never_ingested_or_already_deleted_is_not_found(tmp_path, capsys):
    docs, kb = tmp_path / "docs", str(tmp_path / "kb")
    docs.mkdir()
    (docs / "a.md").write_text("# Alpha\n\nThe alpha note.\n", encoding="utf-8")
    (docs / "b.md").write_text("# Beta\n\nThe beta note.\n", encoding="utf-8")
    stray = tmp_path / "never-ingested.md"
    stray.write_text("# Stray\n\nNot in the store.\n", encoding="utf-8")
    main(["ingest", str(docs), "--store", kb, "--no-embed"])
    capsys.readouterr()
    code, out = delete(capsys, str(docs / "a.md"), "--store", kb)
    assert code == 0 and out.startswith("deleted 1 document(s)") and "not found" not in out, out
    code, out = delete(capsys, str(docs / "a.md"), "--store", kb)  # a second time: nothing left to delete
    assert code == 1 and f"not found: {docs / 'a.md'}" in out, out
    code, out = delete(capsys, str(stray), "--store", kb)
    assert code == 1 and f"not found: {stray}" in out, out
    code, out = delete(capsys, "b.md", str(stray), "--store", kb)  # one found, one not: named, and it succeeds
    assert code == 0 and out.startswith("deleted 1 document(s); not found: ") and str(stray) in out, out
