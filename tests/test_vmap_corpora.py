"""vmap of every function in the foundation and control-flow corpora, over a
batch of its first argument (the others shared), against a Python loop."""
import importlib
import os
import pkgutil
import sys

import numpy as np
import pytest

import tangent_x as tx

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # corpora
import cf_corpus  # noqa: E402
import corpus  # noqa: E402

for _pkg in (corpus, cf_corpus):
    for _m in pkgutil.iter_modules(_pkg.__path__):
        importlib.import_module(f"{_pkg.__name__}.{_m.name}")

def _batchable(case):
    if case.reference is not case.fn:     # not plain NumPy (x.at[...]): no loop reference
        return False
    return isinstance(case.args(0)[0], (float, np.ndarray))


CASES = [c for c in list(corpus.CASES) + list(cf_corpus.CASES) if _batchable(c)]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_vmap_over_first_argument_matches_loop(case):
    args = case.args(0)
    first = args[0]
    batch = [first + 0.01 * k * np.ones_like(first) for k in range(4)]
    in_axes = (0,) + (None,) * (len(args) - 1)
    vf = tx.vmap(case.fn, in_axes=in_axes)
    with np.errstate(all="ignore"):
        expected = [case.fn(b, *args[1:]) for b in batch]
        got = vf(np.stack(batch), *args[1:])
    stacked = tx.tree_util.tree_map(lambda *leaves: np.stack([np.asarray(a) for a in leaves]),
                                    *expected)
    got_leaves, want_leaves = tx.tree_util.tree_leaves(got), tx.tree_util.tree_leaves(stacked)
    assert len(got_leaves) == len(want_leaves)
    for g, w in zip(got_leaves, want_leaves):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12, equal_nan=True)
