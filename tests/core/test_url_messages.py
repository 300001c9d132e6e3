"""What navigate says about a URL a person typed: host:port without a scheme, a blocked file: URL."""

from __future__ import annotations

import pytest

import ocnb
from ocnb.errors import BlockedUrl, InvalidArgument
from ocnb.urls import check_url


@pytest.mark.parametrize(
    ("typed", "suggested"),
    [
        ("localhost:8771/form.html", "http://localhost:8771/form.html"),
        ("127.0.0.1:8000", "http://127.0.0.1:8000"),
        ("example.com:8443/a?b=1", "https://example.com:8443/a?b=1"),
        ("example.com", "https://example.com"),
    ],
)
def test_a_host_and_port_without_a_scheme_is_named_as_such(typed: str, suggested: str) -> None:
    with pytest.raises(InvalidArgument) as info:
        check_url(typed)
    assert f"has no scheme; write it in full, e.g. {suggested}" in info.value.message
    assert "blocked" not in info.value.message


def test_the_blocked_file_url_message_names_a_setting_that_exists() -> None:
    with pytest.raises(BlockedUrl) as info:
        check_url("file:///etc/passwd")
    assert "Session(allowed_schemes=('file',))" in info.value.message and "Config(" not in info.value.message
    s = ocnb.Session(allowed_schemes=("file",))  # what the message says works
    try:
        assert check_url("file:///etc/passwd", s.config.allowed_schemes) == "file:///etc/passwd"
    finally:
        s.close()


def test_full_urls_and_other_schemes_are_unchanged() -> None:
    assert check_url("http://localhost:8771/x") == "http://localhost:8771/x"
    with pytest.raises(BlockedUrl):
        check_url("mailto:someone@example.com")
