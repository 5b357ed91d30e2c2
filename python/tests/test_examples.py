"""The Python examples run end to end: the spare-factor sweep script and the notebook."""

import runpy
import sys

import pytest

from conftest import ROOT

EXAMPLES = ROOT / "examples" / "python"


def test_sweep_spare_factor_script(tmp_path, monkeypatch):
    out = tmp_path / "waf.png"
    monkeypatch.setattr(sys, "argv", ["sweep_spare_factor.py", "--quick", "--out", str(out)])
    runpy.run_path(str(EXAMPLES / "sweep_spare_factor.py"), run_name="__main__")
    assert out.stat().st_size > 10_000 and out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_notebook_runs(tmp_path):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    nb = nbformat.read(EXAMPLES / "quickstart.ipynb", as_version=4)
    nbclient.NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    assert len(outputs) >= 6
