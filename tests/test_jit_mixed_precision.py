"""float32 and mixed precision under jit (issue #19 item 6, issue #16's dtype
class): every combination of operand dtypes -- float32 and float64 arrays,
integer arrays, Python numbers (weak, NEP 50), NumPy scalars (strong) --
through products, elementwise arithmetic and reductions, and their
gradients, gives under jit the dtypes and values eager NumPy gives; the
tutorial MLP with float32 weights and float64 biases runs under jit, grad,
value_and_grad and vmap(grad)."""
import itertools

import numpy as np
import pytest

import tangent_x as tx
from tangent_x.numba_stage.numba_runtime import widen_dtype


# --- the operations ----------------------------------------------------------

def op_matmul(a, b):
    return a @ b


def op_dot(a, b):
    return np.dot(a, b)


def op_elementwise(a, b):
    return np.tanh(a * b) + a / (b + 3.0) - b


def op_reductions(a, b):
    return np.sum(a * b, axis=0) + np.mean(a) - np.max(a + b) + np.std(a * b) * np.var(a)


def loss_matmul(a, b):
    return np.sum(np.sin(op_matmul(a, b)))


def loss_dot(a, b):
    return np.sum(np.sin(op_dot(a, b)))


def loss_elementwise(a, b):
    return np.sum(op_elementwise(a, b))


def loss_reductions(a, b):
    return np.sum(op_reductions(a, b) ** 2)


OPS = {"matmul": (op_matmul, loss_matmul), "dot": (op_dot, loss_dot),
       "elementwise": (op_elementwise, loss_elementwise),
       "reductions": (op_reductions, loss_reductions)}

# the second operand: arrays of each dtype, Python numbers, NumPy scalars
SECOND = {
    "f32": lambda rng, n: rng.uniform(-1, 1, n).astype(np.float32),
    "f64": lambda rng, n: rng.uniform(-1, 1, n),
    "i64": lambda rng, n: rng.randint(0, 4, n),
    "i32": lambda rng, n: rng.randint(0, 4, n).astype(np.int32),
    "py_float": lambda rng, n: 0.7,
    "py_int": lambda rng, n: 2,
    "np_f32": lambda rng, n: np.float32(0.7),
    "np_f64": lambda rng, n: np.float64(0.7),
}
FIRST = {"f32": np.float32, "f64": np.float64}


def _cases():
    for op, first, second in itertools.product(OPS, FIRST, SECOND):
        if op in ("matmul", "dot") and second.startswith(("py", "np")):
            continue        # a product of an array and a number is not a matmul
        yield f"{op}-{first}-{second}"


CASES = list(_cases())


def _arguments(case):
    op, first, second = case.split("-")
    rng = np.random.RandomState(sum(map(ord, case)))
    a = rng.uniform(-1, 1, (3, 3)).astype(FIRST[first])
    return OPS[op], (a, SECOND[second](rng, 3))


def _tolerance(*leaves):
    narrow = any(np.asarray(leaf).dtype == np.float32 for leaf in leaves)
    return 2e-5 if narrow else 1e-12


def _same(got, want, *inputs):
    got_leaves = tx.tree_util.tree_leaves(got)
    want_leaves = tx.tree_util.tree_leaves(want)
    assert len(got_leaves) == len(want_leaves)
    for g, w in zip(got_leaves, want_leaves):
        assert np.asarray(g).dtype == np.asarray(w).dtype, (np.asarray(g).dtype,
                                                            np.asarray(w).dtype)
        tol = _tolerance(g, w, *inputs)
        np.testing.assert_allclose(g, w, rtol=tol, atol=tol)


@pytest.mark.parametrize("case", CASES)
def test_jit_value_has_numpys_dtype(case):
    (op, _), args = _arguments(case)
    _same(tx.jit(op)(*args), op(*args), *args)


@pytest.mark.parametrize("case", CASES)
def test_jit_grad_as_eager_grad(case):
    (_, loss), args = _arguments(case)
    eager = tx.grad(loss)(*args)
    assert eager.dtype == args[0].dtype          # JAX: a gradient has its primal's dtype
    _same(tx.jit(tx.grad(loss))(*args), eager, *args)


@pytest.mark.parametrize("case", [c for c in CASES if c.split("-")[1] == "f32"][:6])
def test_eager_grad_of_mixed_precision_matches_finite_differences(case):
    """The reference the jit tests compare with is itself right: central
    differences of the function in float64."""
    (_, loss), (a, b) = _arguments(case)
    got = tx.grad(loss)(a, b)
    wide = a.astype(np.float64)
    eps = 1e-6
    want = np.zeros_like(wide)
    for i in np.ndindex(wide.shape):
        up, down = wide.copy(), wide.copy()
        up[i] += eps
        down[i] -= eps
        want[i] = (loss(up, b) - loss(down, b)) / (2 * eps)
    np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-3)


def test_integer_products_are_exact_under_jit():
    a = np.array([[3, -2], [2**40, 5]], np.int64)
    b = np.array([7, 2**12], np.int64)
    for x, y in [(a, b), (b, a), (a, a), (b, b), (a.astype(np.int32), b.astype(np.int32))]:
        _same(tx.jit(op_matmul)(x, y), op_matmul(x, y))
        _same(tx.jit(op_dot)(x, y), op_dot(x, y))


# --- the tutorial MLP: float32 weights from tx.random, float64 biases ----------

def predict(params, x):
    for w, b in params:
        x = np.tanh(w @ x + b)
    return x


def mlp_loss(params, x):
    return np.sum(predict(params, x) ** 2)


def _mlp(bias_dtype):
    keys = tx.random.split(tx.random.PRNGKey(0), 2)
    sizes = [(4, 3), (2, 4)]
    return [(tx.random.normal(k, shape, dtype=np.float32), np.zeros(shape[0], bias_dtype))
            for k, shape in zip(keys, sizes)]


MLP_TRANSFORMS = {
    "jit": lambda f: f,
    "grad": lambda f: tx.grad(f),
    "value_and_grad": lambda f: tx.value_and_grad(f),
    "vmap_grad": lambda f: tx.vmap(tx.grad(f), in_axes=(None, 0)),
}


@pytest.mark.parametrize("bias", ["float64", "float32"])
@pytest.mark.parametrize("transform", list(MLP_TRANSFORMS))
def test_tutorial_mlp_mixed_precision_under_jit(transform, bias):
    params = _mlp(np.dtype(bias))
    batched = transform == "vmap_grad"
    x = np.linspace(-1, 1, 15 if batched else 3, dtype=np.float32).reshape(
        (5, 3) if batched else (3,))
    fn = predict if transform == "jit" else mlp_loss
    eager = MLP_TRANSFORMS[transform](fn)(params, x)
    _same(tx.jit(MLP_TRANSFORMS[transform](fn))(params, x), eager,
          *tx.tree_util.tree_leaves(params), x)
    if transform == "grad":
        # the gradient itself: central differences of the loss in float64
        wide = [(w.astype(np.float64), b.astype(np.float64)) for w, b in params]
        eps = 1e-6
        for layer in range(2):
            for which in range(2):
                leaf = wide[layer][which]
                want = np.zeros_like(leaf)
                for i in np.ndindex(leaf.shape):
                    saved = leaf[i]
                    leaf[i] = saved + eps
                    up = mlp_loss(wide, x.astype(np.float64))
                    leaf[i] = saved - eps
                    down = mlp_loss(wide, x.astype(np.float64))
                    leaf[i] = saved
                    want[i] = (up - down) / (2 * eps)
                np.testing.assert_allclose(eager[layer][which], want, rtol=1e-3, atol=1e-4)


# --- issue #16: a float32 value joined with a Python number at an if ------------

def join_sum(x, t):
    if t > 0:
        y = np.sum(x)
    else:
        y = 0.5
    return y * 3.0


def join_default_first(x, t):
    y = 0.25
    if t > 0:
        y = np.sum(x * x)
    return y - 1.0


def join_loss(x, t):
    if t > 0:
        y = np.sum(np.sin(x))
    else:
        y = 2.0
    return y * np.sum(x)


@pytest.mark.parametrize("fn", [join_sum, join_default_first], ids=lambda f: f.__name__)
def test_float32_joined_with_a_python_number_stays_float32(fn):
    x = np.linspace(-1, 1, 4, dtype=np.float32)
    jitted = tx.jit(fn)
    # the path through the array: float32 as eagerly
    _same(jitted(x, 1.0), fn(x, 1.0))
    # the path through the number: its value, in the join's float32 (eagerly
    # a Python float; a compiled variable has one type, and NumPy's
    # promotion of the two is float32, as JAX's of a weak number)
    got = jitted(x, -1.0)
    assert np.asarray(got).dtype == np.float32
    np.testing.assert_allclose(got, fn(x, -1.0), rtol=1e-6)
    assert "weak_number(" in jitted.numba_source(x, 1.0)


def test_float64_join_keeps_its_literal_code():
    """Wide signatures are compiled as written (no weak_number)."""
    x = np.linspace(-1, 1, 4)
    jitted = tx.jit(join_sum)
    _same(jitted(x, -1.0), np.float64(join_sum(x, -1.0)))
    assert "weak_number(" not in jitted.numba_source(x, 1.0)


@pytest.mark.parametrize("t", [1.0, -1.0])
def test_jit_grad_through_a_join_with_a_python_number(t):
    x = np.linspace(-1, 1, 4, dtype=np.float32)
    _same(tx.jit(tx.grad(join_loss))(x, t), tx.grad(join_loss)(x, t))


# --- a gradient taken inside the jitted function (issue #19's corpus) ---------

def _relu_mean_loss(w, x):
    return np.mean(np.maximum(x @ w, 0.0) ** 2) + np.mean(np.minimum(w, 0.25))


def relu_sgd_step(w, x):
    return w - 0.5 * tx.grad(_relu_mean_loss)(w, x)


@pytest.mark.parametrize("compiled", [False, True], ids=["python_stage", "jit"])
def test_float32_gradient_inside_jit_stays_float32(compiled):
    """The seed of a gradient taken inside a transformed function (``mean``'s
    ``1 / count``, a Python number) and the masks of maximum/minimum's rules
    are weak: the step of a float32 model is float32, as NumPy and JAX give
    (it was float64: the seed broadcast as float64, the masks float64)."""
    rng = np.random.default_rng(3)
    w = rng.normal(size=(3, 2)).astype(np.float32)
    x = rng.normal(size=(5, 3)).astype(np.float32)
    w[0, 0] = 0.25                         # a tie in np.minimum(w, 0.25)
    step = tx.jit(relu_sgd_step)
    if compiled:
        got = step(w, x)
    else:
        with tx.disable_jit():
            got = step(w, x)
    assert got.dtype == np.float32
    want = w.astype(np.float64) - 0.5 * tx.grad(_relu_mean_loss)(w.astype(np.float64),
                                                                 x.astype(np.float64))
    np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-7)


def _tanh_row(w, x):
    return np.tanh(w @ x)


def _vmapped_loss(w, xs):
    preds = tx.vmap(_tanh_row, in_axes=(None, 0))(w, xs)
    return np.mean(preds ** 2)


def test_jit_of_a_gradient_through_a_vmap_made_inside_on_its_first_call():
    """``tx.vmap(...)`` written inside the loss, jitted before any eager
    call: jit specialises the vmap on one plain run, as a grad call does (it
    raised ``Unspecialized`` when jit was the first caller)."""
    rng = np.random.default_rng(4)
    w, xs = rng.normal(size=(2, 3)), rng.normal(size=(5, 3))
    got = tx.jit(tx.grad(_vmapped_loss))(w, xs)
    want = tx.grad(lambda v: np.mean(np.tanh(xs @ v.T) ** 2))(w)
    np.testing.assert_allclose(got, want, rtol=1e-12)


def _tied_max_loss(x, v):
    return np.sum(np.max(x * 0.1 + 1.0, axis=1) * v) + np.min(x) * 3.0


def test_float32_ties_under_jit_equal_eager_bit_for_bit():
    """max/min of float32 data with ties (some only in float32: 1 and
    1 + 1e-8): the gradient under jit is eager's, bit for bit, float32, each
    of k ties getting 1/k as in JAX (eager's cotangent was float64 there,
    from an int64 count of the ties, and rounded apart; the jvp's dtype is
    tested eagerly in test_rules_reductions.py)."""
    x = np.array([[1.0, 1.0 + 1e-8, 0.5], [-2.0, 3.0, -2.0], [0.7, 0.7, 0.7]],
                 dtype=np.float32)
    v = np.array([1.0, 2.0, 3.0], dtype=np.float32)
    g = tx.jit(tx.grad(_tied_max_loss))(x, v)
    g_eager = tx.grad(_tied_max_loss)(x, v)
    assert g.dtype == g_eager.dtype == np.float32
    np.testing.assert_array_equal(g, g_eager)
    share = np.float32(0.1) / np.float32(2.0)
    want = np.array([[share * 1.0, share * 1.0, 0.0],
                     [1.5, 0.2 * 1.0, 1.5],     # the min's ties: 3 / 2; the row's max
                     [0.1 / 3.0 * 3.0] * 3])
    want[1, 1] = np.float32(0.1) * 2.0
    np.testing.assert_allclose(g, want, rtol=1e-6)


def returned_in_a_loop(x, c):
    w = -0.69
    while w < 0.33:
        if w <= 0.58:
            return np.max(c) * 0.1296     # float32 * a Python number: float32
        w = w + 0.3
    return np.sum(x)


def returned_in_a_loop_maybe(x, c):
    for v in x:
        if v > 0.5:
            return v * 2.0
    return np.float32(0.0) * np.sum(c)


@pytest.mark.parametrize("fn", [returned_in_a_loop, returned_in_a_loop_maybe])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_number_returned_from_a_loop_keeps_its_dtype(fn, dtype):
    # the loop's return value is an optional value in compiled code (None
    # until a turn returns): its narrow dtype was lost (fuzz seed 470318)
    c = np.ones((2, 3), dtype)
    for x in (np.array([0.2, 0.9, 0.1], dtype), np.array([0.2, 0.1], dtype)):
        want, got = fn(x, c), tx.jit(fn)(x, c)
        assert np.asarray(got).dtype == np.asarray(want).dtype, (got, want)
        np.testing.assert_allclose(got, want, rtol=1e-6)


def starts_as_a_python_number(x, y):
    acc = -1.43                     # a Python number, then float32 (NumPy's weak rule)
    w = np.tanh(2.0 * acc)
    while w < 0.46:
        acc = 0.7 * acc + 0.3 * np.dot(y, x)
        w = w + 0.3
    return acc


def test_jit_grad_of_a_loop_carry_that_starts_as_a_python_number():
    # its tape got a Python number first, then float32 numbers (a Numba
    # typing failure, refused: fuzz seed 470259)
    x = np.array([0.3, -0.5, 0.8], np.float32)
    y = np.array([0.2, 0.4, -0.1], np.float32)
    g = tx.grad(starts_as_a_python_number, argnums=(0, 1))
    want, got = g(x, y), tx.jit(g)(x, y)
    for a, b in zip(got, want):
        assert a.dtype == b.dtype == np.float32
        np.testing.assert_allclose(a, b, rtol=1e-5)
    np.testing.assert_allclose(tx.jit(starts_as_a_python_number)(x, y),
                               starts_as_a_python_number(x, y), rtol=1e-6)


# --- a float32 value's cotangent that a float64 loss reaches ------------------

def scaled_in_a_list(y):
    c2 = np.abs(y) * 1.0
    c3 = (c2 - y) * 1.0
    for p in [c2, c3]:
        p *= -0.23
    k = np.sum(c2 * c3) + np.sum(c2)
    return k * 2.0 + np.sum(np.sin(k * np.array([0.5, -0.25])))


def tuples_in_a_list(x):
    pairs = []
    for i in range(2):
        pairs.append((np.sin(x) * (1.0 + 0.25 * i), np.linspace(-1.0, 1.0, 3) * (0.07 * i)))
    k = sum(np.sum(t[0]) - np.sum(t[1]) for t in pairs[::-1])
    return np.sum(np.sin(k * np.array([0.5, -0.25])))


@pytest.mark.parametrize("fn", [scaled_in_a_list, tuples_in_a_list], ids=lambda f: f.__name__)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_jit_grad_where_a_float32_cotangent_meets_a_float64_one(fn, dtype):
    """A float32 argument whose cotangent a float64 constant makes float64
    on one path (added out of place) and float32 on another (added in place
    into float32 zeros), or in a list of tuples (fuzz seeds 620391, 620280,
    621209): jit(grad) runs, float32 like eager grad, within float32's
    rounding of it; in float64 equal to eager and to central differences.
    (Both were refused: the cotangent's two dtypes could not be joined.)"""
    x = np.array([0.7, -1.3, 0.4], dtype=dtype)
    g = tx.grad(fn)
    got, want = tx.jit(g)(x), g(x)
    assert got.dtype == dtype == want.dtype
    if dtype == np.float32:
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
        want = g(x.astype(np.float64))
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    else:
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)
        h, fd = 1e-6, np.zeros(3)
        for i in range(3):
            e = np.zeros(3)
            e[i] = h
            fd[i] = (fn(x + e) - fn(x - e)) / (2 * h)
        np.testing.assert_allclose(got, fd, rtol=1e-6, atol=1e-8)


def a_dict_leaf_on_one_path(z, p):
    pw = p['w']
    v = z[-1] * (z if np.sum(z) < -10.0 else pw) + z[-1]
    if np.max(z) > 0.35:
        return np.sum(z * -0.63)
    return np.sum(v * np.array([0.5, -0.25, 1.0]))


@pytest.mark.parametrize("z", [[0.3, -0.2, 0.5], [0.3, -0.2, 0.1]], ids=["early", "late"])
def test_jit_grad_of_a_dict_leaf_whose_cotangent_is_float32_on_one_path(z):
    """A float32 dict leaf's cotangent, zeros on the early return's path
    and float64 on the other, added with ``tree_add`` (fuzz seed 630143,
    refused before: ``tree_add`` was not followed by ``joins``)."""
    z = np.array(z, np.float32)
    p = {"w": np.array([0.2, 0.7, -0.3], np.float32)}
    g = tx.grad(a_dict_leaf_on_one_path, argnums=(0, 1))
    got, want = tx.jit(g)(z, p), g(z, p)
    assert got[1]["w"].dtype == np.float32 == got[0].dtype
    np.testing.assert_allclose(got[0], want[0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got[1]["w"], want[1]["w"], rtol=1e-5, atol=1e-6)


def sum_of_a_grown_list(x):
    items = []
    for i in range(3):
        if np.sum(x) > -0.42:
            items.append(np.exp(np.tanh(x)) * (1.0 + 0.25 * i))
    k = sum([np.sum(t) for t in items]) + 0.0
    return k * 2.0


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_jit_grad_of_a_python_number_seed_through_a_list_of_arrays(dtype):
    """The seed ``2.0`` (a Python number, weak) reaches ``unreduce`` of a
    taped item's stand-in: compiled, its dtype is its number's (fuzz seed
    631191: Numba found no ``unreduce`` for a weak number and was refused)."""
    x = np.array([[0.3, -0.2, 0.5], [0.1, 0.4, -0.6]], dtype)
    g = tx.grad(sum_of_a_grown_list)
    got, want = tx.jit(g)(x), g(x)
    assert got.dtype == dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-5 if dtype == np.float32 else 1e-12)


def _numba_verdicts(fn, cast):
    import numba
    from tangent_x.numba_stage.joins import observed
    compiled = numba.njit(fn)
    compiled(np.ones(3, np.float32), np.ones(3), True)
    annotation = compiled.overloads[compiled.signatures[0]].type_annotation
    return observed(annotation.blocks, annotation.typemap, (), cast)


# a value float32 on one path and float64 on the other, widened at the
# ``if`` as ``compile_errors.widened_text`` does, then computed on; named as
# a cotangent or a primal, returned or compared (one text, three functions)
_WIDENED = """
def {name}(x32, x64, c):
    if c:
        {a} = widen_dtype(x32 * np.float32(2), np.float64)
    else:
        {a} = widen_dtype(x64, np.float64)
    {b} = {a} * x32
{tail}
"""
_RETURNED = "    return {b}"
_COMPARED = "    if np.sum({b}) > 0.5:\n        return x64\n    return x64 * 2.0"


def _widened(name, a, b, tail):
    space = {"np": np, "widen_dtype": widen_dtype}
    exec(_WIDENED.format(name=name, a=a, b=b, tail=tail.format(b=b)), space)
    return space[name]


_cotangent_returned = _widened("_cotangent_returned", "a_bar", "b_bar", _RETURNED)
_cotangent_compared = _widened("_cotangent_compared", "a_bar", "b_bar", _COMPARED)
_primal_returned = _widened("_primal_returned", "a", "b", _RETURNED)


def test_a_widened_cotangent_shows_only_where_a_primal_would():
    """The limits of the looser rule for cotangents (``joins``' module doc),
    on Numba's own typed IR: a cotangent widened at an ``if`` and computed
    on in float64 shows nothing when every result is a gradient cast to its
    argument's dtype (``cast``), and shows where it is computed on
    otherwise; it shows at a comparison either way; a primal's widening
    shows either way."""
    first = _cotangent_returned.__code__.co_firstlineno
    assert _numba_verdicts(_cotangent_returned, cast=True) == []
    assert [v[4] - first for v in _numba_verdicts(_cotangent_returned, cast=False)] == [5]
    first = _cotangent_compared.__code__.co_firstlineno
    assert [v[4] - first for v in _numba_verdicts(_cotangent_compared, cast=True)] == [6]
    for cast in (False, True):
        assert [v[0] for v in _numba_verdicts(_primal_returned, cast)] == ["a"]
