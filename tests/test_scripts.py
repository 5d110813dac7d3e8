"""The one script table (``openbook.scripts``) and the three readers that group it: by language
(``question.script_language`` / ``question_language``, ``crosslingual.text_language``) and by BM25 family
(``retrieve.blind``)."""

from __future__ import annotations

import doctest

import pytest

import openbook.scripts
from openbook.question import question_language, script_language, text_language
from openbook.retrieve.blind import main_script, scripts
from openbook.scripts import FAMILIES, SCRIPTS, family_of

SAMPLES = [  # (text, script name, language, BM25 family)
    ("The head office is in Rotterdam", "Latin", None, "latin"),
    ("Главный офис находится в Роттердаме", "Cyrillic", "ru", "ru"),
    ("员工食堂位于二号楼一层", "Han", "zh", "cjk"),
    ("ひらがなとカタカナ", "Kana", "ja", "cjk"),
    ("본사는 로테르담에 있습니다", "Hangul", "ko", "ko"),
    ("المكتب الرئيسي في روتردام", "Arabic", "ar", "ar"),
    ("मुख्य कार्यालय रॉटरडैम में है", "Devanagari", "hi", "hi"),
    ("สำนักงานใหญ่อยู่ที่รอตเทอร์ดัม", "Thai", "th", "th"),
]


@pytest.mark.parametrize("text, name, language, family", SAMPLES, ids=[s[1] for s in SAMPLES])
def test_each_script_has_one_language_and_one_family(text, name, language, family):
    [script] = [s for s in SCRIPTS if s.count(text)]
    assert (script.name, script.language, script.family) == (name, language, family)
    assert family_of(text) == main_script(text) == family and scripts(text) == {family}
    if language not in (None, "zh", "ja"):  # the other scripts: read by script_language
        assert script_language(text)[0] == language
    if language is not None:
        assert question_language(text) == text_language(text) == language


def test_han_and_kana_are_one_family_and_two_languages():
    assert [name for name, _ in FAMILIES] == ["latin", "cjk", "ko", "ru", "ar", "he", "el", "hi", "th"]
    assert family_of("社員用駐車場は地下二階にあります") == family_of("员工食堂位于二号楼一层") == "cjk"
    assert question_language("社員用駐車場は地下二階にあります") == "ja"
    assert question_language("员工食堂位于二号楼一层") == "zh"


def test_punctuation_shared_by_chinese_and_japanese_is_no_kana():
    # the katakana middle dot and the prolonged sound mark are Common script: Chinese text with a
    # transliterated name (米特罗凡・巴巴耶娃) stays Chinese
    chinese = "潘均顺在米特罗凡・巴巴耶娃的帮助下藏了一名女孩。"
    assert question_language(chinese) == text_language(chinese) == "zh"
    assert family_of("・ー") is None


@pytest.mark.slow  # runs every module's examples
def test_the_module_examples():
    assert doctest.testmod(openbook.scripts).failed == 0
