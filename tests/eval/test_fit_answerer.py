"""benchmarks/fit_answerer.py: its splits never overlap, its swapped negatives change what the question asks and
nothing else, its fit keeps each weight's sign, its AUC is the pairwise one, and the model file the package
ships is the one it writes (every weight a known feature, the fit's metrics and command beside it)."""

from __future__ import annotations

import importlib.util
import itertools
import json
import random
from pathlib import Path

import numpy as np
import pytest

from openbook.answer.refusal import FEATURES, MODEL_FILE, answerability, against

_SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "fit_answerer.py"
_spec = importlib.util.spec_from_file_location("fit_answerer", _SCRIPT)
fit = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fit)


def _squad_like(root: Path) -> Path:
    (root / "qrels").mkdir(parents=True)
    docs, queries, qrels = [], [], ["query-id\tcorpus-id\tscore"]
    for a, title in enumerate(["Alpha", "Beta_gamma", "Delta", "Epsilon", "Zeta", "Eta"]):
        for p in range(3):
            docs.append({"_id": f"{title}-{p}", "title": title, "text": f"Paragraph {p} of {title}."})
            for k, impossible in enumerate((False, True)):
                qid = f"q{a}{p}{k}"
                meta = {"answers": [] if impossible else [f"{p}"], "is_impossible": impossible,
                        "plausible_answers": [f"{p}"] if impossible else []}
                queries.append({"_id": qid, "text": f"What about {title} {p}?", "metadata": meta})
                qrels.append(f"{qid}\t{title}-{p}\t1")
    (root / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs), encoding="utf-8")
    (root / "queries.jsonl").write_text("".join(json.dumps(q) + "\n" for q in queries), encoding="utf-8")
    (root / "qrels" / "test.tsv").write_text("\n".join(qrels) + "\n", encoding="utf-8")
    return root


def test_the_article_split_is_deterministic_disjoint_and_whole(tmp_path):
    root = _squad_like(tmp_path / "squad")
    fit_articles, report_articles = fit.article_split(root)
    assert fit.article_split(root) == (fit_articles, report_articles)
    assert not fit_articles & report_articles
    assert fit_articles | report_articles == {"Alpha", "Beta_gamma", "Delta", "Epsilon", "Zeta", "Eta"}
    assert len(report_articles) == 3
    answerable, impossible = fit.squad_questions(root, fit_articles)
    assert len(answerable) == len(impossible) == 9  # 3 articles x 3 paragraphs, one of each kind
    assert all(fit.article_of(q.relevant[0]) in fit_articles for q in answerable + impossible)
    assert all(q.answers for q in impossible)  # the plausible answers, for the plausible-answer rate


def test_a_swap_replaces_what_the_gold_passage_states_with_what_another_passage_states():
    rng = random.Random(1)
    gold = "Darwin reached the Galapagos in 1835 aboard the Beagle."
    swapped = fit.swap_negative("When did Darwin reach the Galapagos in 1835?", gold,
                                ["The Beagle left Plymouth in 1831.", "FitzRoy returned in 1836."], rng)
    assert swapped in ("When did Darwin reach the Galapagos in 1831?", "When did Darwin reach the Galapagos in 1836?")
    named = fit.swap_negative("Who founded Acme Corporation?", "Acme Corporation was founded by John Smith.",
                              ["Globex Corporation is a rival of Initech."], rng)
    assert named is not None and "Acme" not in named and named.startswith("Who founded ")
    # nothing the gold passage states, or nothing to put in its place: no negative
    assert fit.swap_negative("Who founded Acme Corporation?", "It was founded by John Smith.",
                             ["Globex Corporation is a rival."], rng) is None
    assert fit.swap_negative("When was it built in 1900?", "It was built in 1900.", ["It was built in 1900."],
                             rng) is None


def test_the_fit_separates_and_keeps_each_weights_sign():
    rng = np.random.default_rng(0)
    x = rng.random((400, 3))
    y = (x[:, 0] - x[:, 1] + 0.1 * rng.standard_normal(400) > 0).astype(float)
    w = fit.fit_logistic(x, y, 0.001, [1, -1, 1])
    assert w[1] > 1 and w[2] < -1  # the two real signals, in the right direction
    assert w[3] >= 0  # noise: bounded to its sign, never below 0
    bounded = fit.fit_logistic(x, y, 0.001, [-1, 1, 0])  # signs against the data: held at 0
    assert bounded[1] == pytest.approx(0.0, abs=1e-6) and bounded[2] == pytest.approx(0.0, abs=1e-6)


def test_auc_is_the_share_of_pairs_ordered_right_ties_half():
    pos, neg = np.array([0.9, 0.4, 0.4, 0.2]), np.array([0.4, 0.1, 0.3])
    pairs = [1.0 if p > n else 0.5 if p == n else 0.0 for p, n in itertools.product(pos, neg)]
    assert fit.auc(pos, neg) == pytest.approx(sum(pairs) / len(pairs))


def test_the_shipped_model_is_written_by_the_script_and_loads():
    data = json.loads(MODEL_FILE.read_text(encoding="utf-8"))
    assert set(data["models"]["bm25"]) >= {"en", "zh"}
    for kind in data["models"].values():
        for model in kind.values():
            assert set(model["weights"]) <= set(FEATURES)
    for key, written in data["written"].items():
        assert "benchmarks/fit_answerer.py" in written["command"] and written["date"]
        assert data["fit"][key]["en"]  # the fit's metrics sit beside the weights
    # a question whose answering sentence misses every question term scores below one that holds them all
    held = {"sentence_coverage": 1.0, "two_sentences": 1.0, "window_coverage": 1.0, "names_found": 1.0,
            "bm25_norm": 0.8, "titles_named": 1.0}
    missing = {**{f: 0.0 for f in held}, "miss_sentence_max": 1.0, "miss_window_max": 1.0,
               "miss_passage_max": 1.0}
    assert answerability(held, "en") > answerability(missing, "en")
    assert set(against(missing, "en")) <= set(FEATURES)


def test_validation_holds_out_whole_questions_and_a_cap_keeps_the_first_asked():
    rows = [{"set": "s", "id": f"q{i}", "source": source, "label": int(source == "corpus")}
            for i in range(1000) for source in ("corpus", "absent")]
    rows += [{"set": "s", "id": f"q{i}-swap", "source": "swapped", "label": 0} for i in range(0, 1000, 7)]
    held = {r["id"].removesuffix("-swap") for r in rows if fit.held_out(r, 0.3)}
    assert 250 < len(held) < 350  # about the share asked
    # a question's negatives (absent, swapped) go with it: nothing of a held-out question is fitted on
    assert all(fit.held_out(r, 0.3) == (r["id"].removesuffix("-swap") in held) for r in rows)
    kept = fit.capped(rows, 10)
    assert {r["id"].removesuffix("-swap") for r in kept} == {f"q{i}" for i in range(10)}
    assert {r["source"] for r in kept} == {"corpus", "absent", "swapped"}
    assert fit.target(0.88, "s") == 0.88
    assert fit.target({"": 0.88, "s": 0.8}, "s") == 0.8 and fit.target({"": 0.88, "s": 0.8}, "t") == 0.88
