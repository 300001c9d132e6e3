"""A secret is masked in every spelling it takes on the way to disk (issue 16, defect 3)."""

from __future__ import annotations

import base64
import html
import json
import time
from urllib.parse import quote, quote_plus

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ocnb.audit.sanitize import sanitize_args
from ocnb.audit.secrets import MIN_PREFIX, SecretStore, spellings

SECRET = 'pa ss&<wörd> "q" /x\\ 😀!'
PH = "${SECRET:PW}"


@pytest.fixture
def store() -> SecretStore:
    return SecretStore({"PW": SECRET})


def _lower_hex(text: str) -> str:
    import re

    return re.sub(r"%[0-9A-F]{2}", lambda m: m.group(0).lower(), text)


FORMS = {
    "literal": SECRET,
    "quote": quote(SECRET, safe=""),
    "quote-lower-hex": _lower_hex(quote(SECRET, safe="")),
    "quote-default-safe": quote(SECRET),
    "quote_plus": quote_plus(SECRET),
    "quote_plus-lower-hex": _lower_hex(quote_plus(SECRET)),
    "quote-twice": quote(quote(SECRET, safe=""), safe=""),
    "html.escape": html.escape(SECRET),
    "html-text-only": html.escape(SECRET, quote=False),
    "html-numeric": "".join(f"&#{ord(c)};" if not c.isalnum() else c for c in SECRET),
    "html-hex": "".join(f"&#x{ord(c):X};" if not c.isalnum() else c for c in SECRET),
    "json": json.dumps(SECRET, ensure_ascii=False)[1:-1],
    "json-ascii": json.dumps(SECRET)[1:-1],
    "json-html-safe": json.dumps(SECRET)[1:-1].replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e"),
    "json-of-json": json.dumps(json.dumps(SECRET))[1:-1],
    "upper": SECRET.upper(),
    "lower": SECRET.lower(),
    "reversed": SECRET[::-1],
    "base64": base64.b64encode(SECRET.encode()).decode(),
    "base64-urlsafe": base64.urlsafe_b64encode(SECRET.encode()).decode().rstrip("="),
    "hex": SECRET.encode().hex(),
    # A browser's own mix: space as %20, & kept, <> encoded, é as UTF-8 bytes.
    "browser-url": "pa%20ss&%3Cw%C3%B6rd%3E%20%22q%22%20/x%5C%20%F0%9F%98%80!",
}


@pytest.mark.parametrize("form", sorted(FORMS))
def test_every_spelling_is_masked(store: SecretStore, form: str) -> None:
    spelled = FORMS[form]
    out = store.mask_text(f"before {spelled} after")
    assert PH in out, (form, out)
    assert spelled not in out


def test_spellings_helper_lists_what_is_masked(store: SecretStore) -> None:
    found = spellings(SECRET)
    assert SECRET in found and quote_plus(SECRET) in found and html.escape(SECRET) in found
    for spelled in found:
        assert spelled not in store.mask_text(f"<{spelled}>"), spelled


def test_basic_credentials_at_any_offset() -> None:
    store = SecretStore({"PW": "hunter2-horse"})
    for user in ("a", "ab", "abc"):
        header = base64.b64encode(f"{user}:hunter2-horse".encode()).decode()
        core = base64.b64encode(b"hunter2-horse").decode()[:12]
        out = store.mask_text("Authorization: Basic " + header)
        assert PH in out and "hunter2" not in base64.b64decode(out.split()[-1] + "==", validate=False).decode(
            "latin-1", errors="replace"
        ), (user, out)
        assert core not in out


def test_a_prefix_at_a_truncation_boundary_is_masked(store: SecretStore) -> None:
    for n in range(MIN_PREFIX, len(SECRET)):
        cut = SECRET[:n]
        assert store.mask_text(f"x {cut}…[+20 chars]") == f"x {PH}…[+20 chars]", n
        assert store.mask_text(f"x {cut}...") == f"x {PH}...", n
        assert store.mask_text(f"x {cut}", truncated=True) == f"x {PH}", n
        assert store.mask_text(f"x {quote(cut, safe='')}", truncated=True) == f"x {PH}", n
        assert store.mask_text(f"<p>{html.escape(cut)}<!-- ocnb: truncated at 9 of 99 bytes -->").startswith(
            f"<p>{PH}<!--"
        )


def test_short_prefixes_and_uncut_prefixes_are_kept(store: SecretStore) -> None:
    short = SECRET[: MIN_PREFIX - 1]
    assert store.mask_text(f"x {short}", truncated=True) == f"x {short}"
    six = SECRET[:MIN_PREFIX]
    assert store.mask_text(f"x {six} more") == f"x {six} more"  # not at a boundary: ordinary text
    assert store.mask_text(f"x {six}") == f"x {six}"  # end of a text not said to be cut


def test_clip_text_masks_before_cutting(store: SecretStore) -> None:
    text = "a" * 1995 + SECRET + "tail"
    out = store.clip_text(text, 2000)
    assert len(out) <= 2000 and SECRET[:5] not in out and out.startswith("a" * 1995 + "${SE")
    # A text cut before it reached us (the page did it): the prefix at the end is masked.
    assert store.mask_text(text[:2003], truncated=True) == "a" * 1995 + PH


def test_placeholders_are_kept_and_never_nested() -> None:
    store = SecretStore({"SECRET": "secret-value", "X": "SECRET"})
    assert store.mask_text("${SECRET:SECRET} and ${SECRET:X}") == "${SECRET:SECRET} and ${SECRET:X}"


def test_short_values_are_not_case_folded() -> None:
    store = SecretStore({"PIN": "ab1"})
    assert store.mask_text("ab1 AB1 1ba") == "${SECRET:PIN} AB1 1ba"


def test_longest_secret_wins_in_every_spelling() -> None:
    store = SecretStore({"SHORT": "a&b cd", "LONG": "a&b cdef gh"})
    assert store.mask_text(quote_plus("a&b cdef gh")) == "${SECRET:LONG}"
    assert store.mask_text(html.escape("a&b cd")) == "${SECRET:SHORT}"


def test_sanitize_masks_encoded_forms_before_clipping(store: SecretStore) -> None:
    url = "https://example.test/?q=" + quote_plus(SECRET) + "&x=" + "y" * 600
    out = sanitize_args({"url": url}, store)["url"]
    assert PH in out and quote_plus(SECRET) not in out


def test_masking_a_large_text_stays_fast() -> None:
    store = SecretStore({f"N{i}": f"value-{i:03d}-with spaces&<>" for i in range(20)})
    page = "<p>lorem ipsum dolor sit amet &amp; consectetur</p>\n" * 20_000  # ~1 MB
    start = time.perf_counter()
    assert store.mask_text(page) == page
    assert time.perf_counter() - start < 2.0
    dirty = page + html.escape("value-007-with spaces&<>")
    assert store.mask_text(dirty).endswith("${SECRET:N7}")


@pytest.mark.parametrize(
    "value", ["a" + "\\" * 10 + "b", "\\a" * 12, "x" + '\\"' * 12, "." * 20, "x" + " " * 20 + "y", "%" * 20, "&" * 20]
)
def test_no_catastrophic_backtracking(value: str) -> None:
    store = SecretStore({"PW": value})
    texts = ["a" + "\\" * 60 + "c", "\\" * 400, "\\a" * 200 + "X", '\\"' * 200 + "X", "." * 500, " " * 500 + "…"]
    texts += ["%25" * 200, "&amp;" * 200, '\\\\"' * 200]
    start = time.perf_counter()
    for text in texts:
        store.mask_text(text)
        store.mask_text(text, truncated=True)
    assert time.perf_counter() - start < 1.0
    for spelled in (value, json.dumps(value)[1:-1], json.dumps(json.dumps(value))[1:-1]):
        assert store.mask_text(f"<{spelled}>") in ("<${SECRET:PW}>", '<\\"${SECRET:PW}\\">'), spelled


_ALPHABET = st.sampled_from(list("ab Z9&<>\"'/\\%+é😀.…#;xu"))


@settings(max_examples=400, deadline=None)
@given(st.text(_ALPHABET, min_size=1, max_size=24), st.text(_ALPHABET, max_size=12), st.text(_ALPHABET, max_size=12))
def test_no_spelling_survives_in_any_context(value: str, before: str, after: str) -> None:
    store = SecretStore({"PW": value})
    for spelled in spellings(value):
        out = store.mask_text(before + spelled + after)
        assert PH in out, (spelled, out)
        assert spelled not in out or spelled in before or spelled in after, (spelled, out)
