"""``openbook delete`` by file path: a path that names no stored document is reported and fails, like an id."""

from __future__ import annotations

import json

from openbook.cli import main


def delete(capsys, *args: str) -> tuple[int, str]:
    code = 0
    try:
        main(["delete", *args])
    except SystemExit as exc:  # main exits only on a failure
        code = exc.code
    return code, capsys.readouterr().out


NOTES = {"a.md": "# Alpha\n\nThe alpha note.\n", "b.md": "# Beta\n\nThe beta note.\n"}


def ingested(tmp_path, capsys, names=("a.md",)):
    """A BM25 store ``kb`` of the ``NOTES`` named, ingested from the folder ``docs``: ``(docs, kb)``."""
    docs, kb = tmp_path / "docs", str(tmp_path / "kb")
    docs.mkdir()
    for name in names:
        (docs / name).write_text(NOTES[name], encoding="utf-8")
    main(["ingest", str(docs), "--store", kb, "--no-embed"])
    capsys.readouterr()
    return docs, kb


def test_a_path_of_a_file_never_ingested_or_already_deleted_is_not_found(tmp_path, capsys):
    docs, kb = ingested(tmp_path, capsys, ("a.md", "b.md"))
    stray = tmp_path / "never-ingested.md"
    stray.write_text("# Stray\n\nNot in the store.\n", encoding="utf-8")
    code, out = delete(capsys, str(docs / "a.md"), "--store", kb)
    assert code == 0 and out.startswith("deleted 1 document") and "not found" not in out, out
    code, out = delete(capsys, str(docs / "a.md"), "--store", kb)  # a second time: nothing left to delete
    assert code == 1 and f"not found: {docs / 'a.md'}" in out, out
    code, out = delete(capsys, str(stray), "--store", kb)
    assert code == 1 and f"not found: {stray}" in out, out
    code, out = delete(capsys, "b.md", str(stray), "--store", kb)  # one found, one not: named, and it succeeds
    assert code == 0 and out.startswith("deleted 1 document; not found: ") and str(stray) in out, out
    code, out = delete(capsys, "b.md", "--store", kb, "--json")  # gone already: JSON says so, and it fails
    assert code == 1 and json.loads(out) == {"deleted": [], "not_found": ["b.md"]}, out


def test_delete_json_names_what_it_deleted(tmp_path, capsys):
    docs, kb = ingested(tmp_path, capsys)
    code, out = delete(capsys, "a.md", "nope.md", "--store", kb, "--json")
    assert code == 0 and json.loads(out) == {"deleted": ["a.md"], "not_found": ["nope.md"]}, out


def test_show_takes_the_files_path_as_delete_does(tmp_path, capsys):
    docs, kb = ingested(tmp_path, capsys)
    main(["show", str(docs / "a.md"), "--store", kb])
    assert capsys.readouterr().out.startswith("a.md — Alpha\n")


def test_show_by_path_with_roles_tells_a_hidden_document_from_a_missing_one_no_better_than_by_id(tmp_path, capsys):
    docs, kb = tmp_path / "docs", str(tmp_path / "kb")
    docs.mkdir()
    (docs / "hidden.md").write_text("---\nacl: finance\n---\n# Budget\n\nThe budget.\n", encoding="utf-8")
    (docs / "missing.md").write_text("# Never ingested\n", encoding="utf-8")
    main(["ingest", str(docs / "hidden.md"), "--store", kb, "--no-embed"])
    capsys.readouterr()
    errors = []
    for name in ("hidden.md", "missing.md"):
        try:
            main(["show", str(docs / name), "--role", "staff", "--store", kb])
        except SystemExit as exc:
            assert exc.code == 1
        errors.append(capsys.readouterr().err)
    assert errors[0].replace("hidden", "missing") == errors[1] and "visible to roles ['staff']" in errors[0]
