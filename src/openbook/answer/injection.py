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

import functools
import re

# (substrings one of which a match must contain, lowercased; pattern). The substring test is a cheap gate: a
# pattern's regex runs (and is compiled, once per process) only on texts that contain one of its words.
_PATTERNS: list[tuple[tuple[str, ...], str]] = [
    # "ignore / disregard / forget (all) (the) previous / prior / above instructions / rules / context"
    (("ignor", "disregard", "forget", "overrid", "bypass"),
     r"\b(ignore|disregard|forget|override|bypass)\b[^.\n]{0,40}\b(previous|prior|above|earlier|preceding|all|any|"
     r"your|the|these|those|system)\b[^.\n]{0,30}\b(instructions?|rules?|prompts?|context|guidelines|directions)\b"),
    (("instruction", "rules"), r"\b(new|updated|real|actual)\s+(system\s+)?(instructions?|rules)\s*:"),
    (("you are now",), r"\byou\s+are\s+now\b"),
    (("act as", "behave as", "pretend as"),
     r"\b(act|behave|pretend)\s+as\s+(if\s+you\s+are\s+)?(an?\s+)?(ai|assistant|system|admin|developer|dan)\b"),
    (("system prompt",), r"\bsystem\s+prompt\b"),
    (("system", "assistant"), r"^\s*(system|assistant)\s*:"),
    (("<",), r"<\s*/?\s*(system|instructions?|im_start|im_end)\s*>"),
    (("regardless", "no matter", "whatever the question", "to every", "to all", "to any"),
     r"\b(answer|reply|respond|say)\s+(only\s+)?(with|that)\b[^.\n]{0,60}\b(regardless|no matter|"
     r"whatever the question|to every|to all|to any)\b"),
    (("not", "don't", "never"),
     r"\b(do\s+not|don't|never)\s+(cite|mention|reveal|tell)\b[^.\n]{0,40}\b(sources?|passages?|user|citations?)\b"),
    (("as a",), r"\bas\s+an?\s+(ai|language\s+model|llm)\b[^.\n]{0,40}\byou\s+(must|should|will)\b"),
]


@functools.cache
def _compiled(i: int) -> re.Pattern[str]:
    """``_PATTERNS[i]``'s regex, compiled on first use (case-insensitive, multi-line)."""
    return re.compile(_PATTERNS[i][1], re.IGNORECASE | re.MULTILINE)


def _matches(text: str) -> list[re.Match[str]]:
    low = text.lower()
    found = [m for i, (needles, _) in enumerate(_PATTERNS) if any(n in low for n in needles)
             for m in _compiled(i).finditer(text)]
    return sorted(found, key=lambda m: m.start())


def injection_markers(text: str) -> list[str]:
    """The phrases of ``text`` that read like instructions aimed at a model, in order of appearance (max 5)."""
    return [m.group(0).strip() for m in _matches(text or "")[:5]]


def looks_like_injection(text: str) -> bool:
    """True when ``text`` contains a phrase that reads like an instruction aimed at the model."""
    if not text:
        return False
    low = text.lower()
    return any(any(n in low for n in needles) and _compiled(i).search(text) for i, (needles, _) in enumerate(_PATTERNS))


__all__ = ["injection_markers", "looks_like_injection"]
