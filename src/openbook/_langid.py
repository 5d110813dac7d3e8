"""py3langid's identifier over a few languages, mapped from a per-user cache of its decompressed model.

py3langid ships its model as an LZMA-compressed ``.npz`` (4.6 MB) that every process decompresses before its first
``classify``: about 0.8-1 s on one core. The first process that needs an identifier here builds it from the shipped
model, restricts it to the languages asked for (``LanguageIdentifier.set_languages``), and writes the arrays the
restricted identifier holds, unchanged, as plain ``.npy`` files in ``<user cache folder>/langid``
(``openbook._cachedir``)::

    ptc.npy        feature x language log-probabilities (float16, as shipped), the asked languages' columns
    pc.npy         the asked languages' prior log-probabilities (float32)
    classes.npy    their codes, in the model's order
    nextmove.npy   the byte-level feature automaton's transition rows (uint32)
    row.npy        the row of each automaton state
    output.npy     the feature each state emits (-1: none)

Later processes map the files (``numpy.load(mmap_mode="r")``: a few milliseconds; the automaton's pages are read
as a text walks them). The identifier built from them holds the same numbers as the one built from the shipped
model, so it gives the same language and probability; a new cache is checked on probe texts against the shipped
identifier before it is renamed into place (tests/test_question.py compares the two on more texts).

The cache folder is named by py3langid's version, the shipped model file's size and modification time, the
languages, and ``FORMAT``; it is written under a temporary name and renamed into place, so a reader sees a whole
cache or none, and of two processes building at once one rename wins. When no folder is writable, or the files
cannot be read, the identifier is built from the shipped model: slower, never different.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any, Sequence

__all__ = ["identifier", "cache_path", "FORMAT"]

FORMAT = 2  # bump when the files change
_ARRAYS = ("ptc", "pc", "classes", "nextmove", "row", "output")
_PROBES = ("protein misfolding in neurodegenerative disease", "Der Hauptsitz des Unternehmens liegt in Rotterdam",
           "où se trouve la gare la plus proche", "¿Dónde está la estación?", "qual è la capitale", "x", "")


def _shipped_model() -> Path:
    from py3langid import langid

    return Path(langid.MODEL_DIR) / langid.MODEL_FILE


def cache_path(folder: Path, languages: Sequence[str]) -> Path:
    """The cache folder for ``languages`` under ``folder`` (named by py3langid's version, its model file's size and
    modification time, the languages and ``FORMAT``).

    Raises:
        OSError: py3langid's model file cannot be read.
    """
    import py3langid

    stat = _shipped_model().stat()
    version = getattr(py3langid, "__version__", "")
    key = f"{version}|{stat.st_size}|{stat.st_mtime_ns}|{','.join(languages)}|{FORMAT}"
    return Path(folder) / f"latin-f{FORMAT}-{hashlib.sha256(key.encode()).hexdigest()[:16]}"


def _shipped(languages: Sequence[str]) -> Any:
    """The identifier built from py3langid's shipped model, restricted to ``languages``, probabilities normalised."""
    from py3langid import langid

    built = langid.LanguageIdentifier.from_modelpath(_shipped_model(), norm_probs=True)
    built.set_languages(list(languages))
    return built


def _mapped(path: Path) -> Any:
    """The identifier over the cache in ``path``.

    Raises:
        OSError, ValueError, KeyError, TypeError: the files are missing, unreadable, or not what this py3langid
            builds an identifier from.
    """
    import numpy as np
    from py3langid import langid

    arrays = {name: np.load(path / f"{name}.npy", mmap_mode="r", allow_pickle=False) for name in _ARRAYS}
    for name, dtype in (("nextmove", np.uint32), ("row", np.uint32), ("output", np.int32)):
        if arrays[name].dtype != dtype or arrays[name].ndim != 1:
            raise ValueError(f"{path}: {name} is {arrays[name].dtype}[{arrays[name].ndim}], not {dtype.__name__}[1]")
    # a memoryview indexes to plain ints, as py3langid's array.array and list do, without copying (40 MB)
    return langid.LanguageIdentifier(
        arrays["ptc"], np.array(arrays["pc"]), arrays["classes"].tolist(), memoryview(arrays["nextmove"]),
        memoryview(arrays["output"]), norm_probs=True, tk_row=memoryview(arrays["row"]))


def _write(built: Any, path: Path) -> None:
    """Write ``built``'s arrays to the cache folder ``path`` (via a temporary folder renamed into place); a cache
    that classifies a probe text differently from ``built`` is not kept.

    Raises:
        OSError: the folder cannot be created or written.
        ValueError: the cache would classify differently.
    """
    import numpy as np

    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{path.name}-", dir=path.parent))
    try:
        values = {"ptc": np.asarray(built.nb_ptc), "pc": np.asarray(built.nb_pc, dtype=np.float32),
                  "classes": np.array(built.nb_classes), "nextmove": np.frombuffer(built.tk_nextmove, np.uint32),
                  "row": np.asarray(built.tk_row, dtype=np.uint32), "output": np.asarray(built.tk_output, np.int32)}
        for name in _ARRAYS:
            with open(tmp / f"{name}.npy", "wb") as f:
                np.save(f, values[name], allow_pickle=False)
                f.flush()
                os.fsync(f.fileno())
        mapped = _mapped(tmp)
        for text in _PROBES:
            if mapped.classify(text) != built.classify(text):
                raise ValueError(f"the cached identifier classifies {text!r} differently")
        del mapped
        try:
            os.rename(tmp, path)
        except OSError:
            if not path.is_dir():  # not another process's whole cache: a real failure
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def identifier(languages: Sequence[str], folder: Path | None) -> Any:
    """py3langid's ``LanguageIdentifier`` over ``languages`` with normalised probabilities, mapped from the cache
    in ``folder`` (built there first when missing); built from the shipped model when ``folder`` is None or the
    cache cannot be written or read there.

    Args:
        languages: ISO 639-1 codes the model knows, such as ``("en", "de")``.
        folder: the cache's parent folder (``openbook._cachedir.cache_folder("langid")``), or None for no cache.

    Raises:
        ValueError: a code the model does not know (from py3langid).
    """
    if folder is None:
        return _shipped(languages)
    try:
        path = cache_path(folder, languages)
    except OSError:
        return _shipped(languages)
    try:
        return _mapped(path)
    except (OSError, ValueError, KeyError, TypeError):
        pass
    built = _shipped(languages)
    try:
        _write(built, path)
        return _mapped(path)
    except Exception:  # noqa: BLE001 - a folder not writable, a full disk, a py3langid that differs: use the model
        return built
