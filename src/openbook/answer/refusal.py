"""The refusal sentence, in the question's language.

Every answerer (offline and LLM) says exactly ``REFUSALS[lang]`` when the passages do not hold the answer.
"""

from __future__ import annotations

import re

REFUSALS: dict[str, str] = {
    "en": "I could not find this in the documents.",
    "zh": "我在文档中没有找到这个问题的答案。",
    "ja": "ドキュメントの中にこの質問の答えは見つかりませんでした。",
}

_KANA = re.compile(r"[\u3040-\u30ff]")
_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


def question_language(text: str) -> str:
    """``"ja"`` if the text has kana, ``"zh"`` if it has Han characters, else ``"en"``."""
    if _KANA.search(text):
        return "ja"
    if _HAN.search(text):
        return "zh"
    return "en"


def refusal_sentence(question: str) -> str:
    """The exact refusal sentence for the question's language."""
    return REFUSALS[question_language(question)]
