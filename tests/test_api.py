"""The transform machinery: parsing corners, caching, staleness, tracebacks."""
import linecache
import os
import textwrap

import numpy as np
import pytest

import tangent_x as tx


def test_two_lambdas_on_one_line_are_told_apart():
    double, triple = lambda x: x * 2.0, lambda x: x * 3.0
    assert tx.grad(double)(1.0) == 2.0
    assert tx.grad(triple)(1.0) == 3.0


def test_exec_source_registered_with_linecache():
    src = textwrap.dedent("""
        import numpy as np
        def cube(x):
            return x * x * x
    """)
    filename = "<tangent_x test exec>"
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    namespace = {}
    exec(compile(src, filename, "exec"), namespace)
    assert tx.grad(namespace["cube"])(2.0) == pytest.approx(12.0)


def test_exec_source_not_registered_is_a_clear_error():
    # a file name of its own: Python 3.13 registers the source of `python -c`
    # (how pytest-xdist starts its workers) in linecache as "<string>"
    namespace = {}
    exec(compile("def f(x):\n    return x * 2.0\n", "<tangent_x unregistered>", "exec"),
         namespace)
    with pytest.raises(tx.TransformError, match="linecache"):
        tx.grad(namespace["f"])(1.0)


def test_generated_module_is_a_real_file_in_the_cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("TANGENT_X_CACHE_DIR", str(tmp_path))

    def square(x):
        return x * x

    g = tx.grad(square)
    assert g(3.0) == 6.0
    path = g.generated.path
    assert os.path.dirname(path) == str(tmp_path)
    with open(path) as f:
        assert f.read() == tx.source(g)


def test_rebinding_a_global_helper_rebuilds_the_code():
    namespace = {"np": np}
    src = "def helper(x):\n    return x * 2.0\ndef f(x):\n    return helper(x)\n"
    filename = "<tangent_x test stale>"
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    exec(compile(src, filename, "exec"), namespace)
    g = tx.grad(namespace["f"])
    assert g(1.0) == 2.0
    src2 = "def helper(x):\n    return x * 5.0\n"
    filename2 = "<tangent_x test stale 2>"
    linecache.cache[filename2] = (len(src2), None, src2.splitlines(True), filename2)
    exec(compile(src2, filename2, "exec"), namespace)
    assert g(1.0) == 5.0


def test_rebinding_a_closure_value_rebuilds_the_code():
    scale = 2.0

    def f(x):
        return x * scale

    g = tx.grad(f)
    assert g(1.0) == 2.0
    scale = 7.0  # noqa: F841  (read by f's closure)
    assert g(1.0) == 7.0


def test_changed_function_body_never_reuses_stale_module(tmp_path):
    path = tmp_path / "model.py"
    path.write_text("import numpy as np\ndef f(x):\n    return np.sin(x)\n")
    import importlib.util

    def load():
        spec = importlib.util.spec_from_file_location("tx_stale_model", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module

    g1 = tx.grad(load().f)
    assert g1(0.0) == pytest.approx(1.0)
    path.write_text("import numpy as np\ndef f(x):\n    return np.cos(x)\n")
    linecache.checkcache(str(path))
    g2 = tx.grad(load().f)
    assert g2(0.0) == pytest.approx(0.0)
    assert g1.generated.path != g2.generated.path


def test_methods_and_attributes():
    class Model:
        def __init__(self):
            self.w = np.array([1.0, 2.0, 3.0])

        def loss(self, x):
            return np.sum(self.w * x ** 2)

    m = Model()
    x = np.array([0.5, -1.0, 2.0])
    np.testing.assert_allclose(tx.grad(m.loss)(x), 2 * m.w * x)


def test_transformed_function_called_inside_another_is_inlined():
    def inner(x):
        return np.sin(x)

    d_inner = tx.grad(inner)

    def outer(x):
        return d_inner(x) * 3.0

    np.testing.assert_allclose(outer(0.3), 3 * np.cos(0.3))


def test_grad_of_numpy_primitive_directly():
    assert tx.grad(np.sin)(0.2) == pytest.approx(np.cos(0.2))


def test_source_stages():
    def f(x):
        return np.tanh(2.0 * x + 1.0)

    parsed = tx.source(f, stage="parse")
    assert parsed.startswith("    def f(x):") or parsed.startswith("def f(x):")
    canonical = tx.source(f, stage="canonical")
    assert canonical.count("=") >= 3          # one primitive per line
    python = tx.source(tx.grad(f))
    assert "def grad_f(x):" in python
    with pytest.raises(ValueError, match="unknown stage"):
        tx.source(f, stage="nope")


def test_gradient_dtype_and_structure_follow_the_argument():
    def f(params):
        return np.sum(params["w"] ** 2) + params["b"] * 2.0

    params = {"w": np.ones(3, dtype=np.float32), "b": 1.5}
    g = tx.grad(f)(params)
    assert set(g) == {"w", "b"}
    assert g["w"].dtype == np.float32
    assert isinstance(g["b"], float)
