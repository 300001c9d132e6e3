"""Secrets from dotenv files, placeholder substitution and masking; argument sanitizing."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest

from ocnb.audit.sanitize import REDACTED, clip, is_sensitive_key, sanitize_args
from ocnb.audit.secrets import MAX_SECRETS, SecretStore, parse_dotenv
from ocnb.errors import InvalidArgument, MissingSecret

DOTENV = """\
# credentials for the demo site
USER=alice
export PASSWORD="p@ss \\"word\\" #1"
API_KEY='raw $value # not a comment'
EMPTY=
SPACED = some value   # trailing comment
HASH=abc#def
"""


def test_dotenv_parses_quotes_comments_and_export(tmp_path: Path) -> None:
    path = tmp_path / ".env"
    path.write_text(DOTENV)
    store = SecretStore.from_dotenv(path)
    assert store.names == ["API_KEY", "EMPTY", "HASH", "PASSWORD", "SPACED", "USER"]
    assert store.substitute("${SECRET:PASSWORD}") == 'p@ss "word" #1'
    assert store.substitute("${SECRET:API_KEY}") == "raw $value # not a comment"
    assert store.substitute("${SECRET:SPACED}|${SECRET:HASH}|${SECRET:EMPTY}") == "some value|abc#def|"


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("A=1\n2BAD=x\n", "line 2"),
        ("A=1\n\nnot a pair\n", "line 3"),
        ('A="unterminated\n', "line 1"),
        ("A='x' trailing\n", "line 1"),
    ],
)
def test_bad_dotenv_line_is_named_without_its_value(tmp_path: Path, text: str, needle: str) -> None:
    path = tmp_path / "bad.env"
    path.write_text(text)
    with pytest.raises(InvalidArgument) as info:
        SecretStore.from_dotenv(path)
    assert needle in str(info.value) and str(path) in str(info.value)
    assert info.value.code == "INVALID_ARGUMENT"


def test_error_message_never_contains_the_value(tmp_path: Path) -> None:
    path = tmp_path / ".env"
    path.write_text("TOKEN='s3cr3t-value' junk\n")
    with pytest.raises(InvalidArgument) as info:
        SecretStore.from_dotenv(path)
    assert "s3cr3t-value" not in str(info.value)


def test_at_most_100_names() -> None:
    ok = "".join(f"S{i}=v{i}\n" for i in range(MAX_SECRETS))
    assert len(parse_dotenv(ok)) == MAX_SECRETS
    with pytest.raises(InvalidArgument, match="more than 100"):
        parse_dotenv(ok + "ONE_MORE=x\n")
    with pytest.raises(InvalidArgument, match="more than 100"):
        SecretStore({f"S{i}": "v" for i in range(MAX_SECRETS + 1)})


def test_missing_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(InvalidArgument, match="not found"):
        SecretStore.from_dotenv(tmp_path / "nope.env")


def test_substitute_recurses_into_values_not_keys() -> None:
    store = SecretStore({"PW": "hunter2", "USER": "alice"})
    args = {
        "fields": [{"name": "${SECRET:USER}", "value": "pw=${SECRET:PW}!"}],
        "${SECRET:PW}": 1,
        "n": 3,
        "t": ("${SECRET:USER}",),
    }
    out = store.substitute(args)
    assert out == {"fields": [{"name": "alice", "value": "pw=hunter2!"}], "${SECRET:PW}": 1, "n": 3, "t": ["alice"]}
    assert args["fields"][0]["value"] == "pw=${SECRET:PW}!"  # the caller's args are untouched


def test_unknown_placeholder_is_missing_secret_naming_all() -> None:
    store = SecretStore({"PW": "hunter2"})
    with pytest.raises(MissingSecret) as info:
        store.substitute({"a": "${SECRET:NOPE}", "b": ["${SECRET:ALSO_NOPE}", "${SECRET:PW}"]})
    assert info.value.code == "MISSING_SECRET"
    assert info.value.details["names"] == ["ALSO_NOPE", "NOPE"]


def test_mask_replaces_longest_value_first_everywhere() -> None:
    store = SecretStore({"SHORT": "abc", "LONG": "abcdef", "OTHER": "zz9"})
    obj = {"text": "xabcdefx abc", "list": ["zz9", {"abcdef": "k"}], "n": 5, "none": None}
    assert store.mask(obj) == {
        "text": "x${SECRET:LONG}x ${SECRET:SHORT}",
        "list": ["${SECRET:OTHER}", {"${SECRET:LONG}": "k"}],
        "n": 5,
        "none": None,
    }


def test_mask_ignores_empty_values_and_handles_regex_characters() -> None:
    store = SecretStore({"EMPTY": "", "RX": "a.b*c(d)"})
    assert store.mask("a.b*c(d) and aXbbc(d)") == "${SECRET:RX} and aXbbc(d)"
    assert store.mask("nothing here") == "nothing here"


def test_repr_shows_names_only_and_pickling_is_refused() -> None:
    store = SecretStore({"PW": "hunter2"})
    assert "hunter2" not in repr(store) and "hunter2" not in str(store)
    assert "PW" in repr(store)
    with pytest.raises(TypeError):
        pickle.dumps(store)


def test_update_later_changes_masking() -> None:
    store = SecretStore()
    assert store.mask("hunter2") == "hunter2"
    store.update({"PW": "hunter2"})
    assert store.mask("my hunter2") == "my ${SECRET:PW}"


@pytest.mark.parametrize(
    "key",
    [
        "password",
        "Passwd",
        "user_password",
        "token",
        "access_token",
        "refreshToken",
        "csrftoken",
        "secret",
        "client_secret",
        "api_key",
        "apiKey",
        "X-Api-Key",
        "APIKEY",
        "Authorization",
        "cookie",
        "Set-Cookie",
    ],
)
def test_sensitive_keys_are_redacted(key: str) -> None:
    assert is_sensitive_key(key)
    assert sanitize_args({key: "value", "other": "kept"}) == {key: REDACTED, "other": "kept"}


@pytest.mark.parametrize("key", ["max_tokens", "token_budget", "url", "value", "target", "tokenizer"])
def test_ordinary_keys_are_kept(key: str) -> None:
    assert not is_sensitive_key(key)


def test_sanitize_masks_redacts_and_clips_nested() -> None:
    store = SecretStore({"PW": "hunter2"})
    args = {"fields": [{"label": "Password", "value": "hunter2"}, {"password": {"x": 1}}], "note": "x" * 600}
    out = sanitize_args(args, store)
    assert out["fields"] == [{"label": "Password", "value": "${SECRET:PW}"}, {"password": REDACTED}]
    assert out["note"] == "x" * 500 + "…[+100 chars]"
    assert args["note"] == "x" * 600  # not modified in place


def test_masking_happens_before_clipping() -> None:
    # A secret straddling the clip point must not leave its first half behind.
    secret = "S3CRET-VALUE-" * 3
    store = SecretStore({"PW": secret})
    text = "a" * 490 + secret + "tail"
    out = sanitize_args({"v": text}, store)["v"]
    assert "S3CRET" not in out
    assert out.startswith("a" * 490 + "${SECRET")


def test_clip_counts_the_removed_characters() -> None:
    assert clip("abc", 5) == "abc"
    assert clip("abcdefgh", 5) == "abcde…[+3 chars]"


def test_substitute_finds_a_placeholder_at_any_depth_and_leaves_the_rest_equal() -> None:
    """Arguments naming no secret skip the substitution (one walk); one placeholder anywhere — in a
    tuple in a mapping that is not a dict, deep in a list — is still found and filled in."""
    from types import MappingProxyType

    store = SecretStore({"PW": "hunter2"})
    plain = {"step": {"args": {"value": "$ {SECRET:PW}", "n": 1}, "selectors": [["${SECRET", ":PW}"]]}}
    assert store.substitute(plain) == plain and store.missing(plain) == []
    deep = {"a": [[{"b": MappingProxyType({"c": ("x", "${SECRET:PW}")})}]]}
    assert store.substitute(deep) == {"a": [[{"b": {"c": ["x", "hunter2"]}}]]}
    with pytest.raises(MissingSecret):
        store.substitute({"a": [[{"b": MappingProxyType({"c": ("${SECRET:NOPE}",)})}]]})
