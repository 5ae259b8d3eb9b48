"""jacfwd and jacrev of the fuzzer's shrunk jac failures (jac_found_programs),
against central finite differences computed here."""
import numpy as np
import pytest

import tangent_x as tx
import jac_found_programs as progs
from fuzzing.oracles import compare, leaves, rebuild, stable_fd


def fd_jacobian(f, args):
    """d f(*args) / d args[0], JAX's layout (output shape + input shape)."""
    x0, rest = args[0], args[1:]

    def at_step(eps):
        cols = []
        for i in range(int(np.size(x0))):
            def at(d):
                x = np.array(x0, np.float64)
                x.reshape(-1)[i] += d
                return f(x if np.ndim(x0) else float(x), *rest)
            hi, lo = at(eps), at(-eps)
            cols.append([(np.asarray(h, np.float64) - np.asarray(l, np.float64)) / (2 * eps)
                         for h, l in zip(leaves(hi), leaves(lo))])
        out = f(*args)
        return rebuild(out, [np.stack([c[k] for c in cols], axis=-1).reshape(
            np.shape(o) + np.shape(x0)) for k, o in enumerate(leaves(out))])
    return stable_fd(at_step)


CASES = {
    "reversed_after_dead_branch": (
        progs.reversed_after_dead_branch,
        lambda rng: (rng.normal(size=(2, 3)), rng.normal(size=2), 0.414)),
    "loop_accumulator_meets_batched": (
        progs.loop_accumulator_meets_batched, lambda rng: (-0.524, -0.188)),
    "scan_outputs_and_unrelated_leaf": (
        progs.scan_outputs_and_unrelated_leaf,
        lambda rng: (-0.086, rng.normal(size=3), rng.normal(size=(2, 3)),
                     {'w': rng.normal(size=(2, 3)), 'b': np.array(-0.581)})),
    "scan_carry_read_only_by_dead_branch": (
        progs.scan_carry_read_only_by_dead_branch, lambda rng: (rng.normal(size=3),)),
    "zip_item_unused": (
        progs.zip_item_unused, lambda rng: (rng.normal(size=3), rng.normal(size=2))),
}


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("which", ["jacfwd", "jacrev"])
def test_jacobian_matches_finite_differences(name, which):
    f, make_args = CASES[name]
    args = make_args(np.random.default_rng(0))
    expected = fd_jacobian(f, args)
    compare(getattr(tx, which)(f)(*args), expected, 1e-5, 1.0, which)
