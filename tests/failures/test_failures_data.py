"""Dataset resolution: env override, the shared folder, the cache, and the no-network error."""

from __future__ import annotations

import hashlib

import pytest

from spare_lib.failures import data as data_mod
from spare_lib.failures.data import DATASETS, data_path


@pytest.mark.parametrize("name", sorted(DATASETS))
def test_shared_folder_is_found_and_hashes_match_the_table(name):
    folder = data_path(name, download=False)
    assert folder.name == name
    for fname, (url, sha256) in DATASETS[name].items():
        assert url.startswith("https://raw.githubusercontent.com/")
        assert hashlib.sha256((folder / fname).read_bytes()).hexdigest() == sha256


def test_unknown_name():
    with pytest.raises(ValueError, match="name must be one of"):
        data_path("no-such-data")


def test_env_override_wins_only_when_complete(tmp_path, monkeypatch):
    name = "stepfun-infinitehbd"
    (tmp_path / name).mkdir()
    (tmp_path / name / "fault_trace.json").write_text("[]")
    monkeypatch.setenv("SPARE_DATA_DIR", str(tmp_path))
    assert data_path(name, download=False) != tmp_path / name  # a file is missing: falls through
    (tmp_path / name / "fault_statistics.json").write_text("{}")
    assert data_path(name, download=False) == tmp_path / name


def _isolate(tmp_path, monkeypatch):
    monkeypatch.setenv("SPARE_DATA_DIR", str(tmp_path / "env"))
    monkeypatch.setattr(data_mod, "_repo_root", lambda: tmp_path / "repo")
    monkeypatch.setattr(data_mod, "_cache_dir", lambda: tmp_path / "cache")


def test_no_network_gives_a_helpful_error(tmp_path, monkeypatch):
    _isolate(tmp_path, monkeypatch)

    def offline(name, folder):
        raise OSError("network is unreachable")

    monkeypatch.setattr(data_mod, "_download", offline)
    with pytest.raises(FileNotFoundError) as err:
        data_path("lanl-cfdr")
    msg = str(err.value)
    assert "SPARE_DATA_DIR" in msg and "network is unreachable" in msg and "lanl-cfdr" in msg


def test_download_false_never_downloads(tmp_path, monkeypatch):
    _isolate(tmp_path, monkeypatch)

    def fail(name, folder):  # pragma: no cover - must not be called
        raise AssertionError("tried to download")

    monkeypatch.setattr(data_mod, "_download", fail)
    with pytest.raises(FileNotFoundError, match="download=False"):
        data_path("titan-gpu-life", download=False)


def test_cache_is_used_after_a_successful_fetch(tmp_path, monkeypatch):
    _isolate(tmp_path, monkeypatch)

    def fake_fetch(name, folder):
        folder.mkdir(parents=True, exist_ok=True)
        for fname in DATASETS[name]:
            (folder / fname).write_text("x")

    monkeypatch.setattr(data_mod, "_download", fake_fetch)
    assert data_path("titan-gpu-life") == tmp_path / "cache" / "titan-gpu-life"
