"""Origin patterns and the policy's check, without a browser (issue 30 §1)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ocnb.errors import InvalidArgument
from ocnb.origins import OriginPolicy, parse_origin, parse_pattern
from ocnb.settings import Settings

ALLOW_LOCAL = OriginPolicy(allowed=["http://127.0.0.1:*"])


@pytest.mark.parametrize(
    ("url", "origin"),
    [
        ("https://x.com", "https://x.com:443"),
        ("https://x.com:443/a", "https://x.com:443"),
        ("HTTP://X.COM./", "http://x.com:80"),  # case and trailing dot folded
        ("https://bücher.de/", "https://xn--bcher-kva.de:443"),  # IDNA
        ("https://xn--bcher-kva.de/", "https://xn--bcher-kva.de:443"),
        ("http://[0:0::1]:8080/", "http://[::1]:8080"),  # IPv6, compressed
        ("http://2130706433/", "http://127.0.0.1:80"),  # IPv4 as the browser reads it
        ("http://0x7f.1/", "http://127.0.0.1:80"),
        ("http://allowed.com@evil.com/", "http://evil.com:80"),  # userinfo is not the host
        ("http://a:b@evil.com:81/", "http://evil.com:81"),
        ("http://evil.com\\@allowed.com/", "http://evil.com:80"),  # \ is / in a special URL
        ("http://ev\til.com/", "http://evil.com:80"),  # tabs dropped
        ("ws://x.com/s", "http://x.com:80"),
        ("wss://x.com/s", "https://x.com:443"),
        ("blob:https://a.com/1b2c", "https://a.com:443"),  # a blob carries its creator's origin
        ("filesystem:http://a.com:81/temporary/f", "http://a.com:81"),
    ],
)
def test_origin_of(url: str, origin: str) -> None:
    assert str(parse_origin(url)) == origin


@pytest.mark.parametrize(
    "url", ["data:text/html,x", "about:blank", "about:srcdoc", "javascript:1", "blob:null/1", "file:///etc/passwd"]
)
def test_urls_that_reach_no_server_have_no_origin(url: str) -> None:
    assert parse_origin(url) is None
    assert ALLOW_LOCAL.check(url) is None


def test_patterns_match_as_documented() -> None:
    p = OriginPolicy(
        allowed=["https://*.example.com", "http://localhost:*", "https://example.org"],
        blocked=["https://bad.example.com"],
    )
    assert p.check("https://a.example.com/x") is None
    assert p.check("https://a.b.example.com/") is None
    assert p.check("https://example.com/") == "not in allowed_origins"  # * stands for at least one label
    assert p.check("http://a.example.com/") == "not in allowed_origins"  # scheme counts
    assert p.check("https://bad.example.com/") == "blocked_origins: https://bad.example.com"  # blocked wins
    assert p.check("http://localhost:1/") is None and p.check("http://localhost/") is None
    assert p.check("https://example.org:443/") is None
    assert p.check("https://example.org:8443/") == "not in allowed_origins"  # default port folded, others not
    assert p.check("https://example.org.evil.com/") == "not in allowed_origins"
    assert p.check("https://evilexample.com/") == "not in allowed_origins"
    assert p.check("http://allowed@localhost:5/") is None
    assert p.check("http://localhost@evil.com/") == "not in allowed_origins"
    assert p.check("blob:https://evil.com/1") == "not in allowed_origins"
    assert p.check("wss://a.example.com/ws") is None


def test_empty_allow_list_allows_all_not_blocked() -> None:
    p = OriginPolicy(blocked=["http://localhost:*"])
    assert p.check("https://anything.net/") is None
    assert p.check("http://LOCALHOST.:9/") == "blocked_origins: http://localhost:*"
    assert not OriginPolicy() and OriginPolicy().check("http://x/") is None


def test_unreadable_host_is_refused() -> None:
    assert ALLOW_LOCAL.check("http://[zz]/") == "invalid host"


@pytest.mark.parametrize(
    "pattern",
    [
        "example.com",
        "https://a.com/path",
        "ftp://a.com",
        "https://*",
        "https://a.*.com",
        "http://a.com:99999",
        "http://u@a.com",
        "https://*.1.2.3.4",
        "http://a.com:",
        "https://exa mple.com",
        "*://a.com",
    ],
)
def test_malformed_pattern_is_invalid_argument_naming_it(pattern: str) -> None:
    with pytest.raises(InvalidArgument) as err:
        parse_pattern(pattern)
    assert repr(pattern.strip()) in err.value.message
    with pytest.raises(InvalidArgument):
        Settings(allowed_origins=["http://ok.com", pattern])


def test_settings_read_semicolon_lists() -> None:
    s = Settings.from_env(
        {"OCNB_ALLOWED_ORIGINS": " https://a.com ;;http://localhost:* ", "OCNB_BLOCKED_ORIGINS": "https://b.a.com"}
    )
    assert s.allowed_origins == ("https://a.com", "http://localhost:*")
    assert s.origin_policy().check("https://b.a.com/") == "blocked_origins: https://b.a.com"
    assert Settings(allowed_origins="https://a.com;https://b.com").allowed_origins == ("https://a.com", "https://b.com")


labels = st.from_regex(r"[a-z][a-z0-9]{0,8}", fullmatch=True)


@settings(deadline=None)  # a loaded machine is no failure of the code
@given(host=st.lists(labels, min_size=1, max_size=4).map(".".join), port=st.integers(1, 65535), user=labels)
def test_a_url_matches_its_own_origin_whatever_userinfo_or_case_says(host: str, port: int, user: str) -> None:
    policy = OriginPolicy(allowed=[f"http://{host}:{port}"])
    assert policy.check(f"http://{user}@{host.upper()}.:{port}/p?q#f") is None
    assert policy.check(f"http://{host}@evil-{host}.net:{port}/") == "not in allowed_origins"


@settings(deadline=None)  # a loaded machine is no failure of the code
@given(sub=labels, host=st.lists(labels, min_size=2, max_size=3).map(".".join))
def test_subdomain_wildcard_never_matches_the_apex_or_a_lookalike(sub: str, host: str) -> None:
    policy = OriginPolicy(allowed=[f"https://*.{host}"])
    assert policy.check(f"https://{sub}.{host}/") is None
    assert policy.check(f"https://{host}/") is not None
    assert policy.check(f"https://{sub}{host}/") is not None
    assert policy.check(f"https://{sub}.{host}.evil-{sub}.net/") is not None


POLICIES = [
    OriginPolicy(
        allowed=["http://127.0.0.1:*", "https://*.example.com", "https://a.org"], blocked=["https://bad.example.com"]
    ),
    OriginPolicy(blocked=["http://localhost:*", "https://*.evil.net"]),
    OriginPolicy(allowed=["http://localhost:8080"]),
]
url_hosts = st.sampled_from(
    ["127.0.0.1", "localhost", "LOCALHOST.", "a.example.com", "bad.example.com", "x.bad.example.com", "example.com",
     "a.org", "a.org.evil.net", "evil.net", "x.evil.net", "[::1]", "2130706433", "127.0.0.1.evil.net"]
)  # fmt: skip


@settings(deadline=None)
@given(
    scheme=st.sampled_from(["http", "https", "ws", "wss", "blob:https", "blob:http"]),
    user=st.sampled_from(["", "a@", "127.0.0.1@", "a.org:x@"]),
    host=url_hosts,
    port=st.sampled_from(["", ":443", ":80", ":8080", ":5"]),
    rest=st.sampled_from(["/", "/p?q=1", "#f", "?x", ""]),
)
def test_a_url_the_fast_path_lets_through_is_allowed(scheme: str, user: str, host: str, port: str, rest: str) -> None:
    """The browser-side route asks Python only about URLs ``suspects()`` matches: it must miss none."""
    url = f"{scheme}://{user}{host}{port}{rest}"
    for policy in POLICIES:
        if not policy.suspects().search(url):
            assert policy.check(url) is None, (policy, url)
