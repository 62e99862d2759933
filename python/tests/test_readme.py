"""The README's Python block, run as written."""
import contextlib
import io
import re
from pathlib import Path

import pytest


def test_readme_python_block():
    pytest.importorskip("torch")
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    block = re.search(r"## From Python\n.*?```python\n(.*?)```", readme, re.S).group(1)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(block, "README.md", "exec"), {})
    assert out.getvalue().startswith("tensor([[") and "(2, 3) True" in out.getvalue()
