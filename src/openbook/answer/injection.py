"""Indirect prompt injection (OWASP LLM01): spot passages that read like instructions to the model.

Document text is untrusted. The prompt fences every passage as quoted data and tells the model that instructions
inside passages are content (``openbook.answer.prompt``); this module adds a visible flag so that a person or a
script reading ``--json`` / API output can see which passages tried to steer the model.

The check is a small set of patterns for the phrasings seen in published injection examples (Greshake et al.
2023, "Not what you've signed up for"; OWASP Top 10 for LLM Applications, LLM01): overriding earlier
instructions, claiming a new role or a system prompt, and ordering the assistant what to reply. It flags; it
never removes or rewrites text, so a false positive costs a flag and nothing else.
"""

from __future__ import annotations

import re

_PATTERNS = [
    # "ignore / disregard / forget (all) (the) previous / prior / above instructions / rules / context"
    r"\b(ignore|disregard|forget|override|bypass)\b[^.\n]{0,40}\b(previous|prior|above|earlier|preceding|all|any|"
    r"your|the|these|those|system)\b[^.\n]{0,30}\b(instructions?|rules?|prompts?|context|guidelines|directions)\b",
    r"\b(new|updated|real|actual)\s+(system\s+)?(instructions?|rules)\s*:",
    r"\byou\s+are\s+now\b",
    r"\b(act|behave|pretend)\s+as\s+(if\s+you\s+are\s+)?(an?\s+)?(ai|assistant|system|admin|developer|dan)\b",
    r"\bsystem\s+prompt\b",
    r"^\s*(system|assistant)\s*:",
    r"<\s*/?\s*(system|instructions?|im_start|im_end)\s*>",
    r"\b(answer|reply|respond|say)\s+(only\s+)?(with|that)\b[^.\n]{0,60}\b(regardless|no matter|whatever the question|"
    r"to every|to all|to any)\b",
    r"\b(do\s+not|don't|never)\s+(cite|mention|reveal|tell)\b[^.\n]{0,40}\b(sources?|passages?|user|citations?)\b",
    r"\bas\s+an?\s+(ai|language\s+model|llm)\b[^.\n]{0,40}\byou\s+(must|should|will)\b",
]
_RE = re.compile("|".join(f"(?:{p})" for p in _PATTERNS), re.IGNORECASE | re.MULTILINE)


def injection_markers(text: str) -> list[str]:
    """The phrases of ``text`` that read like instructions aimed at a model, in order of appearance (max 5)."""
    return [m.group(0).strip() for m, _ in zip(_RE.finditer(text or ""), range(5))]


def looks_like_injection(text: str) -> bool:
    """True when ``text`` contains a phrase that reads like an instruction aimed at the model."""
    return _RE.search(text or "") is not None


__all__ = ["injection_markers", "looks_like_injection"]
