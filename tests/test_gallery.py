"""The checked-in codegen/ gallery matches what the library emits now."""
import importlib.util
import os

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
spec = importlib.util.spec_from_file_location(
    "regen_codegen", os.path.join(ROOT, "tools", "regen_codegen.py"))
regen = importlib.util.module_from_spec(spec)
spec.loader.exec_module(regen)


@pytest.mark.parametrize("entry", regen.ENTRIES, ids=lambda e: f"{e[0][:-3]}.{e[1]}.{e[2]}")
def test_gallery_file_is_current(entry, monkeypatch):
    monkeypatch.chdir(ROOT)
    path = regen.path_of(*entry[:3])
    assert os.path.exists(path), f"missing {path}: run python tools/regen_codegen.py"
    with open(path) as f:
        assert f.read() == regen.render(*entry), \
            f"{os.path.relpath(path, ROOT)} is stale: run python tools/regen_codegen.py " \
            "and review the diff"
