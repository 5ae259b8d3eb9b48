"""The corpus of JAX programs ported by changing imports (issue #19):
``tests/jax_corpus/``, each program's results against numbers recorded from
JAX, run twice -- as written, its ``tx.jit`` functions compiled with Numba,
and under ``tx.disable_jit()``, the generated Python -- and its gradients
against finite differences and loops over examples, which share no code
with JAX or tangent_x.

How the JAX numbers were produced: ``tools/jax_corpus_reference.py`` takes
each program file, replaces ``tangent_x`` by ``jax`` in its import block and
nowhere else, runs it under JAX 0.10.2 (jaxlib 0.10.2, NumPy 2.4.6, CPU,
``jax_enable_x64``, default threefry settings, 4 host devices) and prints
the dicts below, pasted unchanged: ``name: (value, dtype)``.  The random
draws come from ``tx.random``; that they are JAX's own bits is checked by
the shared values (``xs_head``, and every result depending on them).

The jit runs compile with Numba (5-50 s a program on 2 cores) and are listed
in ``tests/slow_tests.txt``; the default run keeps the eager runs and the
finite-difference checks.
"""
import importlib
import os
import re

import numpy as np
import pytest

import tangent_x as tx
from _fd import assert_tree_allclose, numerical_grad

HERE = os.path.dirname(os.path.abspath(__file__))

# ---- recorded from JAX by tools/jax_corpus_reference.py (see the docstring) ----
MLP_SGD = {
    'first_loss': (0.4430871552155565, 'float64'),
    'final_loss': (0.020106608527941362, 'float64'),
    'W0': ([[-0.47875042599800766, 0.48043222936295943, 0.7788542077282564],
            [0.48419986084389455, 0.2396272179292121, 0.8645276624601018],
            [-0.3963497919962623, 0.07037592877355356, -0.7055012728409044],
            [-0.2492937739729073, 0.2608273348322543, 0.03428875054353352],
            [-0.7970830596388091, -0.5067723275261138, -0.8816378213245771]], 'float64'),
    'b1': ([0.7366441871592452, 0.19409488045697135], 'float64'),
}

PER_EXAMPLE = {
    'dW1': ([[[0.04992412853578024, 0.271840007482014, -0.11164664978470905,
               0.040406407200467426],
              [-0.012106290256693434, -0.06591950887235538, 0.02707361726930069,
               -0.00979830210653393],
              [-0.003925245547212901, -0.02137320791004611, 0.008778130490842393,
               -0.003176922153560177],
              [0.013676254082794728, 0.07446806025924636, -0.030584568919498657,
               0.011068962196313729],
              [-0.021355528184151946, -0.11628218882582239, 0.04775793280867598,
               -0.017284230954005903],
              [-0.05676139597810699, -0.30906935704084626, 0.12693701190030923,
               -0.04594019257671396]],
             [[-0.01449405006366673, -0.0348717899833367, 0.011655163835005786,
               -0.0008846528928249165],
              [-0.03266437027907146, -0.07858845907846702, 0.026266542857073538,
               -0.001993689102269768],
              [-0.008879149956582266, -0.021362686837453817, 0.007140029667689051,
               -0.0005419441536639463],
              [-0.011070510919927872, -0.02663496608002588, 0.008902178338159964,
               -0.0006756951623145166],
              [-0.019796591049459265, -0.04762937635997805, 0.015919119296714072,
               -0.001208296608818632],
              [-0.0034079815911696155, -0.008199393391930888, 0.0027404751340921614,
               -0.00020800816611499633]],
             [[0.1912161790775222, -0.14938688226263117, 0.36652942662797133,
               -0.09326120016110202],
              [-0.3377698950457732, 0.26388139218390905, -0.6474483830843921,
               0.164739332948847],
              [-0.030869396720713194, 0.024116593876536273, -0.05917146935462654,
               0.015055823206548538],
              [0.009284835789171286, -0.007253741171673915, 0.017797476942367517,
               -0.004528460578881302],
              [-0.14850472530831105, 0.11601872823786014, -0.28465871497585077,
               0.07242969176908906],
              [-0.08955437330920275, 0.06996399931316391, -0.1716607520315625,
               0.04367804217605244]],
             [[-0.26340133528406484, -0.227994355943088, -0.2025887289404698,
               0.03725170371880225],
              [0.05695549095609733, 0.04929941020972257, 0.04380593024151702,
               -0.008054967040950366],
              [0.10392847204059513, 0.08995818119711033, 0.07993405587227896,
               -0.014698151185258215],
              [1.2335740761579853e-05, 1.0677543707150086e-05, 9.48773489979644e-06,
               -1.7445900929346014e-06],
              [0.2201857051668483, 0.19058786464863942, 0.1693504783964224,
               -0.03113990535828236],
              [0.00383179057701236, 0.0033167129687196348, 0.002947128501553828,
               -0.0005419134536027474]],
             [[0.17355928820664346, 0.21040728547750692, 0.604580026153171,
               -0.29355401668063175],
              [-0.03785082204358355, -0.0458868482440443, -0.1318503389676429,
               0.06401997242768385],
              [-0.003294752928539378, -0.003994254800052246, -0.011477010722312508,
               0.005572666067813402],
              [0.0027767277733498066, 0.0033662488440544974, 0.009672511146930386,
               -0.00469649074686803],
              [-0.06750854151339411, -0.08184113401909614, -0.23516065441070388,
               0.11418232770068164],
              [-0.013976943870086888, -0.016944358607158042, -0.04868757631949703,
               0.023640267578757486]]], 'float64'),
    'db2': ([[-0.6496093412450691, 0.21741055996343298, 0.432198781281636],
             [0.2705849767934312, 0.244001183407551, -0.5145861602009821],
             [0.4688965116361832, -0.7887665200609225, 0.3198700084247394],
             [0.22321322351662226, -0.7157873682027377, 0.4925741446861155],
             [-0.7445033547179374, 0.29764109073659173, 0.4468622639813456]], 'float64'),
    'log_probs': ([[-1.0487065790796737, -1.5259677315858649, -0.8388696547151872],
                   [-1.3071690829188214, -1.4105822036697497, -0.7227534739431992],
                   [-0.7573731923764507, -1.554791217274571, -1.139840589392242],
                   [-1.4996278050837484, -1.2580326174480998, -0.7081102821151228],
                   [-1.3645459994360736, -1.211866911842832, -0.8055048661216071]], 'float64'),
    'dx': ([[-0.45975157966157604, -0.016487091448015693, -0.04643433441279085,
             0.4030886315230682],
            [0.0376539071023134, 0.057877225035435916, -0.00860532561576172,
             -0.034498080026195324],
            [0.2008520773748722, -0.5176326909931783, -0.08267179395471241,
             -0.13485514847009977],
            [0.024364336606233786, -0.022675042419913385, -0.021222868314373127,
             -0.06239881286659207],
            [-0.198223692903354, 0.04826016027916836, 0.15173385637084863, 0.2315571252063247]], 'float64'),
}

RECURSION = {
    'f': (-0.07973505316447703, 'float64'),
    'grad': ([0.34512745806361306, 0.8546990438154453, -1.1154088912042697], 'float64'),
    'vmap_grad': ([0.017435749239934514, 0.33202237461159745, -11.086334782428978], 'float64'),
    'horner_grad': ([-0.31, 7.039999999999999, 24.0], 'float64'),
    'grad_power_n': ([0.27, 4.32, 12.0], 'float64'),
    'grad_power_n_eager': ([0.108, -6.912, 32.0], 'float64'),
    'layer_grad_0': ([[0.10853421202613847, -0.4341368481045539, 0.7235614135075898],
                      [-0.0442694749405566, 0.1770778997622264, -0.29512983293704403]], 'float64'),
    'layer_grad_1': ([[0.3807865285504326, -0.5828038674323731]], 'float64'),
    'layer_grad_x': ([0.16613386173004527, -0.1166256162913156, 0.09520403726278831], 'float64'),
}

LOG1PEXP = {
    'value': ([0.04858735157374196, 0.6931471805599453, 2.5788897342925496, 10.000045398899218,
               100.0], 'float64'),
    'grad': ([0.047425873177566635, 0.5, 0.9241418199787564, 0.9999546021312976, 1.0], 'float64'),
    'grad_at_100': (1.0, 'float64'),
    'jvp': (1.8482836399575129, 'float64'),
}

SCAN_RNN = {
    'loss': (1.0414187959359933, 'float64'),
    'dWh': ([[0.3476288575480954, 0.7540677411995671, -0.007988693354061563,
              -0.16328970056077438],
             [0.37268151843733094, 0.8366562527409854, 0.452124055364708, -0.03810858052130907],
             [-0.09916544674129825, -0.5003606353593324, -0.8418080283969525,
              -0.32405816174301544],
             [0.35415006219310635, 0.21037079688599347, 0.061734023927173136,
              0.13914101175352522]], 'float64'),
    'dWx': ([[-3.130803534468221, -0.607331662295745],
             [-0.9845655609041274, -0.41070590200594026],
             [-2.1575143386970046, -0.6090678244112016],
             [-1.317454086478329, -2.4858586043358435]], 'float64'),
    'db': ([1.9605283387902186, 0.9448740127880768, 0.8180225559657746, 0.7907693123249248], 'float64'),
}

WHILE_COUNTER = {
    'count': (6, 'int64'),
    'rest': (0.578125, 'float64'),
    'jvp_rest': (0.015625, 'float64'),
    'decay': (10.257531563445271, 'float64'),
    'decay_grads': ([8.264003433851313, 23.347777790735268], 'float64'),
}

MLP_FLOAT32 = {
    'losses': ([0.44087469577789307, 0.41183120012283325, 0.3859579563140869, 0.36278313398361206,
                0.3420249819755554], 'float32'),
    'W1': ([[0.14935187995433807, 0.27191153168678284, -0.08894181996583939,
             -0.061292316764593124, -0.2883445620536804, 0.00013966629921924323,
             0.2895999252796173, 0.2841249108314514],
            [0.7123046517372131, -0.5434988141059875, -0.5728077292442322, 0.06819982081651688,
             -0.40632885694503784, 0.2508581876754761, 0.10428157448768616,
             0.41989225149154663]], 'float32'),
    'b0': ([-0.04168616607785225, -0.018842410296201706, -0.03605801612138748,
            0.0038922992534935474, 0.005491865798830986, -0.016944631934165955,
            -0.011820711195468903, 0.02211262285709381], 'float32'),
    'mixed_losses': ([0.4408747090295979, 0.41183118335466506, 0.3859579181382556, 0.3627831540490313,
                      0.34202494272200434], 'float64'),
    'mixed_b1': ([-0.0599885853345684, 0.0023930771715062115], 'float64'),
}

MASKS = {
    'at': ([0.5, -100.0, 2.0, 0.25, -100.0], 'float32'),
    'at_grad': ([0.1597319096326828, 0.0, 0.7158687710762024, -0.8756006956100464, 0.0], 'float32'),
    'where_grad': ([0.1597319096326828, 0.0, 0.7158687710762024, -0.8756006956100464, 0.0], 'float32'),
}

LINEAR_REGRESSION = {
    'theta': ([2.985587016472012, -0.9884054810420597], 'float64'),
    'loss': (0.009135702229286766, 'float64'),
    'xs_head': ([-0.7203007280025545, -0.26062232600173396, 1.6815685055837928, -0.1917276837846257], 'float64'),
}

COLLECTIVES = {
    'pmap': ([[0.2, 0.2857142857142857, 0.3333333333333333],
              [0.8, 0.7142857142857143, 0.6666666666666666]], 'float64'),
    'vmap': ([0.1, 0.2, 0.30000000000000004, 0.4], 'float64'),
    'pmap_grad': ([[-15.0, -21.0, -27.0], [15.0, 21.0, 27.0]], 'float64'),
    'jit_vmap': ([[-2.0, -2.0], [0.0, 0.0], [2.0, 2.0]], 'float64'),
}

# ---- end of the recorded numbers ----

JAX = {"mlp_sgd": MLP_SGD, "per_example": PER_EXAMPLE, "recursion": RECURSION,
       "log1pexp": LOG1PEXP, "scan_rnn": SCAN_RNN, "while_counter": WHILE_COUNTER,
       "mlp_float32": MLP_FLOAT32, "masks": MASKS, "linear_regression": LINEAR_REGRESSION,
       "collectives": COLLECTIVES}

# Results JAX cannot compute (NumPy's in-place ``x[MASK] = v``): each must
# equal the JAX-computed result named here.
SAME_AS = {("masks", "inplace"): "at", ("masks", "inplace_grad"): "at_grad"}

# Relative tolerances: float64 programs agree with XLA to rounding (sums and
# matrix products may associate differently); float32 ones to float32's.
# The 1,000-step regression and 50-step MLP carry rounding through training.
# The mixed float32/float64 MLP rounds its float32 products like float32.
RTOL = {"float64": 1e-10, "float32": 2e-5}
RTOL_PROGRAM = {"mlp_float32": 2e-5}


def _module(name):
    return importlib.import_module(f"jax_corpus.{name}")


def _run(name, mode):
    module = _module(name)
    if mode == "eager":
        with tx.disable_jit():
            return module.run()
    return module.run()


def _check(name, results):
    expected = JAX[name]
    wanted = set(expected) | {key for (prog, key) in SAME_AS if prog == name}
    assert set(results) == wanted
    for key, got in results.items():
        value, dtype = expected[SAME_AS.get((name, key), key)]
        got = np.asarray(got)
        assert got.dtype == np.dtype(dtype), (key, got.dtype, dtype)
        if got.dtype.kind in "iub":
            np.testing.assert_array_equal(got, value, err_msg=key)
        else:
            rtol = RTOL_PROGRAM.get(name, RTOL[dtype])
            np.testing.assert_allclose(got, value, rtol=rtol, atol=rtol * 1e-3, err_msg=key)


@pytest.mark.parametrize("mode", ["eager", "jit"])
@pytest.mark.parametrize("name", sorted(JAX))
def test_program_gives_jax_numbers(name, mode, monkeypatch):
    if name == "collectives" and tx.local_device_count() < 2:
        monkeypatch.setenv("TANGENT_X_NUM_DEVICES", "2")   # pmap over 2 devices on any machine
    _check(name, _run(name, mode))


def test_programs_name_tangent_x_in_their_import_block_only():
    """The port is the import block: what JAX ran is the rest of the file."""
    folder = os.path.join(HERE, "jax_corpus")
    for name in list(JAX) + CLOSED_FORM:
        with open(os.path.join(folder, name + ".py"), encoding="utf-8") as f:
            text = f.read()
        parts = re.split(r"^# imports$", text, flags=re.M)
        assert len(parts) == 3, name
        assert "tangent_x" not in parts[0] + parts[2], name
        assert "import tangent_x as tx" in parts[1], name


# ---- oracles that are not JAX: finite differences, loops, closed forms ----

# Programs checked against finite differences and closed forms only.
CLOSED_FORM = ["transforms_inside"]


def _net_grad_by_hand(layers, x):
    """Backprop through tanh layers written out, summed output."""
    hs = [x]
    for w in layers:
        hs.append(np.tanh(w @ hs[-1]))
    g = np.ones_like(hs[-1])
    for w, h in zip(reversed(layers), reversed(hs[1:])):
        g = w.T @ (g * (1.0 - h ** 2))
    return g


@pytest.mark.parametrize("mode", ["eager", "jit"])
def test_transforms_inside_against_closed_forms(mode):
    """Recursion over a tuple of layers, jvp(grad(f)) inside jit, and the
    Hessian through a custom_jvp softplus: the network's gradient by hand,
    its Hessian by central differences of that, the softplus part's
    Hessian in closed form (s''(x) x + 2 s'(x), on the diagonal)."""
    m = _module("transforms_inside")
    got = _run("transforms_inside", mode)
    x, v = np.array([0.3, -1.2, 2.0]), np.array([1.0, 0.5, -2.0])
    layers = tuple(np.asarray(w) for w in m.LAYERS)
    np.testing.assert_allclose(got["net_grad"], _net_grad_by_hand(layers, x), rtol=1e-13)
    eps = 1e-6
    net_hessian = np.stack([(_net_grad_by_hand(layers, x + eps * e)
                             - _net_grad_by_hand(layers, x - eps * e)) / (2 * eps)
                            for e in np.eye(3)])
    sig = 1.0 / (1.0 + np.exp(-x))
    want = net_hessian + np.diag(sig * (1.0 - sig) * x + 2.0 * sig)
    np.testing.assert_allclose(got["hessian"], want, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(got["hvp"], want @ v, rtol=1e-7, atol=1e-9)

def test_mlp_sgd_gradient_and_step_against_differences():
    m = _module("mlp_sgd")
    params = m.init_params([3, 5, 2], m.random.PRNGKey(0))
    x, y = m.data()
    grads = tx.grad(m.loss)(params, x, y)
    assert_tree_allclose(grads, numerical_grad(m.loss, (params, x, y), 0), rtol=1e-6)
    stepped = m.update(params, x, y)
    want = [(w - m.LR * gw, b - m.LR * gb) for (w, b), (gw, gb) in zip(params, grads)]
    assert_tree_allclose(stepped, want, rtol=1e-12)


def test_per_example_gradients_against_differences_per_example():
    m = _module("per_example")
    params = m.init(m.random.PRNGKey(1))
    xs = m.random.normal(m.random.PRNGKey(2), (5, 4), dtype=np.float64)
    ys = np.eye(3)[[0, 2, 1, 1, 0]]
    got = tx.vmap(tx.grad(m.loss), in_axes=(None, 0, 0))(params, xs, ys)
    for i in range(len(xs)):
        want = numerical_grad(lambda p: m.loss(p, xs[i], ys[i]), (params,), 0)
        assert_tree_allclose({k: v[i] for k, v in got.items()}, want, rtol=1e-6)


def test_recursion_gradients_against_differences():
    m = _module("recursion")
    x = np.array([0.3, -1.2, 2.0])
    assert_tree_allclose(tx.grad(m.f)(x), numerical_grad(m.f, (x,), 0), rtol=1e-6)
    g = tx.vmap(tx.grad(lambda t: m.power(t, 4) * m.tree(t, 2)))(x)
    want = [numerical_grad(lambda t: m.power(t, 4) * m.tree(t, 2), (float(t),), 0) for t in x]
    assert_tree_allclose(g, np.array(want), rtol=1e-6)
    # Horner's rule: the derivative of 0.5 - x + 0.25 x**2 + 2 x**3, by hand
    np.testing.assert_allclose(tx.vmap(tx.grad(lambda t: m.horner(m.COEFFS, t)))(x),
                               -1.0 + 0.5 * x + 6.0 * x ** 2, rtol=1e-13)
    # n a Python int argument of the transformed function: n x ** (n - 1)
    np.testing.assert_allclose(tx.grad(m.power_sum)(x, 3), 3 * x ** 2, rtol=1e-13)
    # recursion over the tuple argument: its gradient, leaf by leaf
    layers = (np.array([[0.5, -0.2, 0.1], [0.1, 0.3, -0.4]]), np.array([[0.7, -0.6]]))
    grads = tx.grad(m.network_loss, argnums=(0, 1))(layers, x)
    assert_tree_allclose(grads, numerical_grad(m.network_loss, (layers, x), (0, 1)), rtol=1e-6)


def test_log1pexp_derivative_against_differences():
    m = _module("log1pexp")
    for x in (-3.0, 0.0, 2.5, 10.0):
        assert tx.grad(m.log1pexp)(x) == pytest.approx(
            numerical_grad(lambda v: np.log1p(np.exp(v)), (x,), 0), rel=1e-7)
    assert tx.grad(m.log1pexp)(100.0) == 1.0          # the naive rule gives nan


def test_scan_rnn_gradient_against_differences():
    m = _module("scan_rnn")
    rng = np.random.default_rng(5)
    params = {"Wh": 0.4 * rng.normal(size=(4, 4)), "Wx": 0.4 * rng.normal(size=(4, 2)),
              "b": rng.normal(size=4)}
    xs, target = rng.normal(size=(7, 2)), rng.normal(size=4)

    def unrolled(p):                  # the recurrence as a Python loop: no scan
        h, total = np.zeros(4), 0.0
        for x in xs:
            h = np.tanh(p["Wh"] @ h + p["Wx"] @ x + p["b"])
            total += np.sum(h) ** 2
        return np.sum((h - target) ** 2) + 0.1 * total

    assert m.rnn_loss(params, xs, target) == pytest.approx(unrolled(params), rel=1e-12)
    assert_tree_allclose(tx.grad(m.rnn_loss)(params, xs, target),
                         numerical_grad(unrolled, (params,), 0), rtol=1e-6)


def test_while_counter_against_a_python_loop_and_differences():
    m = _module("while_counter")
    for x in (0.5, 1.0, 37.0, 1e6):
        count, v = 0, x
        while v >= 1.0:
            count, v = count + 1, 0.5 * v
        assert tuple(m.halvings(x)) == (count, v)
    grads = tx.grad(m.decay, argnums=(0, 1))(0.7, 0.9)
    want = numerical_grad(m.decay, (0.7, 0.9), (0, 1))
    assert_tree_allclose(tuple(map(float, grads)), want, rtol=1e-6)


def test_mask_gradient_against_differences():
    m = _module("masks")
    x = np.array([0.5, -1.0, 2.0, 0.25, 1.5])
    loss = lambda v: m.xent(m.masked_where(v, m.MASK), 3)   # noqa: E731
    want = numerical_grad(loss, (x,), 0)
    assert_tree_allclose(tx.grad(lambda v: m.xent(m.masked_inplace(v), 3))(x), want,
                         rtol=1e-6)
    assert_tree_allclose(tx.grad(lambda v: m.xent(m.masked_at(v), 3))(x), want, rtol=1e-6)


def test_linear_regression_converges_to_least_squares():
    results = _run("linear_regression", "eager")
    x = np.asarray(JAX["linear_regression"]["xs_head"][0])
    assert np.array_equal(results["xs_head"], x)        # tx.random's draws are JAX's bits
    m = _module("linear_regression")
    key = m.random.PRNGKey(42)
    x_key, noise_key = m.random.split(key)
    xs = m.random.normal(x_key, (100,), dtype=np.float64)
    ys = 3.0 * xs - 1.0 + 0.1 * m.random.normal(noise_key, (100,), dtype=np.float64)
    w, b = np.linalg.lstsq(np.stack([xs, np.ones_like(xs)], axis=1), ys, rcond=None)[0]
    np.testing.assert_allclose(results["theta"], [w, b], rtol=1e-9)
