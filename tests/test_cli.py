"""The tangent-x command line (run as a real subprocess)."""
import os
import shutil
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run(*args, exe=(sys.executable, "-m", "tangent_x")):
    return subprocess.run([*exe, *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)


def test_grad_prints_derivative_source_plain_when_piped():
    proc = run("grad", "examples/basics.py:tanh")
    assert proc.returncode == 0, proc.stderr
    assert "def grad_tanh(x):" in proc.stdout
    assert "x_bar = 1.0 - y * y" in proc.stdout
    assert "\x1b[" not in proc.stdout


def test_argnums_and_has_aux_options():
    proc = run("grad", "examples/basics.py:product", "--argnums", "0,1")
    assert proc.returncode == 0, proc.stderr
    assert "return (x_bar, y_bar)" in proc.stdout
    proc = run("grad", "examples/mlp.py:loss_and_predictions", "--has-aux")
    assert proc.returncode == 0, proc.stderr
    assert "has_aux" in proc.stdout


def test_show_stage():
    proc = run("show", "examples/basics.py:product", "--stage", "canonical")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("def product(x, y):")


@pytest.mark.parametrize("target, fragment", [
    ("examples/basics.py:nope", "no function named 'nope'"),
    ("examples/missing.py:f", "no such file"),
    ("examples/basics.py", "expected FILE:FUNCTION"),
])
def test_bad_target_exits_2_with_one_line(target, fragment):
    proc = run("grad", target)
    assert proc.returncode == 2
    assert fragment in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_untransformable_function_exits_2_naming_the_line(tmp_path):
    path = tmp_path / "bad.py"
    path.write_text("import numpy as np\n\ndef f(x):\n    try:\n        return x\n"
                    "    finally:\n        pass\n")
    proc = run("grad", f"{path}:f")
    assert proc.returncode == 2
    assert f"{path}:4" in proc.stderr and "`try` statement" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_console_script_installed():
    exe = shutil.which("tangent-x")
    if exe is None:
        pytest.skip("tangent-x console script not on PATH (package not installed)")
    proc = run("grad", "examples/basics.py:tanh", exe=(exe,))
    assert proc.returncode == 0 and "def grad_tanh" in proc.stdout


@pytest.mark.parametrize("command, fragment", [
    ("jvp", "def jvp_tanh(x, x_dot):"),
    ("vjp", "def vjp_bwd_tanh(residuals, out_bar):"),
    ("grad3", "def grad_grad_grad_tanh(x):"),
    ("hessian", "def jvp_grad_tanh(x, x_dot):"),
])
def test_forward_and_higher_order_commands(command, fragment):
    proc = run(command, "examples/basics.py:tanh")
    assert proc.returncode == 0, proc.stderr
    assert fragment in proc.stdout


def test_vmap_prints_vectorised_source(capsys):
    from tangent_x import cli
    assert cli.main(["vmap", "examples/batching.py:layer",
                     "--example-args", "np.ones((8, 3))"]) == 0
    out = capsys.readouterr().out
    assert "x @ W.T" in out and "def vmap_layer(x):" in out


def test_vmap_of_grad_with_in_axes(capsys):
    from tangent_x import cli
    assert cli.main(["vmap", "examples/batching.py:steps_to_exceed", "--in-axes", "0,None"]) == 0
    assert "select_lanes" in capsys.readouterr().out
    assert cli.main(["vmap", "examples/batching.py:tanh", "--transform", "grad"]) == 0
    assert "x_bar = 1.0 - " in capsys.readouterr().out
