"""save_figure writes byte-identical files on reruns; the registry and README stay in sync."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pytest

from spare_lib.config import REPO_ROOT, resolve
from spare_lib.figures import registry as figures
from spare_lib.figures import style as plotting


def _fig():
    with plotting.style():
        fig, ax = plt.subplots()
        ax.plot(np.arange(5), np.arange(5) ** 2, label="x²")
        ax.legend()
    return fig


def test_save_figure_is_deterministic(tmp_path):
    a = plotting.save_figure(_fig(), "demo", tmp_path / "a", close=True)
    b = plotting.save_figure(_fig(), "demo", tmp_path / "b", close=True)
    for pa, pb in zip(a, b, strict=True):
        assert pa.read_bytes() == pb.read_bytes(), pa.name
    assert b"CreationDate" not in a[0].read_bytes()


@pytest.mark.parametrize("stem", ["", "a/b", "x.pdf", "two words"])
def test_save_figure_rejects_bad_stem(tmp_path, stem):
    with pytest.raises(ValueError, match="stem must be"):
        plotting.save_figure(_fig(), stem, tmp_path, close=True)


def test_update_readme_roundtrip(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text(f"intro\n{figures.README_START}\nold\n{figures.README_END}\noutro\n")
    assert not figures.readme_in_sync(readme)
    assert figures.update_readme(readme) is True
    assert figures.readme_in_sync(readme)
    assert figures.update_readme(readme) is False
    text = readme.read_text()
    assert text.startswith("intro\n") and text.endswith("outro\n")
    for spec in figures.REGISTRY:
        assert f"figures/{spec.stem}.png" in text
    readme.write_text("no markers")
    with pytest.raises(ValueError, match="no figure markers"):
        figures.update_readme(readme)


def test_resolve_smoke_never_writes_into_figures(monkeypatch):
    cfg = resolve("10_stacking_and_wipeout", smoke=True)
    assert cfg.fig_dir != REPO_ROOT / "figures"
    monkeypatch.setenv("SPARE_SMOKE", "1")
    assert resolve("10_stacking_and_wipeout").smoke
    monkeypatch.setenv("SPARE_SMOKE", "0")
    assert not resolve("10_stacking_and_wipeout").smoke
    with pytest.raises(ValueError, match="notebook must be one of"):
        resolve("99_nope")


def test_measured_notebooks_keep_the_committed_record_unless_told(monkeypatch):
    """A full run of notebook 45 (real processes on the wall clock) writes under
    _build/measurements/, not into the committed folders, unless SPARE_RECORD is set; every other
    notebook writes the committed folders; `spare figures --record` sets SPARE_RECORD and refuses
    --smoke and --out-dir (exit 2)."""
    from spare_lib.cli import main
    from spare_lib.config import FIGURES_DIR, MEASURED, MEASUREMENTS_DIR, RESULTS_DIR, SIZES

    monkeypatch.delenv("SPARE_RECORD", raising=False)
    assert MEASURED == {"45_live_emulation"}
    for nb in SIZES:
        cfg = resolve(nb, smoke=False)
        if nb in MEASURED:
            assert cfg.fig_dir == MEASUREMENTS_DIR / nb / "figures"
            assert cfg.results_dir == MEASUREMENTS_DIR / nb / "results"
        else:
            assert (cfg.fig_dir, cfg.results_dir) == (FIGURES_DIR, RESULTS_DIR)
    monkeypatch.setenv("SPARE_RECORD", "1")
    cfg = resolve("45_live_emulation", smoke=False)
    assert (cfg.fig_dir, cfg.results_dir) == (FIGURES_DIR, RESULTS_DIR)
    assert resolve("45_live_emulation", smoke=True).fig_dir != FIGURES_DIR  # smoke: never
    assert main(["figures", "--record", "--smoke"]) == 2
    assert main(["figures", "--record", "--out-dir", "x"]) == 2
