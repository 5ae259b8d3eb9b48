"""grad of a vmapped sum where the function builds Python containers
(found by the program generator's containers): the per-lane pieces of
vectorised code (``map_lanes``, ``stack_steps``) may give tuples, whose
cotangents were added with ``+`` (concatenated); a list of tuples whose
other items were not read has a symbolic-zero cotangent item.  Against
central finite differences.  (vmap's loop over examples taking an example
of a dict argument with ``lane_item``, which had no derivative rule: the
shrunk program fuzz_regressions/seed_150092_grad_vmap.py.)"""
import numpy as np

import tangent_x as tx


def enumerated(x):
    pairs = list(enumerate(x))
    lst = [0.5 * (0.5 + u) * w for u, w in pairs]
    return sum(t * 0.5 for t in lst[1:])


def zipped(x):
    pairs = list(zip(x, np.cos(x)))
    return sum(a * b for a, b in pairs[::-1]) + pairs[0][1]


def fd(fn, x, eps=1e-6):
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        d = np.zeros_like(x)
        d[i] = eps
        g[i] = (fn(x + d) - fn(x - d)) / (2 * eps)
    return g


batched_enumerated, batched_zipped = tx.vmap(enumerated), tx.vmap(zipped)


def total_enumerated(xs):
    return np.sum(batched_enumerated(xs))


def total_zipped(xs):
    return np.sum(batched_zipped(xs))


def test_grad_of_vmapped_sum_through_lists_of_tuples():
    xs = np.linspace(-1.0, 1.2, 6).reshape(2, 3)
    for f, total in ((enumerated, total_enumerated), (zipped, total_zipped)):
        expected = fd(lambda xs: sum(f(x) for x in xs), xs)
        np.testing.assert_allclose(tx.grad(total)(xs), expected, rtol=1e-6, atol=1e-8)


def positives(x):
    return np.sum(np.array([v * v for v in x if v > 0]))   # a length per example


def test_vmap_of_a_comprehension_filtered_on_data_runs_per_example():
    """A list appended to on one side of a per-example ``if`` has a length
    per example: vmap runs the function once per example (before: a crash
    in ``select_lanes``, the lanes' lists of different lengths)."""
    xs = np.array([[1.0, -2.0, 3.0], [-1.0, 0.5, 2.0], [-1.0, -0.5, -2.0]])
    np.testing.assert_allclose(tx.vmap(positives)(xs), [positives(x) for x in xs], rtol=1e-15)
    expected = np.stack([fd(positives, x) for x in xs])
    np.testing.assert_allclose(tx.vmap(tx.grad(positives))(xs), expected, rtol=1e-6, atol=1e-8)


def pairs_last_read(x, y):
    pairs = []
    for i in range(3):
        pairs.append((x * (1.0 + 0.25 * i), y))
    return np.sum(pairs[2][0]) * np.sum(pairs[-1][1])


def test_vmap_grad_of_a_list_of_pairs_only_its_last_read():
    """The cotangent of a list of pairs of which only the last is read is
    ``[None, None, (a, b)]``: a None stands for a whole pair.  vmap paired
    the per-leaf batch flags (two a pair) with its leaves (one a None), so
    the batched ``a`` and ``b`` were taken for shared ones and given the
    batch axis again: vmap(grad) was batch-size times too large (program
    generator, seed 171112: 4x with 4 examples)."""
    rng = np.random.default_rng(0)
    xs, ys = rng.normal(size=(4, 2)), rng.normal(size=(4, 3))
    got = tx.vmap(tx.grad(pairs_last_read, argnums=(0, 1)))(xs, ys)
    for k in range(4):
        gx = fd(lambda x: pairs_last_read(x, ys[k]), xs[k])
        gy = fd(lambda y: pairs_last_read(xs[k], y), ys[k])
        np.testing.assert_allclose(got[0][k], gx, rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(got[1][k], gy, rtol=1e-6, atol=1e-8)


def array_of_pairs(x):
    pairs = []
    for i in range(2):
        pairs.append((1.0 + 0.25 * i, x * x))
    arr = np.array(pairs)
    return np.sum(arr[:, 0] * arr[:, 1]) + arr[-1, 0]


batched_array_of_pairs = tx.vmap(array_of_pairs)


def test_grad_of_vmapped_sum_through_an_array_of_a_list_of_pairs():
    """``np.array(pairs)`` of a list of pairs runs once per example inside
    vmap; grad of that loop handed each example's array cotangent back to
    the list of pairs as it was, an array (an IndexError in generated code;
    program generator, CI seed 233)."""
    xs = np.array([0.3, -0.7, 1.1])
    expected = fd(lambda xs: sum(array_of_pairs(x) for x in xs), xs)
    np.testing.assert_allclose(tx.grad(lambda xs: np.sum(batched_array_of_pairs(xs)))(xs),
                               expected, rtol=1e-6, atol=1e-8)
