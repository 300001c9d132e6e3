"""Manifest roots, invalid manifests, priority and hot reload."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest

from ocnb.discovery import BM25Retriever, DiscoveryEngine, ManifestWarning, manifest_roots
from ocnb.discovery.manifests import ManifestSet


def write(root: Path, name: str, description: str, extra: str = "") -> Path:
    folder = root / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "CAPABILITY.yaml").write_text(f"name: {name}\nkind: tool\ndescription: {description}\n{extra}")
    return folder


def test_roots_in_priority_order(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("OCNB_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("OCNB_CAPABILITY_DIRS", f"{tmp_path / 'a'}:{tmp_path / 'b'}")
    monkeypatch.chdir(tmp_path)
    assert manifest_roots() == [
        tmp_path / "home" / "capabilities",
        tmp_path / ".ocnb" / "capabilities",
        tmp_path / "a",
        tmp_path / "b",
    ]


def test_invalid_manifests_are_skipped_with_a_warning(tmp_path: Path) -> None:
    write(tmp_path, "good", "Works fine.")
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "CAPABILITY.yaml").write_text("name: bad\nkind: tool\n")
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "CAPABILITY.yaml").write_text("name: [unclosed\n")
    with pytest.warns(ManifestWarning) as caught:
        found = ManifestSet([tmp_path]).scan()
    assert list(found) == ["tool:good"]
    messages = sorted(str(w.message) for w in caught)
    assert str(bad / "CAPABILITY.yaml") in messages[0] and "description" in messages[0]
    assert str(broken / "CAPABILITY.yaml") in messages[1] and "invalid YAML" in messages[1]


def test_higher_priority_root_wins_a_shared_id(tmp_path: Path) -> None:
    write(tmp_path / "hi", "dup", "From the high-priority root.")
    write(tmp_path / "lo", "dup", "From the low-priority root.")
    write(tmp_path / "lo", "only_lo", "Only here.")
    found = ManifestSet([tmp_path / "hi", tmp_path / "lo"]).scan()
    assert found["tool:dup"].description == "From the high-priority root."
    assert set(found) == {"tool:dup", "tool:only_lo"}


def wait_for(predicate, timeout: float = 1.0) -> float:
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        if predicate():
            return time.monotonic() - start
        time.sleep(0.02)
    raise AssertionError(f"not seen within {timeout} s")


def test_hot_reload_sees_add_edit_and_delete_within_a_second(tmp_path: Path) -> None:
    root = tmp_path / "caps"
    write(root, "first", "The first capability.")
    engine = DiscoveryEngine(manifest_roots=[root], retriever=BM25Retriever())
    engine.watch()
    try:
        v0 = engine.index_version
        folder = write(root, "weather", "Forecast for a city.")
        wait_for(lambda: "tool:weather" in engine.descriptors)
        assert engine.index_version > v0
        assert engine.discover("city forecast").tier1[0].id == "tool:weather"

        write(root, "weather", "Tide tables for a harbour.")
        wait_for(lambda: engine.descriptors["tool:weather"].description.startswith("Tide"))
        assert engine.discover("harbour tides").tier1[0].id == "tool:weather"

        shutil.rmtree(folder)
        wait_for(lambda: "tool:weather" not in engine.descriptors)
        assert set(engine.descriptors) == {"tool:first"}
    finally:
        engine.stop()


def test_hot_reload_of_an_invalid_edit_drops_it_with_a_warning(tmp_path: Path) -> None:
    root = tmp_path / "caps"
    folder = write(root, "x", "Valid at first.")
    engine = DiscoveryEngine(manifest_roots=[root], retriever=BM25Retriever())
    engine.watch()
    try:
        with pytest.warns(ManifestWarning, match="missing required"):
            (folder / "CAPABILITY.yaml").write_text("name: x\nkind: tool\n")
            wait_for(lambda: "tool:x" not in engine.descriptors)
    finally:
        engine.stop()
