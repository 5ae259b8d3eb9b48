"""``tx.jit``: the numba stage, compiled, checked against eager execution.

Results are compared with the python stage (eager) and with the original
functions; the numba-stage *source* is checked where the issue promises a
property of it (a static ``if`` disappears, pytrees become leaves).  Speed
is not asserted here (see tools/bench.py); the cache test checks Numba's
own hit counter in a second process instead of a clock.
"""
import inspect
import os
import subprocess
import sys
import textwrap
from functools import partial

import numpy as np
import pytest

import tangent_x as tx
from tangent_x import tree_util

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "examples"))

from mlp import loss as mlp_loss  # noqa: E402
from _fd import numerical_grad  # noqa: E402


def _allclose(a, b, **kw):
    assert tree_util.tree_structure(a) == tree_util.tree_structure(b)
    for x, y in zip(tree_util.tree_leaves(a), tree_util.tree_leaves(b)):
        np.testing.assert_allclose(x, y, **kw)


def _mlp_args(seed=0, batch=16):
    rng = np.random.default_rng(seed)
    params = [{"W": rng.standard_normal((8, 5)), "b": rng.standard_normal(8)},
              {"W": rng.standard_normal((3, 8)), "b": rng.standard_normal(3)}]
    return params, rng.standard_normal((batch, 5)), rng.standard_normal((batch, 3))


# ---------------------------------------------------------------------------
# Transforms under jit
# ---------------------------------------------------------------------------

def test_jit_grad_of_mlp_keeps_the_pytree_and_matches_eager():
    args = _mlp_args()
    got = tx.jit(tx.grad(mlp_loss))(*args)
    _allclose(got, tx.grad(mlp_loss)(*args), rtol=1e-12)
    assert type(got) is list and all(type(d) is dict for d in got)
    assert all(isinstance(v, np.ndarray) and v.flags.writeable
               for v in tree_util.tree_leaves(got))


def test_numba_stage_takes_leaves_and_has_no_containers():
    jitted = tx.jit(tx.grad(mlp_loss))
    jitted(*_mlp_args())
    src = tx.source(jitted, stage="numba")
    assert "def grad_loss(params_0_W, params_0_b, params_1_W, params_1_b, x, y):" in src
    code = "\n".join(line.split("#")[0] for line in src.splitlines())
    assert "unindex" not in code and "tree_add" not in code and "['W']" not in code


def test_jit_value_and_grad_and_plain_function():
    args = _mlp_args(1)
    value, grads = tx.jit(tx.value_and_grad(mlp_loss))(*args)
    np.testing.assert_allclose(value, mlp_loss(*args), rtol=1e-12)
    _allclose(grads, tx.grad(mlp_loss)(*args), rtol=1e-12)
    np.testing.assert_allclose(tx.jit(mlp_loss)(*args), mlp_loss(*args), rtol=1e-12)


def _cube_sum(x):
    return np.sum(x ** 3)


def test_jit_of_jit_and_grad_of_jit():
    x = np.array([0.5, -1.5, 2.0])
    jitted = tx.jit(_cube_sum)
    np.testing.assert_allclose(tx.jit(jitted)(x), _cube_sum(x))
    np.testing.assert_allclose(tx.grad(jitted)(x), 3 * x ** 2)        # transforms f's source
    np.testing.assert_allclose(tx.jit(tx.grad(jitted))(x), 3 * x ** 2)
    np.testing.assert_allclose(tx.jit(tx.grad(tx.grad(lambda v: np.sin(v) * v)))(0.3),
                               2 * np.cos(0.3) - 0.3 * np.sin(0.3))
    out, tangent = tx.jvp(jitted, (x,), (np.ones(3),))                 # jvp/vjp of jit(f):
    np.testing.assert_allclose(tangent, np.sum(3 * x ** 2))            # f's source again
    out, pullback = tx.vjp(jitted, x)
    np.testing.assert_allclose(pullback(2.0)[0], 6 * x ** 2)


_GRAD_CUBE = tx.grad(_cube_sum)


def _uses_a_gradient(x):
    return np.sum(_GRAD_CUBE(x) * x)


def test_transformed_function_called_inside_jit():
    x = np.array([0.5, -1.5, 2.0])
    np.testing.assert_allclose(tx.jit(_uses_a_gradient)(x), np.sum(3 * x ** 3))
    np.testing.assert_allclose(tx.jit(tx.grad(_uses_a_gradient))(x), 9 * x ** 2)


def test_jit_of_a_jvp_function():
    """jvp's generated code (tangents after their primals) compiles too."""
    from tangent_x.api.transformed import cached
    jvp_fn = cached(_cube_sum, "jvp", (0,), lambda out, a: out)
    x, t = np.array([0.5, -1.5]), np.array([1.0, 2.0])
    value, tangent = tx.jit(jvp_fn)(x, t)
    np.testing.assert_allclose(value, _cube_sum(x))
    np.testing.assert_allclose(tangent, np.sum(3 * x ** 2 * t))


# ---------------------------------------------------------------------------
# Static arguments
# ---------------------------------------------------------------------------

class FrozenDict(dict):
    def __hash__(self):
        return hash(tuple(sorted(self.items())))


def _layer(x, config):
    h = x * 2.0
    if config["relu"]:
        h = np.maximum(h, 0.0)
    else:
        h = np.tanh(h)
    return np.sum(h * config["scale"])


def test_static_values_are_folded_and_recompile_only_when_they_change():
    x = np.array([0.5, -1.5, 2.0])
    jitted = tx.jit(tx.grad(_layer), static_argnames="config")
    relu = FrozenDict(relu=True, scale=3.0)
    np.testing.assert_allclose(jitted(x, relu), tx.grad(_layer)(x, relu))
    src = tx.source(jitted, stage="numba")
    code = "\n".join(line.split("#")[0] for line in src.splitlines())
    assert "if" not in code.split("def ")[1] and "np.maximum" in code and "tanh" not in code
    assert len(jitted._cache) == 1
    jitted(x + 1.0, FrozenDict(relu=True, scale=3.0))        # equal static value: no compile
    assert len(jitted._cache) == 1
    # a new rank is a new signature (the specialiser folds x.ndim), the same text
    jitted(np.ones((2, 2)), relu)
    assert len(jitted._cache) == 2 and tx.source(jitted, stage="numba") == src
    smooth = FrozenDict(relu=False, scale=0.5)
    np.testing.assert_allclose(jitted(x, smooth), tx.grad(_layer)(x, smooth))
    assert len(jitted._cache) == 3
    assert "vmath.tanh" in tx.source(jitted, stage="numba")     # np.tanh, vectorisable


def _power(x, n):
    return x ** n


def test_static_argnums_and_defaults():
    jitted = tx.jit(_power, static_argnums=1)
    assert jitted(3.0, 2) == 9.0 and jitted(2.0, 3) == 8.0
    assert len(jitted._cache) == 2


def test_errors_without_a_better_place_name_the_users_line():
    """The static-argument check and an argument compiled code cannot take
    name the line calling into tangent_x, never a line of tangent_x's own."""
    with pytest.raises(ValueError, match=r"test_jit\.py:\d+: jit has static_argnums"):
        tx.jit(_power, static_argnums=5)
    with pytest.raises(tx.TransformError, match=r"test_jit\.py:\d+: jit\(_power\): argument x"):
        tx.jit(_power)(object(), 2)


# ---------------------------------------------------------------------------
# Beyond JAX: value-dependent control flow and shapes
# ---------------------------------------------------------------------------

def _negatives_squared(x):
    neg = x[x < 0]
    return np.sum(neg * neg)


def _newton_sqrt(a):
    x = a
    while np.abs(x * x - a) > 1e-12:
        x = 0.5 * (x + a / x)
    return x


def _branchy(x):
    total = 0.0
    for i in range(x.shape[0]):
        if x[i] > 0:
            total = total + np.sin(x[i])
        else:
            total = total - x[i] * x[i]
    return total


@pytest.mark.parametrize("fn, x", [
    (_negatives_squared, np.array([0.5, -1.5, 2.0, -0.25])),
    (_negatives_squared, np.array([-3.0, 1.0])),
    (_newton_sqrt, 2.0),
    (_newton_sqrt, 9.0),
    (_branchy, np.array([0.3, -0.7, 1.2, -2.0])),
], ids=["mask-4", "mask-2", "newton-2", "newton-9", "branchy"])
def test_value_dependent_control_flow_and_shapes(fn, x):
    np.testing.assert_allclose(tx.jit(fn)(x), fn(x), rtol=1e-12)
    np.testing.assert_allclose(tx.jit(tx.grad(fn))(x), tx.grad(fn)(x), rtol=1e-12)


def test_newton_sqrt_gradient_under_jit():
    np.testing.assert_allclose(tx.jit(tx.grad(_newton_sqrt))(2.0), 0.5 / np.sqrt(2.0),
                               rtol=1e-9)


def test_newton_sqrt_hessian_under_jit():
    """The jvp of the gradient fills its tapes under the loop's exit test:
    a tape is ``[]`` on the path that leaves and ``[a]`` on the other,
    which must join as one run-time list."""
    for a in (2.0, 9.0):
        got = tx.jit(tx.hessian(_newton_sqrt))(a)
        np.testing.assert_allclose(got, tx.hessian(_newton_sqrt)(a), rtol=1e-12)
        np.testing.assert_allclose(got, -0.25 * a ** -1.5, rtol=1e-9)


def _pushed_under_if(x):
    pairs = []
    if x[0] > 0:
        pairs.append((x[0] * 2.0, np.sin(x)))
        pairs.append((x[1], np.cos(x)))
    total = np.sum(x)
    for _ in range(len(pairs)):
        scale, v = pairs.pop()
        total = total + scale * np.sum(v)
    return total


@pytest.mark.parametrize("x", [np.array([0.5, -1.0, 2.0]), np.array([-0.5, 1.0, 2.0])],
                         ids=["pushed", "empty"])
def test_list_filled_on_one_path_of_an_if(x):
    """A list of (scalar, array) pairs, filled on one path only: one
    run-time list per element leaf, empty before the ``if``."""
    np.testing.assert_allclose(tx.jit(_pushed_under_if)(x), _pushed_under_if(x), rtol=1e-12)


def _filled_before_and_under_if_in_loop(x):
    t = [x]
    for i in range(3):
        if x > i:
            t.append(x * i)
    return len(t) * x


def _filled_before_and_under_if_in_while(x):
    t = [x]
    i = 0.0
    while i < x:
        if x > 2 * i:
            t.append(x * i)
        i += 1.0
    return len(t) * x + sum(t)


@pytest.mark.parametrize("x", [2.5, 0.5, -1.0])
def test_list_filled_before_a_short_loop_and_under_an_if_in_it(x):
    """A short static loop is written out, and each path's list joins as
    one run-time list (before session 19 the append, which gives a new
    list to a name the loop reads, was refused)."""
    assert tx.jit(_filled_before_and_under_if_in_loop)(x) == \
        _filled_before_and_under_if_in_loop(x)


def test_list_filled_before_a_loop_and_under_an_if_in_it_is_a_clear_error():
    from tangent_x.errors import TransformError
    with pytest.raises(TransformError, match="filled before a loop and inside it"):
        tx.jit(_filled_before_and_under_if_in_while)(2.5)


def _last_of_loop(x, n):
    for i in range(n):
        last = x * i
    return last * 2.0


def _last_array_of_loop(x, n):
    for i in range(n):
        last = np.sin(x) * i
    return np.sum(np.full(x.shape, 1.0) * last)


def test_variable_first_assigned_in_a_loop_compiles_and_raises_when_unassigned():
    """Numba needs a value before the loop: the variable starts as None (an
    optional value), and a read after a loop that never ran raises
    UnboundLocalError, as Python does, in the primal and in the gradient.
    (The array case compiled in one process with others once corrupted the
    heap: the optional's array was freed twice.)"""
    identity = (lambda f: f)
    for fn, x, transforms in ((_last_of_loop, 3.0, (identity, tx.grad)),
                              (_last_array_of_loop, np.array([0.3, -1.2]), (identity,))):
        for transform in transforms:
            eager, jitted = transform(fn), tx.jit(transform(fn))
            _allclose(jitted(x, 4), eager(x, 4), rtol=1e-12)
            with pytest.raises(UnboundLocalError):
                eager(x, 0)
            with pytest.raises(UnboundLocalError):
                jitted(x, 0)


def _number_becomes_array_for(x):
    s = 0.0
    for i in range(4):
        s = s + np.sin(x * (i + 1.0))
    return np.sum(s * x)


def _number_becomes_array_while(x):
    i = 0
    s = 0.0
    while i < 6:
        i = i + 1
        if i % 3 == 0:
            continue
        if i == 5:
            break
        s = s + np.cos(x * i)
    return np.sum(s)


def _number_becomes_array_run_time_while(x, n):
    i = 0
    s = 0.0
    while i < n:
        i = i + 1
        s = s + np.cos(x * i)
    return np.sum(s)


@pytest.mark.parametrize("fn", [_number_becomes_array_for, _number_becomes_array_while])
def test_short_static_loop_whose_number_becomes_an_array_is_unrolled(fn):
    """``s = 0.0`` becoming an array in the loop: Numba gives a loop
    variable one type, so a loop with a static trip count is unrolled (as
    JAX's tracing does), in the primal and in the gradient's forward and
    backward loops; each iteration is marked in the emitted code."""
    x = np.array([0.3, -0.7, 1.1])
    for transform in (lambda f: f, tx.grad):
        jitted = tx.jit(transform(fn))
        _allclose(jitted(x), transform(fn)(x), rtol=1e-12)
        assert "(unrolled: " in tx.source(jitted, stage="numba")


def test_run_time_loop_whose_number_becomes_an_array_is_a_located_error():
    """A trip count known only at run time cannot be unrolled: the clear
    error names the user's loop (a scalar argument compiles as a loop)."""
    from tangent_x.numba_stage.compile_errors import JitError
    np.testing.assert_allclose(tx.jit(_number_becomes_array_run_time_while)(0.4, 3),
                               _number_becomes_array_run_time_while(0.4, 3), rtol=1e-12)
    with pytest.raises(JitError, match=r"test_jit.py:\d+: Numba cannot compile"):
        tx.jit(_number_becomes_array_run_time_while)(np.array([0.3, -0.7]), 3)


def _rnn(W, U, xs):
    h = np.zeros(W.shape[0])
    for x in xs:
        h = np.tanh(W @ h + U @ x)
    return np.sum(h)


def test_rnn_gradient_with_a_tape_under_jit():
    rng = np.random.default_rng(3)
    W, U, xs = rng.standard_normal((4, 4)) * 0.5, rng.standard_normal((4, 3)), \
        rng.standard_normal((6, 3))
    got = tx.jit(tx.grad(_rnn, argnums=(0, 1)))(W, U, xs)
    _allclose(got, tx.grad(_rnn, argnums=(0, 1))(W, U, xs), rtol=1e-12)


def _loop_over_layers(params, x):
    for layer in params:
        x = np.tanh(x @ layer["W"] + layer["b"])
    return np.sum(x)


def test_loop_over_a_list_of_parameter_dicts_is_unrolled():
    rng = np.random.default_rng(4)
    params = [{"W": rng.standard_normal((3, 3)), "b": rng.standard_normal(3)}
              for _ in range(3)]
    x = rng.standard_normal((2, 3))
    _allclose(tx.jit(tx.grad(_loop_over_layers))(params, x),
              tx.grad(_loop_over_layers)(params, x), rtol=1e-12)


# ---------------------------------------------------------------------------
# disable_jit
# ---------------------------------------------------------------------------

def test_disable_jit_runs_the_python_stage():
    jitted = tx.jit(tx.grad(_cube_sum))
    x = np.array([1.0, 2.0])
    with tx.disable_jit():
        np.testing.assert_allclose(jitted(x), 3 * x ** 2)
    assert jitted._last is None and not jitted._cache
    np.testing.assert_allclose(jitted(x), 3 * x ** 2)
    assert jitted._last is not None


# ---------------------------------------------------------------------------
# Bad inputs: clear errors naming the user's line
# ---------------------------------------------------------------------------

def _scaled(x, mode):
    return np.sum(x) * 2.0


def _line_of(marker):
    with open(__file__) as f:
        for i, line in enumerate(f, 1):
            if marker in line and "_line_of" not in line:
                return i
    raise AssertionError(marker)


def test_string_argument_not_marked_static_is_a_located_error():
    jitted = tx.jit(_scaled)
    with pytest.raises(tx.TransformError) as info:
        jitted(np.ones(3), "fast")  # CALL-WITH-STRING
    message = str(info.value)
    assert f"test_jit.py:{_line_of('CALL-WITH-STRING')}" in message
    assert "mode" in message and "str" in message and "static" in message
    assert tx.jit(_scaled, static_argnames="mode")(np.ones(3), "fast") == 6.0


def _weighted(params, x):
    return np.sum(params["w"] * x) * params["scale"]


def test_dict_with_mixed_value_types():
    """Arrays and numbers mix freely (each leaf its own argument); a string
    leaf is a located error naming the key."""
    x = np.array([1.0, 2.0])
    params = {"w": np.array([0.5, -1.0]), "scale": 3.0}
    np.testing.assert_allclose(tx.jit(_weighted)(params, x), _weighted(params, x))
    np.testing.assert_allclose(tx.jit(tx.grad(_weighted))(params, x)["w"], 3.0 * x)
    with pytest.raises(tx.TransformError) as info:
        tx.jit(_weighted)({"w": x, "scale": 3.0, "name": "relu"}, x)  # MIXED-DICT
    message = str(info.value)
    assert f"test_jit.py:{_line_of('MIXED-DICT')}" in message
    assert "params['name']" in message and "str" in message and "static" in message


def test_unhashable_static_argument_is_a_located_error():
    jitted = tx.jit(_layer, static_argnames="config")
    with pytest.raises(tx.TransformError) as info:
        jitted(np.ones(2), {"relu": True, "scale": 1.0})  # UNHASHABLE-STATIC
    message = str(info.value)
    assert f"test_jit.py:{_line_of('UNHASHABLE-STATIC')}" in message
    assert "config" in message and "hashable" in message


def _median_rows(x):
    m = np.median(x, axis=0)  # NUMBA-CANNOT
    return np.sum(m * m)


def test_numba_typing_failure_names_the_users_line_not_a_numba_traceback():
    x = np.arange(6.0).reshape(2, 3)
    with pytest.raises(tx.TransformError) as info:
        tx.jit(_median_rows)(x)
    message = str(info.value)
    assert f"test_jit.py:{_line_of('NUMBA-CANNOT')}" in message
    assert "median" in message and "disable_jit" in message
    # x is an array (it cannot be static): no advice to mark it so
    assert "static" not in info.value.hint
    assert "Traceback" not in message
    assert info.value.__cause__ is None
    with tx.disable_jit():
        np.testing.assert_allclose(tx.jit(_median_rows)(x), _median_rows(x))


def test_dynamic_index_into_a_container_is_a_located_error():
    def pick(params, i):
        return params[i] * 2.0  # PICK-DYNAMIC

    with pytest.raises(tx.TransformError) as info:
        tx.jit(pick)([np.ones(2), np.zeros(2)], 1)
    assert f"test_jit.py:{_line_of('PICK-DYNAMIC')}" in str(info.value)
    assert "static" in str(info.value)
    np.testing.assert_allclose(tx.jit(pick, static_argnums=1)([np.ones(2), np.zeros(2)], 1),
                               np.zeros(2))


# ---------------------------------------------------------------------------
# Files and caches: never stale, reused across processes
# ---------------------------------------------------------------------------

def _load(path, name):
    import importlib.util
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_changed_function_body_never_reuses_stale_code(tmp_path):
    path = tmp_path / "model.py"
    x = np.array([1.0, 2.0])
    path.write_text("import numpy as np\n\ndef f(x):\n    return np.sum(x * x)\n")
    first = _load(str(path), "jit_model_v1")
    j1 = tx.jit(tx.grad(first.f))
    np.testing.assert_allclose(j1(x), 2 * x)
    import linecache
    path.write_text("import numpy as np\n\ndef f(x):\n    return np.sum(x * x * x)\n")
    linecache.checkcache(str(path))
    second = _load(str(path), "jit_model_v2")
    j2 = tx.jit(tx.grad(second.f))
    np.testing.assert_allclose(j2(x), 3 * x ** 2)
    assert j1._last.path != j2._last.path
    np.testing.assert_allclose(tx.jit(second.f)(x), 9.0)


_CHILD = textwrap.dedent("""
    import sys, numpy as np
    sys.path[:0] = [{root!r}, {examples!r}]
    import tangent_x as tx
    from mlp import loss
    rng = np.random.default_rng(0)
    n_in, n_hidden, n_out, batch = {sizes!r}
    params = [{{"W": rng.standard_normal((n_hidden, n_in)), "b": rng.standard_normal(n_hidden)}},
              {{"W": rng.standard_normal((n_out, n_hidden)), "b": rng.standard_normal(n_out)}}]
    x, y = rng.standard_normal((batch, n_in)), rng.standard_normal((batch, n_out))
    jitted = tx.jit(tx.grad(loss))
    g = jitted(params, x, y)
    want = tx.grad(loss)(params, x, y)
    np.testing.assert_allclose(g[0]["W"], want[0]["W"], rtol=1e-10, atol=1e-12)
    print(len(jitted._last.dispatcher.stats.cache_hits), repr(float(np.sum(g[0]["W"]))))
""")


@pytest.mark.parametrize("sizes", [(5, 8, 3, 4), (400, 300, 3, 200)], ids=["kernel", "blas"])
def test_second_process_loads_compiled_code_from_numbas_disk_cache(tmp_path, sizes):
    """The second process runs what the first compiled (cache hits, the same
    bits).  With the larger sizes, x @ W.T is 200 x 400 x 300 multiply-adds,
    past the matrix kernel's hand-over to dgemm, whose address differs per
    process: cached code must call it by name."""
    env = dict(os.environ, TANGENT_X_CACHE_DIR=str(tmp_path))
    code = _CHILD.format(root=ROOT, examples=os.path.join(ROOT, "examples"), sizes=sizes)
    runs = [subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                           text=True, timeout=300) for _ in range(2)]
    for run in runs:
        assert run.returncode == 0, run.stderr[-2000:]
    (hits_1, value_1), (hits_2, value_2) = (run.stdout.split() for run in runs)
    assert int(hits_1) == 0 and int(hits_2) >= 1
    assert value_1 == value_2


# ---------------------------------------------------------------------------
# CLI
# ---------------------------------------------------------------------------

_CLOSURES = """
import numba
def make(c):
    @numba.njit(cache=True)
    def f(x):
        return x * c
    return f
"""

_COMPILE_RANGE = """
import sys
sys.path.insert(0, {root!r})
sys.path.insert(0, {here!r})
import tangent_x  # noqa: F401  (installs the locked disk cache)
import closures
start, stop = map(int, sys.argv[1:3])
print(sum(closures.make(k)(1.0) != k for k in range(start, stop)))
"""


def test_processes_compiling_at_once_share_the_disk_cache(tmp_path):
    """Numba adds a version to a cache index without a lock: processes
    compiling closures of one ``def`` at once could take the same data file,
    and a later process loaded another closure's code (1-2 of 40 wrong in
    about half the runs before numba_stage/disk_cache.py).  Four processes
    compile ten closures each at once; a fifth loads all forty."""
    (tmp_path / "closures.py").write_text(_CLOSURES)
    script = _COMPILE_RANGE.format(root=ROOT, here=str(tmp_path))
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "numba"))
    run = [sys.executable, "-c", script]
    procs = [subprocess.Popen(run + [str(10 * p), str(10 * p + 10)], env=env,
                              stdout=subprocess.PIPE, text=True) for p in range(4)]
    for proc in procs:
        out, _ = proc.communicate(timeout=300)
        assert proc.returncode == 0 and out.strip() == "0"
    check = subprocess.run(run + ["0", "40"], env=env, capture_output=True, text=True,
                           timeout=300)
    assert check.returncode == 0, check.stderr[-2000:]
    assert check.stdout.strip() == "0", "a process loaded another closure's compiled code"


_ONE_OF = """
import sys
sys.path.insert(0, {root!r})
sys.path.insert(0, {here!r})
import numpy as np
import tangent_x as tx
import callers
x = np.linspace(0.1, 1.0, 3)
for name in sys.argv[1:]:
    got = tx.jit(getattr(callers, name))(x)
    print(name, int(np.allclose(got, getattr(np, name)(x), rtol=1e-12)))
"""

_CALLERS = """
import numpy as np
def tanh(x):
    return np.tanh(x)
def log1p(x):
    return np.log1p(x)
"""


def test_callers_compiled_by_two_processes_keep_their_own_callees(tmp_path):
    """Numba names a compiled function by its qualified name and a number
    counted from 1 in each process: two processes compiling ``jit`` of
    ``np.tanh`` and of ``np.log1p`` gave vmath's array loop (one closure
    ``def`` for both) one symbol name, and a third process loading both
    from the disk cache ran ``log1p``'s loop for ``tanh`` (disk_cache.py:
    the count now starts at a random number in each process; without that,
    this test fails)."""
    (tmp_path / "callers.py").write_text(_CALLERS)
    script = _ONE_OF.format(root=ROOT, here=str(tmp_path))
    # (at Numba's level 0 the loop stays a function of its own; at 3 LLVM
    # inlines this one, but not every callee is inlined)
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "numba"),
               TANGENT_X_CACHE_DIR=str(tmp_path / "generated"), NUMBA_OPT="0")
    for names in (["tanh"], ["log1p"], ["log1p", "tanh"]):
        run = subprocess.run([sys.executable, "-c", script] + names, env=env,
                             capture_output=True, text=True, timeout=300)
        assert run.returncode == 0, run.stderr[-2000:]
        assert run.stdout.split() == [w for n in names for w in (n, "1")], run.stdout


def test_cli_prints_the_numba_stage(capsys):
    from tangent_x import cli
    mlp = os.path.join(ROOT, "examples", "mlp.py")
    assert cli.main(["jit", f"{mlp}:loss", "--transform", "grad"]) == 0
    out = capsys.readouterr().out
    assert "numba stage of grad of loss" in out and "def grad_loss(params, x, y):" in out
    example = ("([{'W': np.ones((4, 3)), 'b': np.ones(4)}, {'W': np.ones((2, 4)), "
               "'b': np.ones(2)}], np.ones((5, 3)), np.ones((5, 2)))")
    assert cli.main(["jit", f"{mlp}:loss", "--transform", "grad",
                     "--example-args", example]) == 0
    out = capsys.readouterr().out
    assert "def grad_loss(params_0_W, params_0_b, params_1_W, params_1_b, x, y):" in out
    assert cli.main(["jit", f"{mlp}:loss"]) == 0
    assert "def loss(params, x, y):" in capsys.readouterr().out


def _quartic(x):
    return np.sum(x ** 4 + np.sin(x) * x)


def _pair(x, y):
    return np.sum(x * np.cos(y)) + np.sum(x ** 3)


def _hvp(x, v):
    # JAX's forward-over-reverse hvp, written inside the jitted function
    return tx.jvp(tx.grad(_quartic), (x,), (v,))[1]


def test_jvp_called_inside_jit_grad_and_vmap():
    """``tx.jvp(f, primals, tangents)`` inside a transformed function, as JAX
    allows: f's jvp code is made when transforming and inlined, under jit,
    grad and vmap; ``jvp(grad(f), ...)`` is an hvp, and ``partial(f, x)``
    binds a value of the code."""
    x, v = np.array([0.5, -1.0, 2.0]), np.array([1.0, 0.0, -2.0])
    u, w = np.array([0.3, 0.2, -0.1]), np.array([-1.0, 0.5, 0.25])
    both = tx.jit(lambda x, v, u, w: (tx.jvp(_pair, (x, u), (v, w)), _hvp(x, v),
                                      tx.jvp(partial(_pair, x), (u,), (w,))[1]))
    (out, tangent), hv, along_u = both(x, v, u, w)
    assert out == pytest.approx(_pair(x, u), rel=1e-13)
    eps = 1e-6
    fd = (_pair(x + eps * v, u + eps * w) - _pair(x - eps * v, u - eps * w)) / (2 * eps)
    assert tangent == pytest.approx(fd, rel=1e-7)
    fd_u = (_pair(x, u + eps * w) - _pair(x, u - eps * w)) / (2 * eps)   # x bound by partial
    assert along_u == pytest.approx(fd_u, rel=1e-7)
    hess = np.diag(12.0 * x ** 2 + 2.0 * np.cos(x) - x * np.sin(x))   # by hand
    np.testing.assert_allclose(hv, hess @ v, rtol=1e-12)
    with tx.disable_jit():
        np.testing.assert_allclose(both(x, v, u, w)[1], hv, rtol=1e-14)
    # reverse over forward-over-reverse, and per example
    g = tx.grad(lambda x: np.sum(_hvp(x, v)))(x)
    np.testing.assert_allclose(g, (24.0 * x - 3.0 * np.sin(x) - x * np.cos(x)) * v, rtol=1e-12)
    xs = np.stack([x, -x])
    np.testing.assert_allclose(tx.vmap(_hvp, in_axes=(0, None))(xs, v),
                               np.stack([tx.hessian(_quartic)(e) @ v for e in xs]), rtol=1e-12)
    # JAX's idiom for a jvp in some of the arguments: a lambda calling f
    g = tx.grad(lambda x: tx.jvp(lambda y: _pair(x, y), (u,), (w,))[1])(x)
    np.testing.assert_allclose(g, -np.sin(u) * w, rtol=1e-13)


def test_jvp_of_a_lambda_inside_a_transformed_function_is_located():
    def bad(x):
        return tx.jvp(lambda y: np.sin(y) * x, (x,), (x,))[1]  # marker: lambda jvp
    with pytest.raises(tx.TransformError) as info:
        tx.jit(bad)(np.array([0.5]))
    message = str(info.value)
    assert "lambda y: f(a, y)" in message and "module level" in message
    lines, start = inspect.getsourcelines(bad)
    line = start + next(i for i, t in enumerate(lines) if "marker: lambda jvp" in t)
    assert f"test_jit.py:{line}" in message


def test_vjp_of_a_numpy_function_inside_a_transformed_function():
    # (refused before; test_vjp_inside.py has the general case)
    def pulled(x):
        out, pullback = tx.vjp(np.sin, x)
        return pullback(np.ones_like(x) * out)[0]
    x = np.array([0.5, -1.2])
    np.testing.assert_allclose(pulled(x), np.sin(x) * np.cos(x), rtol=1e-15)
    np.testing.assert_allclose(tx.grad(lambda x: np.sum(pulled(x)))(x), np.cos(2 * x),
                               rtol=1e-13)


def test_jit_of_hessian_vector_product_and_has_aux():
    """Forward over reverse compiles like any other generated code."""
    from tangent_x.api.transformed import cached
    hvp = cached(tx.grad(_quartic), "jvp", (0,), lambda out, a: out)
    x, v = np.array([0.5, -1.0, 2.0]), np.array([1.0, 0.0, -2.0])
    grad, hv = tx.jit(hvp)(x, v)
    np.testing.assert_allclose(grad, tx.grad(_quartic)(x), rtol=1e-12)
    np.testing.assert_allclose(hv, tx.hessian(_quartic)(x) @ v, rtol=1e-10)

    def with_aux(x):
        y = np.sin(x)
        return np.sum(y * y), {"y": y, "label": "sin", "n": 3}

    g, aux = tx.jit(tx.grad(with_aux, has_aux=True))(x)
    np.testing.assert_allclose(g, 2 * np.sin(x) * np.cos(x), rtol=1e-12)
    assert aux["label"] == "sin" and aux["n"] == 3
    np.testing.assert_allclose(aux["y"], np.sin(x))


_SCALE = 2.0


def _scaled_by_global(x):
    return np.sum(_SCALE * x * x)


def test_rebinding_a_global_number_recompiles_never_a_stale_disk_cache():
    """A global number is written into the numba stage as a literal: a new
    value is a new module text, so Numba's on-disk cache cannot serve the
    code compiled for the old value."""
    global _SCALE
    x = np.array([1.0, -2.0])
    jitted = tx.jit(tx.grad(_scaled_by_global))
    try:
        np.testing.assert_allclose(jitted(x), 4.0 * x)
        first = jitted._last.path
        _SCALE = 5.0
        np.testing.assert_allclose(jitted(x), 10.0 * x)
        assert jitted._last.path != first
    finally:
        _SCALE = 2.0


# The contraction kernels (numba_stage.contractions) are one loop-nest
# generator; these cover what the corpus does not: repeated letters
# (diagonals), ellipses with broadcast batch axes, scalars out, stacked
# matmul with broadcasting, tensordot over two axes.
_CONTRACTIONS = [
    (lambda a, b: np.sum(np.einsum("ii->i", a) * b), ((3, 3), (3,))),
    (lambda a, b: np.sum(np.einsum("...ij,...jk->...ik", a, b) ** 2), ((2, 1, 3, 2), (4, 2, 3))),
    (lambda a, b: np.einsum("i,i->", a, b) ** 2, ((4,), (4,))),
    (lambda a, b: np.sum(np.sin(a @ b)), ((1, 3, 2), (4, 2, 5))),
    (lambda a, b: np.sum(np.tensordot(a, b, axes=2) ** 2), ((2, 3, 4), (3, 4, 2))),
]


@pytest.mark.slow        # ~20 s each: three kernels compiled per case
@pytest.mark.parametrize("fn, shapes", _CONTRACTIONS)
def test_contractions_compile_to_the_eager_values_and_gradients(fn, shapes):
    rng = np.random.default_rng(7)
    a, b = (rng.standard_normal(s) for s in shapes)
    f = tx.value_and_grad(fn, argnums=(0, 1))
    value, (ga, gb) = tx.jit(f)(a, b)
    expected, (ea, eb) = f(a, b)
    np.testing.assert_allclose(value, expected, rtol=1e-12)
    np.testing.assert_allclose(ga, ea, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(gb, eb, rtol=1e-10, atol=1e-12)


# np.squeeze without axis: the signature includes which axes have size 1
# (numba_stage.unit_axes), only for code that squeezes so.

def _squeezed(x):
    y = np.expand_dims(x, 0) * 2.0
    return np.sum(np.squeeze(y) * x)


def test_squeeze_without_axis_specialises_on_size_one_axes():
    jitted = tx.jit(tx.grad(_squeezed))
    for shape in [(3,), (2, 1), (1, 3), (2, 3)]:
        x = np.random.default_rng(0).standard_normal(shape)
        np.testing.assert_allclose(jitted(x), tx.grad(_squeezed)(x), rtol=1e-12)
    assert len(jitted._cache) == 4                   # four size-1 patterns
    jitted(np.ones((5, 4)))                          # the pattern of (2, 3): no compile
    assert len(jitted._cache) == 4
    plain = tx.jit(tx.grad(_layer), static_argnames="config")
    relu = FrozenDict(relu=True, scale=3.0)
    plain(np.ones((2, 3)), relu)
    plain(np.ones((1, 3)), relu)                     # no squeeze: sizes never matter
    assert len(plain._cache) == 1


def _squeeze_of_a_carry(x, n):
    y = x
    for _ in range(n):
        y = y * 2.0          # keeps y's size-1 axes: an invariant of the loop
    return np.sum(np.squeeze(y) * x)


def _squeeze_of_a_growing_carry(x, n):
    y = x
    for _ in range(n):
        y = np.expand_dims(y[0], 0) + y
    return np.sum(np.squeeze(y))  # SQUEEZE-CARRY


def test_squeeze_of_a_loop_carry_compiles_when_its_size_one_axes_are_invariant():
    x = np.arange(3.0).reshape(1, 3)
    np.testing.assert_allclose(tx.jit(_squeeze_of_a_carry)(x, 3), _squeeze_of_a_carry(x, 3))
    with pytest.raises(tx.TransformError) as info:
        tx.jit(_squeeze_of_a_growing_carry)(np.ones((1, 3)), 2)
    message = str(info.value)
    assert f"test_jit.py:{_line_of('SQUEEZE-CARRY')}" in message and "axis" in message


# numba_stage.shape_ops beyond what the corpus reaches: tuple reps, repeat
# along an axis and by counts, off-diagonals of a stack, scans, flips and
# products along inner axes of 3-d arrays (a zero entry: prod_others exact).
_SHAPE_OPS = [
    (lambda x: np.sum(np.tile(x, (2, 1, 3)) ** 2), (2, 3)),
    (lambda x: np.sum(np.repeat(x, 2, axis=1) ** 3), (2, 3)),
    (lambda x: np.sum(np.repeat(x, np.array([1, 0, 2]), axis=0) ** 3), (3, 2)),
    (lambda x: np.sum(np.diagonal(x, 1, 0, 2) ** 2), (3, 2, 4)),
    (lambda x: np.sum(np.diagonal(x, -1) ** 2), (3, 3)),
    (lambda x: np.sum(np.cumsum(x, axis=1) * x), (2, 3, 2)),
    (lambda x: np.sum(np.flip(x, -1) * np.arange(x.size).reshape(x.shape)), (2, 2, 3)),
    (lambda x: np.sum(np.prod(x, axis=1) * 2.0), (2, 3, 2)),
]


@pytest.mark.slow        # several kernels compiled per case
@pytest.mark.parametrize("fn, shape", _SHAPE_OPS)
def test_shape_ops_compile_to_the_eager_values_and_gradients(fn, shape):
    x = np.random.default_rng(3).standard_normal(shape)
    x.reshape(-1)[1] = 0.0
    f = tx.value_and_grad(fn)
    value, grad = tx.jit(f)(x)
    expected, expected_grad = f(x)
    np.testing.assert_allclose(value, expected, rtol=1e-12)
    np.testing.assert_allclose(grad, expected_grad, rtol=1e-10, atol=1e-12)


def _squeezed_tanh(x):
    return np.sum(np.squeeze(np.tanh(np.expand_dims(x, -1))) * x)


def test_squeeze_without_axis_sees_through_elementwise_functions():
    x = np.linspace(-1.0, 1.0, 4).reshape(1, 4)
    np.testing.assert_allclose(tx.jit(tx.grad(_squeezed_tanh))(x), tx.grad(_squeezed_tanh)(x),
                               rtol=1e-12)


# ---------------------------------------------------------------------------
# The fast path: after a call with arrays and numbers only, the jitted
# function becomes a guard written for that signature
# ---------------------------------------------------------------------------

def _has_fast_path(jitted):
    from tangent_x.numba_stage.compile import Jitted
    if isinstance(jitted, Jitted):        # jit(vmap(f)): an instance, its class's __call__
        return "__call__" in type(jitted).__dict__
    # what jit returns is a function whose code is swapped for the fast path
    return jitted.__code__ is not jitted._general_code


def _sum_of_squares(x):
    return np.sum(x * x)


def test_fast_path_compiles_again_for_a_new_type_rank_or_dtype():
    jitted, eager = tx.jit(tx.grad(_sum_of_squares)), tx.grad(_sum_of_squares)
    cases = [1.5, np.array([1.0, -2.0]), np.arange(6.0).reshape(2, 3),
             np.array(3.0), np.array([1.0, 2.0], dtype=np.float32), np.float32(0.25),
             -1.5, np.arange(4.0)[::2], np.asfortranarray(np.ones((2, 3)))]
    for x in cases + cases[::-1]:
        for _ in range(2):          # the second call goes through the fast path
            got = jitted(x)
            want = eager(x)
            assert type(got) is type(want) and np.shape(got) == np.shape(x)
            assert np.result_type(got) == np.result_type(want)
            np.testing.assert_allclose(got, want, rtol=1e-6)
            assert _has_fast_path(jitted)
    for bad in (np.array([1, 2]), 3):         # grad's input check, also after fast calls
        with pytest.raises(TypeError, match="float"):
            jitted(bad)


def _triple(x):
    return x * 3


def test_fast_path_keeps_the_type_of_a_plain_functions_result():
    jitted = tx.jit(_triple)
    assert jitted(2.0) == 6.0 and type(jitted(2.0)) is float
    got = jitted(2)                           # an int is not run as a float
    assert got == 6 and isinstance(got, int)
    assert jitted(True) == 3
    got = jitted(np.arange(3))
    assert got.dtype == np.arange(3).dtype and list(got) == [0, 3, 6]
    np.testing.assert_allclose(jitted(np.ones((2, 2))), 3 * np.ones((2, 2)))


def _dot_sum(x, y):
    return np.sum(x * y)


def _plus_sum(x, y):
    return np.sum(x + y)


def test_fast_path_gradients_never_share_memory_with_the_arguments():
    jitted = tx.jit(tx.grad(_dot_sum, argnums=(0, 1)))
    x, y = np.array([1.0, 2.0]), np.array([3.0, -1.0])
    for _ in range(3):
        gx, gy = jitted(x, y)
        np.testing.assert_allclose(gx, y)
        np.testing.assert_allclose(gy, x)
        assert not np.shares_memory(gx, y) and not np.shares_memory(gy, x)
        assert gx.flags.writeable and gy.flags.writeable
    assert _has_fast_path(jitted)
    # both gradients are one buffer in the compiled code: one is copied
    both = tx.jit(tx.grad(_plus_sum, argnums=(0, 1)))
    for _ in range(3):
        gx, gy = both(x, y)
        np.testing.assert_allclose(gx, np.ones(2))
        np.testing.assert_allclose(gy, np.ones(2))
        assert not np.shares_memory(gx, gy)
        gx[0] = 5.0
        assert gy[0] == 1.0
    assert _has_fast_path(both)


def _loss_with_aux(x, y):
    return x * x * y, x + y


def test_fast_path_of_value_and_grad_and_has_aux():
    vg = tx.jit(tx.value_and_grad(_loss_with_aux, argnums=(0, 1), has_aux=True))
    g = tx.jit(tx.grad(_loss_with_aux, has_aux=True))
    for _ in range(3):
        (value, aux), (gx, gy) = vg(2.0, 3.0)
        assert (value, aux, gx, gy) == (12.0, 5.0, 12.0, 4.0)
        assert all(type(v) is float for v in (value, aux, gx, gy))
        grad, aux = g(2.0, 3.0)
        assert (grad, aux) == (12.0, 5.0) and type(grad) is float
    assert _has_fast_path(vg) and _has_fast_path(g)
    plain = tx.jit(tx.value_and_grad(_sum_of_squares))
    for _ in range(2):
        value, grad = plain(np.array([1.0, 2.0]))
        assert value == 5.0
        np.testing.assert_allclose(grad, [2.0, 4.0])


def _scaled_power(x, n=3):
    return x ** n


def test_fast_path_binds_keywords_and_reports_missing_arguments():
    jitted = tx.jit(_scaled_power)
    assert jitted(2.0, 2) == 4.0 and _has_fast_path(jitted)
    assert jitted(2.0, n=2) == 4.0 and jitted(x=3.0, n=2) == 9.0 and jitted(n=2, x=5.0) == 25.0
    assert jitted(2.0) == 8.0                        # the default, through the general path
    with pytest.raises(TypeError, match="x"):
        jitted(n=2)
    with pytest.raises(TypeError):
        jitted(2.0, 2, 1)
    assert jitted(2.0, 2) == 4.0 and _has_fast_path(jitted)


_FACTOR = 2.0


def _times_factor(x):
    return np.sum(_FACTOR * x * x)


class _Settings:
    power = 2.0


def _settings_power(x):
    return x ** _Settings.power


def _helper(x):
    return x * x


def _calls_helper(x):
    return _helper(x) + 1.0


def test_fast_path_never_runs_stale_code_after_a_rebinding():
    """Globals, attributes and helper functions the code was built from are
    checked on every call, the fast path included: a new value compiles
    again, the old value back reuses nothing stale."""
    global _FACTOR, _helper
    x = np.array([1.0, -2.0])
    scaled = tx.jit(tx.grad(_times_factor))
    powered = tx.jit(_settings_power)
    helped = tx.jit(_calls_helper)
    old_helper = _helper
    try:
        for _ in range(2):
            np.testing.assert_allclose(scaled(x), 4.0 * x)
            assert powered(3.0) == 9.0 and helped(3.0) == 10.0
        assert _has_fast_path(scaled) and _has_fast_path(powered) and _has_fast_path(helped)
        _FACTOR, _Settings.power = 5.0, 3.0
        _helper = lambda x: x * x * x  # noqa: E731
        for _ in range(2):
            np.testing.assert_allclose(scaled(x), 10.0 * x)
            assert powered(3.0) == 27.0 and helped(3.0) == 28.0
        _FACTOR, _Settings.power, _helper = 2.0, 2.0, old_helper
        np.testing.assert_allclose(scaled(x), 4.0 * x)
        assert powered(3.0) == 9.0 and helped(3.0) == 10.0
    finally:
        _FACTOR, _Settings.power, _helper = 2.0, 2.0, old_helper


def test_fast_path_never_runs_stale_code_after_a_closure_changes():
    scale = 2.0

    def f(x):
        return x * scale

    jitted = tx.jit(tx.grad(f))
    assert jitted(1.0) == 2.0 and jitted(1.0) == 2.0 and _has_fast_path(jitted)
    scale = 7.0
    assert jitted(1.0) == 7.0 and jitted(1.0) == 7.0


def test_fast_path_steps_aside_under_disable_jit(monkeypatch):
    from tangent_x.api import transformed as api
    jitted = tx.jit(tx.grad(_sum_of_squares))
    x = np.array([1.0, 3.0])
    jitted(x)
    assert _has_fast_path(jitted)
    eager_calls = []
    original = api.Transformed.__call__

    def counting(self, *args, **kwargs):
        eager_calls.append(self)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(api.Transformed, "__call__", counting)
    with tx.disable_jit():
        assert not _has_fast_path(jitted)
        np.testing.assert_allclose(jitted(x), 2 * x)
        np.testing.assert_allclose(jitted(x), 2 * x)
        with tx.disable_jit(False):           # compiled again, but no fast path inside
            np.testing.assert_allclose(jitted(x), 2 * x)
            assert not _has_fast_path(jitted)
    assert len(eager_calls) == 2
    np.testing.assert_allclose(jitted(x), 2 * x)
    np.testing.assert_allclose(jitted(x), 2 * x)
    assert len(eager_calls) == 2 and _has_fast_path(jitted)


def _rows_total(x):
    s = 0.0
    for v in x:  # ROWS-TOTAL
        s = s + v
        if s is None:   # (a loop that may break: its first turn does not run apart)
            break
    return s


def test_errors_on_the_fast_path_are_the_general_paths_errors():
    jitted = tx.jit(tx.grad(_triple))
    assert jitted(np.array(2.0)) == 3.0 and _has_fast_path(jitted)
    with pytest.raises(TypeError, match="scalar-output"):   # raised by the compiled code
        jitted(np.array([1.0, 2.0]))
    summed = tx.jit(_rows_total)
    assert summed(np.array([1.0, 2.0])) == 3.0 and _has_fast_path(summed)
    with pytest.raises(tx.TransformError) as info:         # Numba cannot type a new rank
        summed(np.ones((2, 2)))
    assert f"test_jit.py:{_line_of('ROWS-TOTAL')}" in str(info.value)
    assert "Traceback" not in str(info.value)


def test_fast_path_of_a_pytree_signature_checks_the_structure():
    """A call with containers of arrays and numbers gets a fast path too
    (the MLP's list of dicts: ~40 us of flattening a call less); it checks
    each container's type, length and keys in order, and each leaf's type,
    dtype and rank, and steps aside for any other structure."""
    jitted = tx.jit(tx.grad(_weighted))
    params, x = {"w": np.array([0.5, -1.0]), "scale": 3.0}, np.array([1.0, 2.0])
    g = tx.jit(tx.grad(_dot_sum))
    np.testing.assert_allclose(g(x, x), x)
    assert _has_fast_path(g)
    for _ in range(2):
        got = jitted(params, x)
        assert list(got) == ["scale", "w"] and type(got["scale"]) is float   # sorted, as JAX
        np.testing.assert_allclose(got["w"], 3.0 * x)
        assert _has_fast_path(jitted)
    others = [{"scale": 3.0, "w": np.array([0.5, -1.0])},              # key order
              {"w": np.array([0.5, -1.0], np.float32), "scale": 3.0},  # dtype
              {"w": np.array([[0.5, -1.0]]), "scale": 3.0},            # rank
              {"w": np.array([0.5, -1.0]), "scale": 3.0, "extra": 1.0}]   # keys
    for other in others:
        want = tx.grad(_weighted)(other, x)
        got = jitted(other, x)
        assert list(got) == list(want)
        for k in want:
            np.testing.assert_allclose(got[k], want[k], rtol=1e-6)
        got = jitted(params, x)                     # and back
        np.testing.assert_allclose(got["w"], 3.0 * x)


def _stack_refill(x):
    stack = []
    for i in range(4):
        stack.append(x * i)
    total = 0.0
    for i in range(2):
        total = total + stack.pop()
    for i in range(3):
        stack.append(x + i)          # pushed after pops
    for i in range(len(stack)):
        total = total * 0.5 + stack.pop() * x
    return total


def _stack_peek(x):
    stack = []
    for i in range(4):
        stack.append(x + i)
    top = stack[-1]
    return top * stack.pop() + len(stack)


def test_lists_used_as_stacks_push_after_pop():
    """A list only pushed, popped and measured is kept with its size in
    compiled code (pops do not shrink it): pushes after pops overwrite, and
    len() is the size; a list read otherwise stays a plain list.  (Tapes
    of generated gradients are such stacks: the control-flow corpus checks
    them under jit.)"""
    for f in (_stack_refill, _stack_peek):
        for x in (0.5, -1.25):
            assert tx.jit(f)(x) == pytest.approx(f(x), rel=1e-12)
    def code(f):        # the statements (comments quote the user's lines)
        return "\n".join(line for line in tx.jit(f).numba_source(0.5).splitlines()
                         if not line.strip().startswith("#"))
    assert "_size]" in code(_stack_refill) and ".pop()" not in code(_stack_refill)
    assert ".pop()" in code(_stack_peek)


def _sum_from_int(x, n):
    acc = 0                       # an int before the loop, a float in it
    for i in range(n):
        acc = acc + x * x * i
    return acc + 0.0 * x          # (a float even when the loop never ran: grad of
                                  # an int output is JAX's TypeError)


def _steps_to_double(x):
    k = 0
    y = x
    while y < 2.0:
        y = y * 1.01 + k * 1e-3
        k = k + 1
    return y


def test_number_tapes_grow_and_take_a_carry_first_typed_narrower():
    """A tape of numbers is a NumPy array (numba_runtime.grown), allocated
    at the first push and doubled when full: a long loop grows it many
    times, a loop that never runs leaves it unallocated, and a carry Numba
    first types as an int and then as a float still compiles."""
    for n in (0, 1, 16, 17, 1000):
        got = tx.jit(tx.grad(_sum_from_int))(1.5, n)
        assert got == pytest.approx(tx.grad(_sum_from_int)(1.5, n), rel=1e-12)
    for x in (0.3, 1.0, 1.99, 2.5):
        got = tx.jit(tx.grad(_steps_to_double))(x)
        assert got == pytest.approx(tx.grad(_steps_to_double)(x), rel=1e-10)
    text = tx.jit(tx.grad(_steps_to_double)).numba_source(0.3)
    assert "k_tape = grown(k_tape, k)" in text and ".append(" not in text


def test_jit_of_vmap_keeps_its_own_call_path():
    """jit(vmap(f)) chooses per call between batched code and a loop over
    examples: no fast path replaces that choice."""
    jitted = tx.jit(tx.vmap(_sum_of_squares))
    X = np.arange(6.0).reshape(3, 2)
    for _ in range(3):
        np.testing.assert_allclose(jitted(X), np.sum(X * X, axis=1))
    assert not _has_fast_path(jitted)


# ---------------------------------------------------------------------------
# Matrix products: numba_runtime's kernel (x @ W.T layouts, in blocks of 4 x 4
# with leftover rows and columns) and BLAS (every other layout) against NumPy
# ---------------------------------------------------------------------------

def _matmul(a, b):
    return a @ b


def _np_matmul(a, b):
    return np.matmul(a, b)


def _np_dot(a, b):
    return np.dot(a, b)


def _layout(m, kind):
    """``m``'s values in another memory layout (what Numba types as C, F or A)."""
    if kind == "C":
        return np.ascontiguousarray(m)
    if kind == "F":
        return np.asfortranarray(m)
    wide = np.zeros((m.shape[0], 2 * m.shape[1] + 1))      # every other column: 'A'
    wide[:, 1::2] = m
    return wide[:, 1::2]


@pytest.mark.parametrize("m, k, n", [(1, 1, 1), (5, 7, 3), (4, 4, 4), (9, 130, 6),
                                     (70, 200, 45), (3, 0, 2), (0, 3, 2), (6, 1, 1)])
@pytest.mark.parametrize("layouts", ["CC", "CF", "FC", "FF", "AC", "CA"])
def test_matrix_products_under_jit_match_numpy(m, k, n, layouts):
    rng = np.random.default_rng(m * 100 + k * 10 + n)
    a, b = rng.standard_normal((m, k)), rng.standard_normal((k, n))
    a_, b_ = _layout(a, layouts[0]), _layout(b, layouts[1])
    want = a @ b
    for fn in (_matmul, _np_matmul, _np_dot):
        got = tx.jit(fn)(a_, b_)
        assert got.shape == want.shape and got.dtype == np.float64
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("m, k, n", [(260, 250, 270), (1, 70000, 300), (300, 70, 900)])
@pytest.mark.parametrize("layouts", ["CC", "CF", "FC", "FF", "AC", "CA"])
def test_large_matrix_products_under_jit_run_in_blas_and_match_numpy(m, k, n, layouts):
    from tangent_x.numba_stage import numba_runtime
    assert m * k * n > numba_runtime._BLAS_WORK        # the dgemm path, not the kernel
    rng = np.random.default_rng(m + k + n)
    a, b = rng.standard_normal((m, k)), rng.standard_normal((k, n))
    a_, b_ = _layout(a, layouts[0]), _layout(b, layouts[1])
    want = a @ b
    got = tx.jit(_matmul)(a_, b_)
    assert got.shape == want.shape and got.flags.c_contiguous
    np.testing.assert_allclose(got, want, rtol=1e-11, atol=1e-11)


def test_large_matrix_products_of_views_under_jit_match_numpy():
    """Views BLAS cannot read in place (reversed, every other element,
    broadcast rows: stride 0) are copied first; a slice of a larger matrix
    is read in place with its leading dimension."""
    from tangent_x.numba_stage import numba_runtime
    rng = np.random.default_rng(5)
    big = rng.standard_normal((600, 700))
    views = [(big[:300, :250], big[100:350, 300:600]),
             (big[::-2, ::3][:280, :233], big[:233, ::-1][:, :300]),
             (big[:300, :250].T, big[:300, 250:550]),
             (np.broadcast_to(big[0, :600], (300, 600)), big[:, 100:400].T.copy().T)]
    for a, b in views:
        assert a.shape[0] * a.shape[1] * b.shape[1] > numba_runtime._BLAS_WORK
        np.testing.assert_allclose(tx.jit(_matmul)(a, b), a @ b, rtol=1e-11, atol=1e-11)


def test_matrix_products_of_other_dtypes_and_ranks_under_jit_match_numpy():
    rng = np.random.default_rng(3)
    a32, b32 = rng.standard_normal((5, 6)).astype(np.float32), \
        rng.standard_normal((6, 3)).astype(np.float32)
    got = tx.jit(_matmul)(a32, b32)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, a32 @ b32, rtol=1e-5)
    a, v = rng.standard_normal((5, 6)), rng.standard_normal(6)
    np.testing.assert_allclose(tx.jit(_matmul)(a, v), a @ v, rtol=1e-12)
    np.testing.assert_allclose(tx.jit(_matmul)(v, a.T), v @ a.T, rtol=1e-12)


def test_matrix_product_with_mismatched_inner_dimensions_raises_under_jit():
    with pytest.raises(ValueError):
        tx.jit(_matmul)(np.ones((3, 4)), np.ones((5, 2)))


def _two_products(W, V, x):
    h = np.tanh(x @ W.T)
    return np.sum((h @ V) ** 2)


@pytest.mark.parametrize("batch, n_in, n_hidden, n_out",
                         [(16, 5, 8, 3), (1, 1, 1, 1), (7, 33, 9, 1), (130, 70, 13, 6)])
def test_gradient_through_matrix_products_under_jit_matches_eager(batch, n_in, n_hidden,
                                                                  n_out):
    rng = np.random.default_rng(batch)
    W, V = rng.standard_normal((n_hidden, n_in)), rng.standard_normal((n_hidden, n_out))
    x = rng.standard_normal((batch, n_in))
    want = tx.grad(_two_products, argnums=(0, 1, 2))(W, V, x)
    got = tx.jit(tx.grad(_two_products, argnums=(0, 1, 2)))(W, V, x)
    _allclose(got, want, rtol=1e-10, atol=1e-12)


def _rank_scaled(x):
    return np.sum(x * x) * x.ndim


def test_fast_path_checks_the_rank_that_the_signature_folds_in():
    # x.ndim is a constant of each specialisation: after a fast call with a
    # vector, a matrix of the same dtype must take its own specialisation
    jitted = tx.jit(tx.value_and_grad(_rank_scaled))
    for shape in [(3,), (3,), (2, 2), (2, 2), (3,)]:
        x = np.arange(1.0, 1.0 + np.prod(shape)).reshape(shape)
        value, grad = jitted(x)
        assert value == pytest.approx(np.sum(x * x) * x.ndim)
        np.testing.assert_allclose(grad, 2 * x * x.ndim)


def test_flat_helpers_are_compiled_per_dtype_of_what_they_fill():
    """numba_runtime's generated helpers that fill an array with a number
    read the number's dtype from their globals: the same text with another
    dtype is another function (a cache keyed by text alone once handed a
    float cotangent the bool helper, and a Hessian came out zero)."""
    import numba
    from tangent_x import runtime
    from tangent_x.numba_stage import numba_runtime  # noqa: F401 (the overloads)

    @numba.njit
    def unbroadcast(g, x):
        return runtime.unbroadcast(g, x)

    @numba.njit
    def unreduce(g, x):
        return runtime.unreduce(g, x)

    x = np.zeros((2, 3))
    for g in (True, 3, 2.5):
        for fn in (unbroadcast, unreduce):
            got = fn(g, x)
            want = np.full(x.shape, g)
            assert got.dtype == want.dtype and np.array_equal(got, want)


def test_a_call_through_an_empty_kernel_slot_raises_instead_of_crashing():
    """Compiled products call the kernel through a slot filled when it is
    loaded (numba_stage/beside.py); code
    that somehow runs before must raise, not jump to address 0."""
    from tangent_x.numba_stage import numba_runtime
    a, b = np.ones((3, 4)), np.ones((4, 2))
    jitted = tx.jit(_matmul)
    np.testing.assert_allclose(jitted(a, b), a @ b)
    slot = numba_runtime.MATMUL.slot
    address = slot.value
    slot.value = 0
    try:
        with pytest.raises(Exception, match="kernel 'matmul_f64' was not loaded"):
            jitted(a, b)
    finally:
        slot.value = address
    np.testing.assert_allclose(jitted(a, b), a @ b)


# a gradient through both kernels compiled beside the caller (beside.py):
# the product and vmath's tanh loop, checked against eager grad
_KERNELS_SCRIPT = textwrap.dedent("""
    import numpy as np, tangent_x as tx
    from tangent_x.numba_stage import numba_runtime
    def f(a, b):
        return np.sum(np.tanh(a @ b.T))
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=(9, 13)), rng.normal(size=(5, 13))
    g = tx.jit(tx.grad(f, argnums=(0, 1)))(a, b)
    want = tx.grad(f, argnums=(0, 1))(a, b)
    for x, y in zip(g, want):
        np.testing.assert_allclose(x, y, rtol=1e-12, atol=1e-13)
""")


@pytest.mark.parametrize("background", ["1", "0"])
def test_the_kernel_compiled_beside_a_new_process_or_in_it_gives_the_product(tmp_path,
                                                                             background):
    """A process with empty caches: the kernels (the product, vmath's tanh
    loop) compiled by a second process (TANGENT_X_BACKGROUND_COMPILE=1, the
    default on more than one CPU) or by the process itself; then a new
    process loads everything from the caches, kernels into their slots
    first (an empty slot would raise)."""
    script = _KERNELS_SCRIPT + textwrap.dedent("""
        def h(row):
            return np.sum(np.tanh(row * 2.0))
        v = tx.jit(tx.vmap(h))(a)
        np.testing.assert_allclose(v, [h(r) for r in a], rtol=1e-12)
        print("ok", numba_runtime.MATMUL.built_beside)
    """)
    (tmp_path / "products.py").write_text(script)
    env = dict(os.environ, TANGENT_X_CACHE_DIR=str(tmp_path / "tx"),
               NUMBA_CACHE_DIR=str(tmp_path / "numba"), TANGENT_X_BACKGROUND_COMPILE=background)
    beside = background == "1" and len(os.sched_getaffinity(0)) > 1
    for want in ("ok built" if beside else "ok None", "ok None"):     # cold, then warm
        proc = subprocess.run([sys.executable, str(tmp_path / "products.py")], env=env,
                              capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0 and proc.stdout.strip() == want, proc.stderr[-3000:]
    assert list((tmp_path / "tx").glob("kernel_matmul_f64_*.py"))


def test_a_second_process_that_dies_leaves_the_kernels_to_this_one(tmp_path):
    """The second process takes the requests, then exits without building
    anything: this process compiles the kernels itself when its compile
    ends (compiling the Numba functions they call, whose ends must not
    start loading again).

    The stand-in second process dies when this one starts waiting for it,
    not after a fixed time: one that died after half a second was flaky
    under load, since a request written after its death takes another path
    (a broken pipe: the kernels are compiled here at once, never reported
    lost)."""
    script = textwrap.dedent("""
        import subprocess, sys
        from tangent_x.numba_stage import beside

        def dead_server():
            if "process" not in beside._SERVER:
                # reads the requests, never answers
                process = subprocess.Popen([sys.executable, "-c",
                                            "import sys\\nfor line in sys.stdin: pass"],
                                           stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                           text=True)
                beside._SERVER.update(process=process, asked=[], done={})
            return beside._SERVER["process"]

        waited = beside._wait

        def wait_for_the_dead(name):
            process = beside._SERVER["process"]
            process.kill()
            process.wait()
            return waited(name)

        beside._server = dead_server
        beside._allowed = lambda: True
        beside._wait = wait_for_the_dead
    """) + _KERNELS_SCRIPT + textwrap.dedent("""
        print("ok", numba_runtime.MATMUL.built_beside)
    """)
    (tmp_path / "dies.py").write_text(script)
    env = dict(os.environ, TANGENT_X_CACHE_DIR=str(tmp_path / "tx"),
               NUMBA_CACHE_DIR=str(tmp_path / "numba"))
    # cold caches on a machine others share: minutes, not seconds (a guard
    # against a hang, not a measure)
    proc = subprocess.run([sys.executable, str(tmp_path / "dies.py")], env=env,
                          capture_output=True, text=True, timeout=1200)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok lost", proc.stderr[-3000:]


def test_flat_helpers_broadcast_zero_dimensional_arrays_and_numbers():
    """A 0-d array is read as ``g[()]``, a number as itself, when a flat
    helper broadcasts it to a shape."""
    import numba
    from tangent_x import runtime
    from tangent_x.numba_stage import numba_runtime

    @numba.njit
    def helpers(g, x):
        return (runtime.unbroadcast(g, x), runtime.broadcast_like(g, x),
                numba_runtime.broadcast_to(g, x.shape))

    x = np.zeros((2, 3))
    for g in (np.array(1.5), 1.5, np.array([2.0, 3.0, 4.0])):
        for got in helpers(g, x):
            np.testing.assert_array_equal(got, np.broadcast_to(g, x.shape))
    np.testing.assert_array_equal(numba.njit(lambda g, x: runtime.unreduce(g, x))(
        np.array(2.5), np.array(0.0)), np.array(2.5))


def _tanh_chain(W, x):
    s = 0.0
    h = x
    for i in range(3):
        h = np.tanh(W @ h)
        s = s + np.sum(np.tanh(h @ W) * (i + 1.0))
    return s


def test_matrix_cotangent_summed_as_rank_one_updates():
    """A matrix's cotangent summed over a loop of matrix-vector products
    (``W @ h`` and ``h @ W``) is added into its buffer as outer products
    (numba_runtime.ACCUMULATING), equal to the eager gradient and to finite
    differences."""
    rs = np.random.default_rng(0)
    W, x = rs.normal(size=(4, 4)), rs.normal(size=4)
    compiled = tx.jit(tx.grad(_tanh_chain, argnums=(0, 1)))
    text = tx.source(compiled, stage="numba", example_args=(W, x))
    assert "W_bar = add_matmul_adjoint_lhs(W_bar," in text
    assert "W_bar = add_matmul_adjoint_rhs(W_bar," in text
    got = compiled(W, x)
    eager = tx.grad(_tanh_chain, argnums=(0, 1))(W, x)
    for k in (0, 1):
        np.testing.assert_allclose(got[k], eager[k], rtol=1e-13, atol=1e-14)
        np.testing.assert_allclose(got[k], numerical_grad(_tanh_chain, (W, x), k),
                                   rtol=1e-6, atol=1e-8)
