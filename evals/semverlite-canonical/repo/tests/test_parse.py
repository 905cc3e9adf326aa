import pytest

from semverlite import InvalidVersion, parse


def test_parse_plain_version():
    assert parse("1.4.2") == ("1", "4", "2")


def test_parse_accepts_a_leading_v():
    assert parse("v2.0.1") == ("2", "0", "1")


@pytest.mark.parametrize("text", ["1.2", "1.2.3.4", "one.two.three", ""])
def test_parse_refuses_what_is_not_a_version(text):
    with pytest.raises(InvalidVersion):
        parse(text)
