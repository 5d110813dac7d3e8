# Evaluation and benchmark commands. Run from the repository root; the shared data sits next to it (../shared).
# Without an installed package, PYTHONPATH=src makes `python3 -m openbook.cli` the `openbook` command.

PYTHON  ?= python3
SHARED  ?= ../shared
OPENBOOK ?= PYTHONPATH=src $(PYTHON) -m openbook.cli
DATASET ?= $(SHARED)/datasets/scifact
LAB     ?= $(SHARED)/labs/skyladder
BASELINE ?= benchmarks/baselines/scifact.bm25.json

.PHONY: help lint test test-all test-eval eval-retrieval eval-scifact eval-cranfield eval-scifact-check eval-answers \
        synthetic bench bench-quick

help:
	@echo "make lint                 import layers (lint-imports: the contracts in pyproject.toml)"
	@echo "make test                 fast tests: skips those marked slow (whole datasets, clusters, browsers, servers) and lab (development labs)"
	@echo "make test-all             whole test suite, as .ci/run runs it"
	@echo "make test-eval            fast evaluation tests only (tests/eval)"
	@echo "make eval-scifact         retrieval metrics on SciFact (nDCG@10, Recall@10/100, MRR@10, MAP@100, latency)"
	@echo "make eval-cranfield       the same on Cranfield (graded qrels 1-4)"
	@echo "make eval-retrieval DATASET=DIR   any BEIR folder"
	@echo "make eval-scifact-check   SciFact against the saved baseline (non-zero exit on a drop > 0.005)"
	@echo "make eval-answers         answer evaluation on the Skyladder lab (a development lab)"
	@echo "make synthetic            1,000,000-document synthetic corpus for the benchmark"
	@echo "make bench                peer benchmark (SciFact + 1M synthetic, 3 rounds) -> BENCHMARKS.md"
	@echo "make bench-quick          peer benchmark (SciFact + 100k synthetic, 1 round)"

test:
	PYTHONPATH=src $(PYTHON) -m pytest -q -m "not slow and not lab"

lint:
	PYTHONPATH=src lint-imports

test-all: lint
	PYTHONPATH=src $(PYTHON) -m pytest -q

test-eval:
	PYTHONPATH=src $(PYTHON) -m pytest tests/eval -q -m "not slow and not lab"

eval-retrieval:
	$(OPENBOOK) eval retrieval --dataset $(DATASET)

eval-scifact:
	$(OPENBOOK) eval retrieval --dataset $(SHARED)/datasets/scifact

eval-cranfield:
	$(OPENBOOK) eval retrieval --dataset $(SHARED)/datasets/cranfield

eval-scifact-check:
	$(OPENBOOK) eval retrieval --dataset $(SHARED)/datasets/scifact --baseline $(BASELINE) --tolerance 0.005

eval-answers:
	$(OPENBOOK) eval answers --questions $(LAB)/questions.jsonl --docs $(LAB)/docs

synthetic:
	$(PYTHON) benchmarks/make_synthetic.py --docs 1000000 --scifact $(SHARED)/datasets/scifact

bench:
	$(PYTHON) benchmarks/peers.py --scifact $(SHARED)/datasets/scifact

bench-quick:
	$(PYTHON) benchmarks/peers.py --quick --scifact $(SHARED)/datasets/scifact
