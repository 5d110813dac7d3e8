"""Writing systems: the one table of scripts that every decision by script reads.

Three readers group the same scripts in two ways:

- **by language** (``openbook.question.script_language`` / ``question_language`` and
  ``question.text_language``): kana is Japanese, Han Chinese, Hangul Korean, Cyrillic
  Russian, ... (``Script.language``); Latin script has no language of its own (py3langid tells it,
  ``question.latin_language``).
- **by what BM25 reads apart** (``openbook.retrieve.blind``): Han and kana are one family, ``"cjk"``, because
  the analyzer cuts both into character bigrams (a Chinese query matches Japanese text); every other script is
  a family of its own (``Script.family``).

Each script is the set of characters whose Unicode ``Script`` property (UAX #24) is one of
``Script.properties``, matched with the ``regex`` module's ``\\p{Script=...}`` classes. Characters of the
``Common`` and ``Inherited`` scripts (digits, punctuation, the prolonged sound mark ー, combining marks) belong
to no script here.

>>> [s.name for s in SCRIPTS if s.count("Ночная смена, 夜勤 (shift B)")]
['Latin', 'Han', 'Cyrillic']
>>> KANA.count("データベース"), HAN.count("データベース"), family_of("ー"), family_of("数据库")
(4, 0, None, 'cjk')
"""

from __future__ import annotations

from dataclasses import dataclass, field

import regex

__all__ = ["Script", "SCRIPTS", "LATIN", "HAN", "KANA", "HANGUL", "OTHER_SCRIPTS", "FAMILIES", "family_of"]


@dataclass(frozen=True)
class Script:
    """One script: ``name``; ``properties``, the Unicode ``Script`` values it covers; ``language``, the language
    its text is taken to be in (None for Latin, which many languages share); ``family``, the group the BM25
    analyzer reads apart (``"latin"``, ``"cjk"`` for Han and kana, else the script's ``language``)."""

    name: str
    properties: tuple[str, ...]
    language: str | None
    family: str
    pattern: regex.Pattern[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "pattern", _class(self.properties))

    def count(self, text: str) -> int:
        """How many characters of ``text`` are in this script."""
        return len(self.pattern.findall(text))


def _class(properties: tuple[str, ...]) -> regex.Pattern[str]:
    return regex.compile("[" + "".join(rf"\p{{Script={p}}}" for p in properties) + "]")


LATIN = Script("Latin", ("Latin",), None, "latin")
HAN = Script("Han", ("Han",), "zh", "cjk")
KANA = Script("Kana", ("Hiragana", "Katakana"), "ja", "cjk")
HANGUL = Script("Hangul", ("Hangul",), "ko", "ko")

OTHER_SCRIPTS: tuple[Script, ...] = (
    HANGUL,
    Script("Cyrillic", ("Cyrillic",), "ru", "ru"),  # Ukrainian is told by its letters (question.script_language)
    Script("Arabic", ("Arabic",), "ar", "ar"),  # Persian and Urdu too
    Script("Hebrew", ("Hebrew",), "he", "he"),
    Script("Greek", ("Greek",), "el", "el"),
    Script("Devanagari", ("Devanagari",), "hi", "hi"),  # Marathi and Nepali too
    Script("Thai", ("Thai",), "th", "th"),
)
"""The scripts other than Latin, Han and kana, in the order ``question.script_language`` breaks ties by."""

SCRIPTS: tuple[Script, ...] = (LATIN, HAN, KANA, *OTHER_SCRIPTS)
"""Every script openbook tells apart."""

FAMILIES: tuple[tuple[str, regex.Pattern[str]], ...] = tuple(
    (name, _class(tuple(p for s in SCRIPTS if s.family == name for p in s.properties)))
    for name in dict.fromkeys(s.family for s in SCRIPTS))
"""``(family, pattern)`` in ``SCRIPTS`` order: ``latin``, ``cjk`` (Han and kana), then one per other script."""


def family_of(text: str) -> str | None:
    """The family (``FAMILIES``) with the most characters in ``text``, ties to the later name in sort order
    (as ``max`` over ``(count, name)``); None when ``text`` has no character of any script."""
    n, name = max((len(pattern.findall(text)), name) for name, pattern in FAMILIES)
    return name if n else None
