"""The package's layering (docs/architecture.md): imports go downwards, no
import cycle, function-local imports only with a reason, no module over 700
lines and no class over 400.  The check is ``tools/check_layers.py``; this
runs it with the suite."""
import os
import subprocess
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def test_imports_go_downwards_without_cycles():
    done = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "check_layers.py")],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert " 0 problems" in done.stdout


def test_the_check_sees_an_upward_import(tmp_path):
    """The checker is not vacuous: a core module importing the api is
    reported (run on a copy of the package with that one line added)."""
    import shutil
    shutil.copytree(os.path.join(ROOT, "tangent_x"), tmp_path / "tangent_x",
                    ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "tools").mkdir()
    shutil.copy(os.path.join(ROOT, "tools", "check_layers.py"), tmp_path / "tools")
    with open(tmp_path / "tangent_x" / "core" / "naming.py", "a") as f:
        f.write("\n\ndef _late():\n    from ..api import vmap  # noqa: F401\n")
    done = subprocess.run([sys.executable, str(tmp_path / "tools" / "check_layers.py")],
                          capture_output=True, text=True)
    assert done.returncode == 1
    assert "tangent_x/core/naming.py" in done.stdout and "a higher layer" in done.stdout
    assert "without '# local import:" in done.stdout


def test_the_check_sees_an_oversized_class(tmp_path):
    import shutil
    shutil.copytree(os.path.join(ROOT, "tangent_x"), tmp_path / "tangent_x",
                    ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "tools").mkdir()
    shutil.copy(os.path.join(ROOT, "tools", "check_layers.py"), tmp_path / "tools")
    body = "".join(f"    def m{i}(self):\n        return {i}\n" for i in range(250))
    (tmp_path / "tangent_x" / "core" / "big.py").write_text("class Big:\n" + body)
    done = subprocess.run([sys.executable, str(tmp_path / "tools" / "check_layers.py")],
                          capture_output=True, text=True)
    assert done.returncode == 1
    assert "class Big has 501 lines" in done.stdout
