"""Follow-up questions in a conversation become standalone queries before retrieval.

"And part-time employees?" retrieves nothing useful on its own. With an LLM configured the model rewrites the
last question using the conversation (the usual "condense question" step of conversational RAG); offline, or when
the model fails, a rule does it: a question that refers back (a pronoun or demonstrative, an opening "and" /
"what about", or fewer than three content words) is joined with what it leaves out of the previous user
question, in parentheses, so the retriever sees those words. A follow-up that asks its own question ("And how
do I disable the limit?": an interrogative word or an opening auxiliary after the connective) gets the previous
question's content words it lacks ("(upload size)"): the whole previous question would add a second thing to
answer, which the answerer then finds unanswered. One without its own question ("And for contractors?", "What
about weekends?") gets the whole previous question, whose frame it borrows. A self-contained question is used as
it is.
"""

from __future__ import annotations

import re
from typing import Any, Mapping, Sequence

from ..errors import GenerationError

_REFERS_BACK = re.compile(
    r"\b(it|its|it's|they|them|their|theirs|this|that|these|those|there|he|she|him|her|his|hers|one|ones|same|"
    r"such|former|latter|above|else|too|also)\b|^\s*(and|or|but|also|so|what about|how about|and what|then)\b",
    re.IGNORECASE)
_WORD = re.compile(r"\w+", re.UNICODE)
_QUANTIFIERS = frozenset({"much", "many"})  # "how much/many" frames the question; not what it is about
_CONNECTIVE = re.compile(r"^\s*(?:and|or|but|also|so|then)\b[\s,]*", re.IGNORECASE)
_OWN_QUESTION = re.compile(
    r"^\s*(?:how|what|when|where|who|whom|whose|which|why|is|are|was|were|do|does|did|can|could|should|would|"
    r"will|may|must|has|have|had)\b(?!\s+about\b)", re.IGNORECASE)
_STOP = frozenset("a an the of to in on for and or but is are was were be do does did what who whom which when "
                  "where why how about with at by from as can could should would will may might must i you we my "
                  "your our me us".split())

CONDENSE_SYSTEM = (
    "Rewrite the user's last question as one standalone question that can be understood without the conversation. "
    "Use the conversation only to resolve what the question refers to. Do not answer it. Reply with the question "
    "only, in the language of the question."
)


def needs_context(question: str) -> bool:
    """True when ``question`` refers back to the conversation (see the module docstring)."""
    content = [w for w in _WORD.findall(question.lower()) if w not in _STOP]
    return bool(_REFERS_BACK.search(question)) or len(content) < 3


def condense_question(history: Sequence[Mapping[str, str]], question: str, generator: Any = None) -> str:
    """The standalone form of ``question`` given the earlier turns ``history``.

    Args:
        history: earlier ``{"role": "user"|"assistant", "content": str}`` turns, oldest first (system turns are
            ignored).
        question: the last user message.
        generator: an ``openbook.llm.Generator``; None uses the offline rule.

    Returns:
        ``question`` itself when there is no earlier user turn or it stands alone; else the rewritten question.
    """
    earlier = [t for t in history if t.get("role") in ("user", "assistant") and str(t.get("content", "")).strip()]
    previous = [str(t["content"]).strip() for t in earlier if t["role"] == "user"]
    if not previous or not needs_context(question):
        return question
    if generator is not None:
        convo = "\n".join(f"{t['role']}: {str(t['content']).strip()}" for t in earlier[-6:])
        messages = [{"role": "system", "content": CONDENSE_SYSTEM},
                    {"role": "user", "content": f"Conversation:\n{convo}\n\nLast question: {question.strip()}"}]
        try:
            text = generator.generate(messages, max_tokens=96).strip()
            if text:
                return text.splitlines()[0].strip()
        except GenerationError:
            pass
    return f"{question.strip()} ({_left_out(question, previous[-1])})"


def _left_out(question: str, previous: str) -> str:
    """What the follow-up ``question`` takes from the ``previous`` question (see the module docstring): the
    whole of it when the follow-up asks nothing of its own, else its content words the follow-up lacks, in
    their order (the whole question when it has none)."""
    if not _OWN_QUESTION.match(_CONNECTIVE.sub("", question)):
        return previous
    have = {w.lower() for w in _WORD.findall(question)}
    missing: list[str] = []
    for word in _WORD.findall(previous):
        low = word.lower()
        if low not in _STOP and low not in _QUANTIFIERS and low not in have and low not in {m.lower() for m in missing}:
            missing.append(word)
    return " ".join(missing) or previous


__all__ = ["condense_question", "needs_context"]
