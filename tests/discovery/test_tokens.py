"""ocnb.tokens counts with a real tokenizer and never touches the network."""

from __future__ import annotations

import socket

import pytest

from ocnb import tokens


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("ocnb.tokens tried to open a socket")

    monkeypatch.setattr(socket, "socket", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)


def test_counts_offline_with_known_cl100k_values(no_network: None) -> None:
    tokens.get_encoder.cache_clear()  # build the encoder while sockets are blocked
    assert tokens.count_text("hello world") == 2
    assert tokens.count_text("") == 0
    assert tokens.count_text("Hello, world!") == 4
    assert tokens.get_encoder("cl100k_base").n_vocab == 100277


def test_special_token_text_is_counted_not_refused(no_network: None) -> None:
    assert tokens.count_text("<|endoftext|>") > 1


def test_count_json_uses_compact_json_keeping_key_order(no_network: None) -> None:
    obj = {"b": 1, "a": ["x", "é"]}
    assert tokens.count_json(obj) == tokens.count_text('{"b":1,"a":["x","é"]}')
    assert tokens.count_json({"a": 1, "b": 2}) == tokens.count_text('{"a":1,"b":2}')


def test_count_tools_counts_the_whole_list(no_network: None) -> None:
    tool = {
        "name": "navigate",
        "description": "Open a URL in the tab.",
        "inputSchema": {"type": "object", "properties": {"url": {"type": "string"}}},
    }
    one = tokens.count_tools([tool])
    two = tokens.count_tools([tool, tool])
    assert one == tokens.count_json([tool])
    assert one < two < 2 * one + 2


def test_available_encodings_and_unknown_or_missing_files(
    no_network: None, monkeypatch: pytest.MonkeyPatch, tmp_path: object
) -> None:
    assert "cl100k_base" in tokens.available_encodings()
    with pytest.raises(tokens.EncodingUnavailable):
        tokens.count_text("x", encoding="gpt-17")
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("OCNB_O200K_FILE", str(tmp_path) + "/missing.tiktoken")
    monkeypatch.setattr(tokens.tempfile, "gettempdir", lambda: str(tmp_path))
    assert tokens.available_encodings() == ["cl100k_base"]
    tokens.get_encoder.cache_clear()
    with pytest.raises(tokens.EncodingUnavailable, match="never downloads"):
        tokens.count_text("x", encoding="o200k_base")
