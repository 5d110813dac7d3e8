"""openbook.dates: the strict ISO reading (``iso_value``) and the lenient one (``iso_date``) agree on ISO text."""

import datetime as dt

import pytest
from openbook.dates import iso_date, iso_value


@pytest.mark.parametrize("value, expected", [
    ("2024-05-01", dt.date(2024, 5, 1)),
    (" 2024-05-01T10:00:00Z ", dt.date(2024, 5, 1)),
    ("2024-05-01 10:00", dt.date(2024, 5, 1)),
    (dt.datetime(2024, 5, 1, 23, 59), dt.date(2024, 5, 1)),
    (dt.date(2024, 5, 1), dt.date(2024, 5, 1)),
    ("2024-02-30", None),  # no such day
    ("2024-5-1", None),  # not ISO: iso_date reads it, the strict reading does not
    ("1 May 2024", None),
    ("2024-05-01x", None),
    (20240501, None),
    ("5", None),  # a number is no date (a filter compares it as a number)
])
def test_iso_value(value, expected):
    assert iso_value(value) == expected


@pytest.mark.parametrize("value", ["2024-05-01", "2024-05-01T10:00:00+02:00", "2024-02-30", "2024-05-01\t10:00",
                                   dt.datetime(2024, 5, 1, 10), dt.date(2024, 5, 1)])
def test_iso_date_agrees_with_iso_value_on_iso_text(value):
    parsed = iso_value(value)
    assert iso_date(value) == (parsed.isoformat() if parsed else None)
