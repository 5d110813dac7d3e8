"""A weekday states a date: "On which day of the week ...?" is answered by "on Wednesdays" or "每周三"."""

import pytest

from openbook.question import expected_answer_type, has_answer_type


@pytest.mark.parametrize("sentence", ["The reading group meets on Wednesdays at 4 pm.", "Geöffnet ist sie am Mittwoch.",
                                      "语言交流角每周三下午开放。", "交流会在星期日举行。", "水曜日に開かれます。",
                                      "매주 수요일에 열립니다."])
def test_a_weekday_is_a_date(sentence: str) -> None:
    assert expected_answer_type("On which day of the week does the reading group meet?") == "date"
    assert has_answer_type(sentence, "date", "On which day of the week does the reading group meet?")


def test_no_weekday_no_date_and_the_question_s_own_weekday_is_not_new() -> None:
    question = "On which day of the week does the reading group meet?"
    assert not has_answer_type("The reading group meets every week in room 2.", "date", question)
    assert not has_answer_type("Is it open on Sunday? It is open on Sunday.", "date", "Is it open on Sunday?")
    assert not has_answer_type("读书会每周一次，在二楼。", "date", "读书会哪天见面？")  # "once a week"
