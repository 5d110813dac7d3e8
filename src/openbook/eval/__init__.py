"""Evaluation: retrieval metrics on BEIR folders and answer scoring on labs.

``run_retrieval_eval`` / ``format_retrieval_report`` back ``openbook eval retrieval``;
``run_answer_eval`` / ``format_answer_report`` back ``openbook eval answers`` on a lab, and ``answers.run_qa_eval``
/ ``format_qa_report`` on a BEIR QA set (negatives asked on ``absent.absent_store``'s copy of the store without
the relevant documents). Metrics follow trec_eval (``metrics.py``); BEIR loading and TREC run files are in
``beir.py``.
"""

from .answers import AnswerReport, format_answer_report, run_answer_eval
from .metrics import METRICS, evaluate_run
from .retrieval import DEFAULT_TOLERANCE, RetrievalReport, format_retrieval_report, run_retrieval_eval

__all__ = [
    "AnswerReport",
    "DEFAULT_TOLERANCE",
    "METRICS",
    "RetrievalReport",
    "evaluate_run",
    "format_answer_report",
    "format_retrieval_report",
    "run_answer_eval",
    "run_retrieval_eval",
]
