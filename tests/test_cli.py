"""The CLI as a user runs it: a real subprocess per command, real files, a temporary store."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def run(*args: str, cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    full_env = {**os.environ, "PYTHONPATH": str(REPO / "src"), **(env or {})}
    full_env.pop("OPENBOOK_STORE", None) if env is None or "OPENBOOK_STORE" not in env else None
    return subprocess.run([sys.executable, "-m", "openbook", *args], cwd=cwd, capture_output=True, text=True,
                          env=full_env, timeout=300)


@pytest.fixture(scope="module")
def lab_store(tmp_path_factory, shared):
    cwd = tmp_path_factory.mktemp("cli")
    r = run("ingest", str(shared / "labs" / "skyladder" / "docs"), "--store", "s", cwd=cwd)
    assert r.returncode == 0, r.stderr
    assert "30 added" in r.stdout
    return cwd


def test_ingest_help_names_every_format_it_reads():
    # the help listed six formats while the loaders read twelve
    from click.testing import CliRunner

    from openbook.cli import cli

    out = " ".join(CliRunner().invoke(cli, ["ingest", "--help"]).output.split())
    for name in ("Markdown", "HTML", "text", "CSV", "PDF", "reST", "DOCX", "PPTX", "EPUB", "man pages", "gzip",
                 "corpus.jsonl"):
        assert name in out, name


def test_quickstart(tmp_path):
    r = run("quickstart", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "[1]" in r.stdout and "Sources:" in r.stdout
    assert "I could not find this in the documents." in r.stdout


@pytest.mark.slow  # shares a module store of the lab embedded with the real model: about 30 s to build
def test_reingest_reports_unchanged(lab_store, shared):
    r = run("ingest", str(shared / "labs" / "skyladder" / "docs"), "--store", "s", "--json", cwd=lab_store)
    report = json.loads(r.stdout)
    assert len(report["unchanged"]) == 30 and report["added"] == [] and report["chunks_added"] == 0


@pytest.mark.slow  # shares a module store of the lab embedded with the real model: about 30 s to build
def test_search_json_and_snippet(lab_store):
    r = run("search", "error E-2043", "-k", "3", "--json", "--role", "staff", "--store", "s", cwd=lab_store)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert any(h["doc_id"].startswith("doc-004") for h in out["hits"])
    assert all("**E-2043" in h["snippet"] for h in out["hits"])
    human = run("search", "error E-2043", "--role", "staff", "--store", "s", cwd=lab_store).stdout
    assert "doc-004" in human and "score" in human


@pytest.mark.slow  # shares a module store of the lab embedded with the real model: about 30 s to build
def test_search_many_queries(lab_store, tmp_path):
    qfile = tmp_path / "q.txt"
    qfile.write_text("trash retention\nselective sync\n")
    r = run("search", "--queries", str(qfile), "-k", "5", "--role", "staff", "--store", "s", cwd=lab_store)
    lines = [json.loads(x) for x in r.stdout.splitlines()]
    assert [x["query_id"] for x in lines] == ["1", "2"]
    assert all(len(x["hits"]) == 5 for x in lines)
    scores = [h["score"] for h in lines[0]["hits"]]
    assert scores == sorted(scores, reverse=True)


@pytest.mark.slow  # shares a module store of the lab embedded with the real model: about 30 s to build
def test_ask_json_with_roles(lab_store):
    r = run("ask", "What is the FY2025 Marketing budget?", "--role", "staff", "--json", "--store", "s",
            cwd=lab_store)
    out = json.loads(r.stdout)
    assert out["refused"] is True and out["citations"] == []
    assert all(not p["doc_id"].startswith("doc-011") for p in out["passages"])
    r = run("ask", "What is the FY2025 Marketing budget?", "--role", "finance", "--json", "--store", "s",
            cwd=lab_store)
    out = json.loads(r.stdout)
    assert out["refused"] is False and out["citations"][0]["doc_id"].startswith("doc-011")


@pytest.mark.slow  # shares a module store of the lab embedded with the real model: about 30 s to build
def test_store_from_environment_and_config_file(lab_store):
    r = run("stats", "--json", cwd=lab_store, env={"OPENBOOK_STORE": "s"})
    info = json.loads(r.stdout)
    assert info["all_documents"] == 30 and info["backend"] == "embedded" and info["schema_version"] == 1
    plain = run("stats", cwd=lab_store, env={"OPENBOOK_STORE": "s"}).stdout
    assert "embedded store, schema version 1" in plain
    # the plain line says whether the dense leg exists: the lab store is embedded with the default embedder
    assert f"vectors {info['manifest']['embedding']['model']}, 384 dimensions, f32" in plain
    (lab_store / "openbook.toml").write_text('store = "s"\n')
    try:
        assert json.loads(run("stats", "--all", "--json", cwd=lab_store).stdout)["documents"] == 30
        (lab_store / "openbook.toml").write_text('store = "s"\nbogus = 1\n')
        r = run("stats", cwd=lab_store)
        assert r.returncode == 1 and "bogus" in r.stderr and "Traceback" not in r.stderr
    finally:
        (lab_store / "openbook.toml").unlink()


@pytest.mark.slow  # shares a module store of the lab embedded with the real model: about 30 s to build
def test_store_and_config_options_on_either_side_of_the_subcommand(lab_store, tmp_path):
    config = tmp_path / "other.toml"
    config.write_text('store = "s"\n')
    for args in (("--store", "s", "stats", "--json"), ("stats", "--store", "s", "--json"),
                 ("--config", str(config), "stats", "--json"), ("stats", "--config", str(config), "--json")):
        r = run(*args, cwd=lab_store)
        assert r.returncode == 0 and json.loads(r.stdout)["all_documents"] == 30, (args, r.stderr)
    # the subcommand's own --store wins over the group's
    r = run("--store", "nowhere", "stats", "--store", "s", "--json", cwd=lab_store)
    assert r.returncode == 0, r.stderr


def test_eval_writes_the_store_given_on_either_side_of_the_subcommand(tmp_path):
    data = tmp_path / "tiny"
    (data / "qrels").mkdir(parents=True)
    (data / "corpus.jsonl").write_text('{"_id": "d1", "title": "Bees", "text": "Honey bees make honey."}\n'
                                       '{"_id": "d2", "title": "Ants", "text": "Ants live in colonies."}\n')
    (data / "queries.jsonl").write_text('{"_id": "q1", "text": "What do honey bees make?"}\n')
    (data / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n")
    for store, args in (("before", ("--store", "before", "eval", "retrieval")),
                        ("after", ("eval", "retrieval", "--store", "after"))):
        r = run(*args, "--dataset", str(data), "--no-embed", "--out", "out", cwd=tmp_path)
        assert r.returncode == 0, r.stderr
        assert (tmp_path / store).is_dir(), args  # not a throw-away store


@pytest.mark.parametrize("args,needle", [
    (("search", "x", "--store", "nowhere"), "no openbook store"),
    (("search", "   ", "--store", "s"), "empty query"),
    (("ask", "", "--store", "s"), "empty question"),
    (("search", "x", "--where", "garbage", "--store", "s"), "cannot parse filter"),
])
@pytest.mark.slow  # shares a module store of the lab embedded with the real model: about 30 s to build
def test_errors_are_one_clear_line(lab_store, args, needle):
    r = run(*args, cwd=lab_store)
    assert r.returncode == 1
    assert needle in r.stderr and "Traceback" not in r.stderr


def test_ingest_reports_bad_files_and_continues(tmp_path, shared):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "ok.md").write_text("# Fine\nA perfectly fine document about zebras.\n")
    (docs / "bad.pdf").write_bytes(b"%PDF-1.4 garbage")
    (docs / "notes.xyz").write_text("unsupported")
    r = run("ingest", str(docs), "--store", "s", cwd=tmp_path)
    assert r.returncode == 0
    assert "bad.pdf" in r.stderr and "notes.xyz" in r.stderr and "1 added" in r.stdout
    r = run("ingest", str(docs / "bad.pdf"), "--store", "s2", cwd=tmp_path)
    assert r.returncode == 1  # nothing could be ingested


@pytest.mark.slow  # shares a module store of the lab embedded with the real model: about 30 s to build
def test_top_k_must_be_positive(lab_store):
    r = run("search", "x", "-k", "0", "--store", "s", cwd=lab_store)
    assert r.returncode == 2 and "Traceback" not in r.stderr


@pytest.mark.slow  # shares a module store of the lab embedded with the real model: about 30 s to build
def test_snippets_do_not_double_the_source_s_bold(lab_store):
    r = run("search", "trash retention", "--role", "staff", "--json", "--store", "s", cwd=lab_store)
    snippets = [h["snippet"] for h in json.loads(r.stdout)["hits"]]
    assert snippets and not any("****" in s or "** **" in s for s in snippets)


def test_ingest_of_a_missing_path_creates_no_store(tmp_path):
    r = run("ingest", "nope/", "--store", "fresh", cwd=tmp_path)
    assert r.returncode == 1 and "no such file" in r.stderr and not (tmp_path / "fresh").exists()


def test_ingest_of_an_empty_folder_says_so_and_creates_no_store(tmp_path):
    (tmp_path / "empty" / ".hidden").mkdir(parents=True)
    r = run("ingest", "empty", "--store", "fresh", cwd=tmp_path)
    assert r.returncode == 1 and "no files to ingest" in r.stderr and not (tmp_path / "fresh").exists()
    (tmp_path / "empty" / "notes.xyz").write_text("not a type openbook reads")
    r = run("ingest", "empty", "--store", "fresh", cwd=tmp_path)
    assert r.returncode == 1 and ".xyz" in r.stderr and "no store was created" in r.stderr
    assert not (tmp_path / "fresh").exists()


def test_a_first_ingest_where_every_file_fails_leaves_no_store(tmp_path):
    # it left an empty store folder behind, which later read as a valid store of 0 documents
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "broken.md").write_text("---\nacl: [hr\n---\n# Pay\n\nPay day is the 25th.\n")
    (tmp_path / "docs" / "no-roles.md").write_text("---\nacl:\n---\n# Leave\n\nLeave is 28 days.\n")
    r = run("ingest", "docs", "--store", "fresh", "--no-embed", cwd=tmp_path)
    assert r.returncode == 1 and not (tmp_path / "fresh").exists()
    assert r.stderr.count("failed: ") == 2 and "broken.md" in r.stderr and "no-roles.md" in r.stderr
    assert "no store was created" in r.stderr and "no store" in r.stdout
    assert "no openbook store" in run("stats", "--store", "fresh", cwd=tmp_path).stderr
    # a folder that already existed and is empty keeps nothing of a failed first ingest
    (tmp_path / "mine").mkdir()
    r = run("ingest", "docs", "--store", "mine", "--no-embed", "--json", cwd=tmp_path)
    report = json.loads(r.stdout)
    assert r.returncode == 1 and len(report["failed"]) == 2 and report["ok"] is False
    assert list((tmp_path / "mine").iterdir()) == []
    # a store that exists is never removed, even when a later ingest stores nothing
    (tmp_path / "good").mkdir()
    (tmp_path / "good" / "ok.md").write_text("# Fine\n\nA fine document about zebras.\n")
    assert run("ingest", "good", "--store", "s", "--no-embed", cwd=tmp_path).returncode == 0
    assert "BM25 only, no vectors (`openbook ingest --reembed" in run("stats", "--store", "s", cwd=tmp_path).stdout
    assert run("delete", "ok.md", "--store", "s", cwd=tmp_path).returncode == 0
    assert run("ingest", "docs", "--store", "s", "--no-embed", cwd=tmp_path).returncode == 1
    assert (tmp_path / "s" / "openbook.sqlite").is_file()


def test_a_store_is_never_made_in_a_folder_that_holds_other_files(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "ok.md").write_text("# Fine\n\nA fine document about zebras.\n")
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep me")
    r = run("ingest", "docs", "--store", "mine", "--no-embed", cwd=tmp_path)
    assert r.returncode != 0 and "holds other files (notes.txt)" in r.stderr and "new or empty folder" in r.stderr
    assert "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert sorted(p.name for p in (tmp_path / "mine").iterdir()) == ["notes.txt"]
    # the store's own files do not count: an existing store, or a folder with only a hidden file, is fine
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / ".gitkeep").write_text("")
    assert run("ingest", "docs", "--store", "empty", "--no-embed", cwd=tmp_path).returncode == 0
    assert run("ingest", "docs", "--store", "empty", "--no-embed", cwd=tmp_path).returncode == 0


def test_a_first_ingest_of_only_empty_or_binary_files_exits_1(tmp_path):
    # it printed "no store" yet exited 0 with "ok": true, so a script went on to ask an absent store
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "blank.txt").write_text("\n")
    (tmp_path / "docs" / "image.md").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" * 50)
    r = run("ingest", "docs", "--store", "fresh", "--no-embed", cwd=tmp_path)
    assert r.returncode == 1 and not (tmp_path / "fresh").exists()
    assert "empty: " in r.stderr and "skipped 1 file: image.md" in r.stderr and "no store" in r.stdout
    r = run("ingest", "docs", "--store", "fresh", "--no-embed", "--json", cwd=tmp_path)
    report = json.loads(r.stdout)
    assert r.returncode == 1 and report["ok"] is False and [p["kind"] for p in report["problems"]] == ["empty"]
    # into a store that exists, the same files still ingest nothing: exit 1 as a broken file's does, the store
    # kept as it was; beside a file that is ingested (or unchanged), an empty one is reported and no error
    (tmp_path / "good").mkdir()
    (tmp_path / "good" / "ok.md").write_text("# Fine\n\nA fine document about zebras.\n")
    assert run("ingest", "good", "--store", "s", "--no-embed", cwd=tmp_path).returncode == 0
    r = run("ingest", "docs", "--store", "s", "--no-embed", cwd=tmp_path)
    assert r.returncode == 1 and "empty: " in r.stderr and "store s: 1 document" in r.stdout, r.stdout + r.stderr
    (tmp_path / "good" / "blank.txt").write_text("\n")
    assert run("ingest", "good", "--store", "s", "--no-embed", cwd=tmp_path).returncode == 0


def test_a_first_ingest_of_files_read_by_name_creates_the_store(tmp_path):
    # README, perl.3pm: read by load_file, but the first-ingest check looked at the bare suffix and refused them
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "README").write_text("The Frobnitz tool converts widgets.\n")
    (tmp_path / "docs" / "frob.3pm").write_text(".TH FROB 3pm\n.SH NAME\nfrob \\- convert widgets\n")
    r = run("ingest", "docs", "--store", "fresh", "--no-embed", "--json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert sorted(json.loads(r.stdout)["added"]) == ["README", "frob.3pm"]


def test_ingest_report_lines(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "ok.md").write_text("# Fine\nA perfectly fine document about zebras.\n")
    (docs / "blank.txt").write_text("\n")
    for name in ("a.xyz", "b.xyz"):
        (docs / name).write_text("Title\n=====\n")
    r = run("ingest", "docs", "--store", "s", "--no-embed", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    lines = r.stderr.splitlines()
    assert "skipped 2 files: a.xyz, b.xyz (unsupported type)" in lines
    assert any(line.startswith("empty: ") and "blank.txt" in line for line in lines)
    assert "1 added" in r.stdout and "0 failed, 2 skipped, 1 empty" in r.stdout and "docs/s" in r.stdout
    report = json.loads(run("ingest", "docs", "--store", "s", "--no-embed", "--json", cwd=tmp_path).stdout)
    assert len(report["skipped"]) == 2 and report["failed"] == [] and report["unchanged"] == ["ok.md"]


def test_ingest_json_gives_failed_and_empty_files_one_shape(tmp_path):
    # failed entries were [path, "path: reason"] and empty ones [resolved path, doc_id]: two shapes to parse
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "ok.md").write_text("# Fine\nA perfectly fine document about zebras.\n")
    (docs / "blank.txt").write_text("\n")
    (docs / "no-roles.md").write_text("---\nacl: []\n---\n# Leave\n\nLeave is 28 days.\n")
    r = run("ingest", "docs", "--store", "s", "--no-embed", "--json", cwd=tmp_path)
    report = json.loads(r.stdout)
    assert r.returncode == 0, r.stderr
    by_kind = {p["kind"]: p for p in report["problems"]}
    assert [sorted(p) for p in report["problems"]] == [["doc_id", "kind", "path", "reason"]] * 2
    assert by_kind["failed"]["path"] == str(Path("docs") / "no-roles.md")
    assert by_kind["failed"]["doc_id"] == "no-roles.md"
    assert by_kind["failed"]["reason"].startswith("malformed acl")
    assert by_kind["empty"] == {"path": str(Path("docs") / "blank.txt"), "kind": "empty", "doc_id": "blank.txt",
                                "reason": "no text to index (0 chunks); not stored"}
    # the older pair forms are kept for the scripts that read them
    assert report["failed"] == [[str(Path("docs") / "no-roles.md"), f"{Path('docs') / 'no-roles.md'}: "
                                                                    f"{by_kind['failed']['reason']}"]]
    assert report["empty"] == [[str((docs / "blank.txt").resolve()), "blank.txt"]]


@pytest.mark.slow  # shares a module store of the lab embedded with the real model: about 30 s to build
def test_where_on_a_field_no_document_has_warns(lab_store):
    r = run("search", "trash", "--where", "stauts=current", "--role", "staff", "--json", "--store", "s",
            cwd=lab_store)
    assert r.returncode == 0
    out = json.loads(r.stdout)
    assert out["hits"] == [] and len(out["warnings"]) == 1 and "stauts" in out["warnings"][0]
    assert r.stderr.startswith("warning: ") and len(r.stderr.strip().splitlines()) == 1


def test_ask_json_gives_the_answerability_score(tmp_path):
    # the score the answerer refuses by (README: ``Answer.confidence``) reaches scripts, answered or refused
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "leave.md").write_text("# Leave\n\nFull-time staff get 28 days of annual leave a year.\n")
    assert run("ingest", "docs", "--no-embed", "--store", "s", cwd=tmp_path).returncode == 0
    answered = json.loads(run("ask", "How many days of annual leave do full-time staff get?", "--json",
                              "--store", "s", cwd=tmp_path).stdout)
    refused = json.loads(run("ask", "What is the capital of Australia?", "--json", "--store", "s",
                             cwd=tmp_path).stdout)
    assert answered["refused"] is False and answered["confidence"] >= 0.5
    assert refused["refused"] is True and "confidence" in refused
    assert refused["confidence"] is None or refused["confidence"] < 0.5
    # what the answerability model read reaches scripts too, and every refusal says why
    from openbook.answer.refusal import FEATURES, answerability

    assert set(answered["features"]) == set(FEATURES)
    assert answerability(answered["features"], "en") == pytest.approx(answered["confidence"])
    assert refused["notes"] and refused["notes"][0].startswith("refused: ")


@pytest.mark.slow  # shares a module store of the lab embedded with the real model: about 30 s to build
def test_stats_for_a_role_counts_only_what_it_may_see(lab_store):
    def count(*args: str) -> dict:
        r = run("stats", "--json", "--store", "s", *args, cwd=lab_store)
        assert r.returncode == 0, r.stderr
        return json.loads(r.stdout)

    everything, public, finance = count("--all"), count("--public"), count("--role", "finance")
    assert everything["documents"] == 30 and everything["counted"] == "all"
    assert public["documents"] < finance["documents"] < 30  # the lab's finance-only and HR-only documents
    for info in (public, finance):  # no count, the manifest's included, tells how much is hidden
        assert info["manifest"]["rows"] == info["chunks"] and info["manifest"]["documents"] == info["documents"]


@pytest.mark.slow  # shares a module store of the lab embedded with the real model: about 30 s to build
def test_stats_and_documents_see_the_same_documents_by_default(lab_store):
    # documents listed the public documents while stats counted every one: two defaults for one question
    default = json.loads(run("stats", "--json", "--store", "s", cwd=lab_store).stdout)
    listed = json.loads(run("documents", "--json", "--store", "s", cwd=lab_store).stdout)["documents"]
    assert default["counted"] == "public" and default["documents"] == len(listed) < 30
    assert (default["all_documents"], default["all_chunks"]) == (30, json.loads(
        run("stats", "--all", "--json", "--store", "s", cwd=lab_store).stdout)["chunks"])  # counts may be global
    text = run("stats", "--store", "s", cwd=lab_store).stdout
    assert f"{len(listed)} documents" in text and "(public; 30 documents" in text and "--all" in text
    # no hidden document is named by either, and --all does not combine with a role
    hidden = {d["doc_id"] for d in json.loads(run("documents", "--json", "--role", "finance", "--role", "hr",
                                                  "--role", "staff", "--store", "s", cwd=lab_store).stdout)[
        "documents"]} - {d["doc_id"] for d in listed}
    assert hidden and not any(h in text or h in json.dumps(default) for h in hidden)
    assert run("stats", "--all", "--role", "hr", "--store", "s", cwd=lab_store).returncode == 2
    assert "(visible to roles hr, staff)" in run("stats", "--role", "hr", "--role", "staff", "--store", "s",
                                                  cwd=lab_store).stdout
    for command in ("stats", "documents"):
        assert "public" in " ".join(run(command, "--help", cwd=lab_store).stdout.split())


def test_an_ingest_of_only_unsupported_files_is_an_error_into_a_new_or_an_existing_store(tmp_path):
    # into a new store it exited 1, into an existing one it exited 0 with a skip line: the same mistake
    (tmp_path / "photo.xyz").write_text("not a type openbook reads")
    (tmp_path / "good").mkdir()
    (tmp_path / "good" / "ok.md").write_text("# Fine\n\nA fine document about zebras.\n")
    supported = "supported: .1 .csv .docx .epub .gz .htm .html .jsonl .man .markdown .md .pdf .pptx"
    r = run("ingest", "photo.xyz", "--store", "s", "--no-embed", cwd=tmp_path)
    assert r.returncode == 1 and not (tmp_path / "s").exists()
    assert r.stderr.splitlines() == [r.stderr.strip()] and "Traceback" not in r.stderr
    assert r.stderr.startswith("error: photo.xyz: not a type openbook reads (.xyz); " + supported)
    assert "no store was created" in r.stderr
    assert run("ingest", "good", "--store", "s", "--no-embed", cwd=tmp_path).returncode == 0
    r = run("ingest", "photo.xyz", "--store", "s", "--no-embed", cwd=tmp_path)
    assert r.returncode == 1 and r.stderr.splitlines() == [r.stderr.strip()]
    assert r.stderr.startswith("error: photo.xyz: not a type openbook reads (.xyz); " + supported)
    assert "the store s is unchanged" in r.stderr
    r = run("ingest", "photo.xyz", "--store", "s", "--no-embed", "--json", cwd=tmp_path)
    assert r.returncode == 1 and "photo.xyz: not a type" in json.loads(r.stdout)["error"]["message"]
    # a folder where unsupported files sit among good ones skips them, named, and succeeds
    (tmp_path / "good" / "a.xyz").write_text("x")
    r = run("ingest", "good", "--store", "s", "--no-embed", cwd=tmp_path)
    assert r.returncode == 0 and "skipped 1 file: a.xyz (unsupported type)" in r.stderr.splitlines()
    assert "1 unchanged" in r.stdout
    # --sync into an existing store still does its deletions when only unsupported files are left
    (tmp_path / "good" / "ok.md").unlink()
    r = run("ingest", "good", "--store", "s", "--no-embed", "--sync", "--json", cwd=tmp_path)
    assert r.returncode == 0 and json.loads(r.stdout)["deleted"] == ["ok.md"]


ZEPHYR = """# The **Zephyr** manual

## Using __turbo__ mode

Turbo mode drains the zephyr battery quickly; the `__post_init__()` hook of `Lib/dataclasses/__init__.py` starts it.

## The `__post_init__()` hook and **storage**

| Plan | **Storage** |
|------|-------------|
| Basic | **10 GB** |
| Pro | __1 TB__ in `a*b*c` |
"""


def test_search_and_ask_show_markdown_without_its_emphasis_markers(tmp_path):
    # titles, sections and table answers kept the source's **bold** / __strong__ markers
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "zephyr.md").write_text(ZEPHYR)
    assert run("ingest", "docs", "--store", "s", "--no-embed", cwd=tmp_path).returncode == 0
    r = run("search", "zephyr battery", "-k", "1", "--store", "s", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "zephyr.md — The Zephyr manual § The Zephyr manual > Using turbo mode  (score" in r.stdout
    assert "`__post_init__()` hook of `Lib/dataclasses/__init__.py`" in r.stdout  # code spans stay as written
    hit = json.loads(run("search", "zephyr battery", "-k", "1", "--json", "--store", "s", cwd=tmp_path).stdout)
    hit = hit["hits"][0]
    assert (hit["title"], hit["section"]) == ("The Zephyr manual", "The Zephyr manual > Using turbo mode")
    r = run("search", "storage plan", "-k", "1", "--json", "--store", "s", cwd=tmp_path)
    assert json.loads(r.stdout)["hits"][0]["section"] == "The Zephyr manual > The `__post_init__()` hook and storage"
    r = run("ask", "How much storage does the Pro plan have?", "--store", "s", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "Plan: Pro; Storage: 1 TB in `a*b*c` [1]" in r.stdout
    assert "The Zephyr manual, § The Zephyr manual > The `__post_init__()` hook" in r.stdout


def test_search_says_when_its_hits_match_by_meaning_only(tmp_path):
    # no word of the query in any document: the dense leg's hits were printed with nothing said
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "trash.md").write_text("# Trash\n\nDeleted files stay in the Trash for 30 days.\n")
    assert run("ingest", "docs", "--store", "s", cwd=tmp_path).returncode == 0
    note = "note: no word of the query occurs in the documents searched: these hits match it by meaning only"
    r = run("search", "qwxyz plugh", "--mode", "hybrid", "--store", "s", cwd=tmp_path)
    assert r.returncode == 0 and " 1. trash.md" in r.stdout and note in r.stderr.splitlines()
    out = json.loads(run("search", "qwxyz plugh", "--mode", "hybrid", "--json", "--store", "s", cwd=tmp_path).stdout)
    assert out["hits"] and out["notes"] == [note.removeprefix("note: ")] and out["applied"]["words_matched"] is False
    r = run("search", "deleted files", "--mode", "hybrid", "--store", "s", cwd=tmp_path)
    assert " 1. trash.md" in r.stdout and "note:" not in r.stderr
    out = json.loads(run("search", "deleted files", "--mode", "hybrid", "--json", "--store", "s", cwd=tmp_path).stdout)
    assert out["notes"] == [] and out["applied"]["words_matched"] is True
