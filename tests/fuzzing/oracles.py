"""Checks of every transform on a generated program, each against a
reference that shares no code with the transform:

- the untransformed function, for the value of every transform;
- central finite differences (float64), for grad, jvp, vjp, jacfwd,
  jacrev and Hessian-vector products (float32 programs are compared with
  differences of the same program run in float64);
- a Python loop over examples, for vmap (in_axes None, 0, 1 and -1, and
  per leaf of a dict argument),
  vmap(grad) and the gradient of a vmapped sum;
- the eager transform, for the same transform under jit.

A check ends in one of: ``right``; ``wrong`` (a value, shape or dtype that
differs from the reference); ``refused`` (a ``TransformError`` naming the
program's file and line); ``crash`` (any other exception, or a refusal
that names no line of the program); ``skip`` (no fair reference: finite
differences at two step sizes disagree, as they do beside a branch's
threshold or a kink).
"""
import contextlib
import copy
import importlib.util
import os
import signal
import sys
import threading
import traceback

import numpy as np

import tangent_x as tx

B = 4                      # examples in a vmapped batch
FAST_MODES = ["grad", "jvp", "vjp", "jac", "hvp", "vmap", "vmap_grad", "grad_vmap"]
JIT_MODES = ["jit", "jit_grad", "jit_vmap"]
# run by hand (``tools/fuzz.py --modes all``), not in CI: a fourth compile a program
EXTRA_JIT_MODES = ["jit_vmap_grad"]
MODES = FAST_MODES + JIT_MODES + EXTRA_JIT_MODES
TIMEOUT = 60
JIT_TIMEOUT = 300          # Numba compiles a large generated function in a minute or more


class Verdict:
    def __init__(self, mode, status, detail=""):
        self.mode, self.status, self.detail = mode, status, detail

    def __repr__(self):
        return f"{self.mode}: {self.status}" + (f" ({self.detail})" if self.detail else "")


class Mismatch(Exception):
    """A transform's value differs from its reference."""


class NoReference(Exception):
    """The reference itself is not trustworthy at this point."""


# ---------------------------------------------------------------- pytrees of numbers
def leaves(tree):
    if isinstance(tree, dict):
        return [x for k in sorted(tree) for x in leaves(tree[k])]
    if isinstance(tree, (list, tuple)):
        return [x for t in tree for x in leaves(t)]
    return [tree]


def rebuild(tree, new):
    it = iter(new)

    def go(t):
        if isinstance(t, dict):
            vals = {k: go(t[k]) for k in sorted(t)}
            return {k: vals[k] for k in t}
        if isinstance(t, (list, tuple)):
            return type(t)(go(x) for x in t)
        return next(it)
    return go(tree)


def structure(tree):
    if isinstance(tree, dict):
        return ("dict", tuple(sorted(tree)), tuple(structure(tree[k]) for k in sorted(tree)))
    if isinstance(tree, (list, tuple)):
        return (type(tree).__name__, tuple(structure(x) for x in tree))
    return "*"


def like(tree, leaf_fn):
    return rebuild(tree, [leaf_fn(x) for x in leaves(tree)])


def as64(tree):
    return like(tree, lambda x: np.asarray(x, np.float64) if isinstance(x, np.ndarray)
                else float(x))


def compare(actual, expected, rtol, atol_scale, what, dtype_of=None):
    """Same structure, shapes and (where given) dtypes; values within
    ``rtol * max(1, |expected|max) `` elementwise."""
    if structure(actual) != structure(expected):
        raise Mismatch(f"{what}: structure {structure(actual)} != {structure(expected)}")
    exp_leaves = leaves(expected)
    scale = max([1.0] + [float(np.max(np.abs(e))) for e in exp_leaves if np.size(e)])
    for k, (a, e) in enumerate(zip(leaves(actual), exp_leaves)):
        if np.shape(a) != np.shape(e):
            raise Mismatch(f"{what}: leaf {k} has shape {np.shape(a)}, expected {np.shape(e)}")
        av = np.asarray(a)
        if not np.issubdtype(av.dtype, np.number):
            raise Mismatch(f"{what}: leaf {k} is {type(a).__name__}, not a number")
        if dtype_of is not None and np.asarray(leaves(dtype_of)[k]).dtype == np.float32 \
                and av.dtype != np.float32:
            raise Mismatch(f"{what}: leaf {k} has dtype {av.dtype}, expected float32")
        ev = np.asarray(e, dtype=np.float64)
        if not np.all(np.isfinite(av)) and np.all(np.isfinite(ev)):
            raise Mismatch(f"{what}: leaf {k} is not finite: {av}")
        err = np.max(np.abs(av.astype(np.float64) - ev)) if av.size else 0.0
        if err > rtol * atol_scale * scale:
            raise Mismatch(f"{what}: leaf {k} differs by {err:.3g}: got {np.round(av, 6).tolist()}, "
                           f"expected {np.round(ev, 6).tolist()}")


# ---------------------------------------------------------------- finite differences
def _perturbed(args, k, i, delta):
    flat = leaves(args)
    new = []
    for j, leaf in enumerate(flat):
        if j == k:
            a = np.array(leaf, dtype=np.float64)
            a.reshape(-1)[i] += delta
            new.append(a if np.ndim(leaf) else (float(a) if not isinstance(leaf, np.ndarray) else a))
        else:
            new.append(np.array(leaf, np.float64) if isinstance(leaf, np.ndarray) else leaf)
    return rebuild(args, new)


def fd_grad(fn, args, eps):
    """Gradient of scalar ``fn(*args)`` with respect to every leaf of
    ``args`` (a list), by central differences of step ``eps``."""
    out = []
    for k, leaf in enumerate(leaves(args)):
        g = np.zeros(np.shape(leaf))
        for i in range(int(np.size(leaf))):
            hi = fn(*_perturbed(args, k, i, eps))
            lo = fn(*_perturbed(args, k, i, -eps))
            g.reshape(-1)[i] = (float(hi) - float(lo)) / (2 * eps)
        out.append(g if isinstance(leaf, np.ndarray) else float(g))
    return rebuild(args, out)


def stable_fd(fn_of_eps):
    """A finite-difference reference, trusted where steps 1e-6 and 1e-5
    agree (they do not beside a threshold or a kink)."""
    small, large = fn_of_eps(1e-6), fn_of_eps(1e-5)
    _agree(small, large)
    return small


def _agree(small, large):
    try:
        compare(small, large, 1e-4, 1.0, "finite differences")
    except Mismatch:
        raise NoReference("finite differences at two steps disagree (a branch threshold or "
                          "kink beside the point)")


def compare_fd(actual, fn_of_eps, rtol, scale, what, dtype_of=None, steps=(1e-6, 1e-5)):
    """``compare`` with finite differences of step ``steps[0]``; on a
    mismatch, a second step decides between a wrong value and no fair
    reference (the differences themselves moving with the step)."""
    small = fn_of_eps(steps[0])
    try:
        compare(actual, small, rtol, scale, what, dtype_of)
    except Mismatch:
        _agree(small, fn_of_eps(steps[1]))
        raise


def fd_directional(fn, args, tangents, eps):
    plus = fn(*[_add(a, t, eps) for a, t in zip(args, tangents)])
    minus = fn(*[_add(a, t, -eps) for a, t in zip(args, tangents)])
    return rebuild(plus, [(np.asarray(p, np.float64) - np.asarray(m, np.float64)) / (2 * eps)
                          for p, m in zip(leaves(plus), leaves(minus))])


def _add(a, t, eps):
    if isinstance(a, dict):
        return {k: _add(a[k], t[k], eps) for k in a}
    if isinstance(a, np.ndarray):
        # (np.asarray: a 0-d array stays an array, which ``y += v`` changes
        # in place; NumPy's sum of 0-d arrays is a scalar, which it rebinds)
        return np.asarray(a.astype(np.float64) + eps * np.asarray(t, np.float64))
    return float(a) + eps * float(t)


# ---------------------------------------------------------------- the program as a module
def load(path):
    name = "fuzz_" + os.path.splitext(os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def random_like(tree, rng):
    return like(tree, lambda x: rng.uniform(-1, 1, size=np.shape(x)).astype(np.asarray(x).dtype)
                if isinstance(x, np.ndarray) else float(round(rng.uniform(-1, 1), 3)))


class Case:
    """A program loaded from its file, its arguments, and what the vmap
    modes map over (drawn from the seed)."""

    def __init__(self, path, args, seed):
        self.path = path
        self.module = load(path)
        # transforms get the program's own functions; references call them
        # on copies (a program may update an argument in place, as NumPy code
        # does, and the transforms promise never to change the caller's array)
        self.f, self.loss = self.module.f, self.module.loss
        self.ref_f, self.ref_loss = _on_copies(self.f), _on_copies(self.loss)
        self.args = list(args)
        self.seed = seed
        self.float32 = any(np.asarray(x).dtype == np.float32 for x in leaves(self.args))
        self.args64 = as64(self.args)
        rng = np.random.RandomState(seed + 7)
        self.argnums = tuple(range(len(self.args)))
        # vmap: which arguments are mapped and along which axis
        axes = []
        for a in self.args:
            rank = 0 if isinstance(a, dict) else np.ndim(a)
            choices = [None, 0, 0] + ([1, -1] if rank >= 1 else [])
            axes.append(choices[rng.randint(len(choices))])
        for i, a in enumerate(self.args):
            # a dict's leaves mapped one by one half of the time (parameters
            # shared, one of them per example)
            if isinstance(a, dict) and rng.random_sample() < 0.5:
                axes[i] = {k: [None, 0][rng.randint(2)] for k in a}
        if all(_unmapped(x) for x in axes):
            axes[rng.randint(len(axes))] = 0
        self.in_axes = tuple(axes)
        self.examples = [[_example_like(a, ax, rng) for a, ax in zip(self.args, axes)]
                         for _ in range(B)]
        self.batched = [_batch([ex[i] for ex in self.examples], a, ax)
                        for i, (a, ax) in enumerate(zip(self.args, axes))]
        # each example as vmap defines it: the batch's slice (``x[b]``, so
        # a scalar of a batched vector is a NumPy number, which ``op=``
        # rebinds, not a 0-d array it would change: fuzz seed 510792)
        self.examples = [[a if ax is None else _take(x, b, ax)
                          for a, x, ax in zip(self.args, self.batched, axes)]
                         for b in range(B)]

        self.harness = self._write_harness()

    def _write_harness(self):
        """A module beside the program with the functions of its checks that
        take the program's parameters by name (a transform reads source)."""
        params = ", ".join(f"a{i}" for i in range(len(self.args)))
        stem = os.path.splitext(self.path)[0]
        path = stem + "_harness.py"
        with open(path, "w") as out:
            out.write(f"import numpy as np\n\nimport tangent_x as tx\n"
                      f"from {self.module.__name__} import loss\n\n"
                      f"batched_loss = tx.vmap(loss, in_axes={self.in_axes!r})\n\n\n"
                      f"def total({params}):\n"
                      f"    return np.sum(batched_loss({params}))\n")
        return load(path)

    def rtol(self):
        return 2e-3 if self.float32 else 1e-5

    def exact(self):
        """Tolerance between two computations of the same thing (batched
        against a loop, compiled against eager): float32 sums in another
        order differ in the 7th digit."""
        return 1e-5 if self.float32 else 1e-7


def _on_copies(fn):
    def call(*args):
        return fn(*copy.deepcopy(args))
    return call


def _stack(values, axis):
    if isinstance(values[0], dict):
        return {k: _stack([v[k] for v in values], axis) for k in values[0]}
    return np.stack([np.asarray(v) for v in values], axis=axis)


def stack_tree(values):
    return rebuild(values[0], [np.stack([np.asarray(v) for v in vs])
                               for vs in zip(*[leaves(v) for v in values])])


# ---------------------------------------------------------------- modes
def check_grad(case):
    value, grads = tx.value_and_grad(case.loss, argnums=case.argnums)(*case.args)
    compare(value, case.ref_loss(*case.args), 1e-9 if not case.float32 else 1e-5, 1.0, "value",
            dtype_of=case.ref_loss(*case.args))
    compare_fd(tuple(grads), lambda eps: tuple(fd_grad(case.ref_loss, case.args64, eps)),
               case.rtol(), 1.0, "grad", dtype_of=tuple(case.args))


def check_jvp(case):
    rng = np.random.RandomState(case.seed + 11)
    tangents = random_like(case.args, rng)
    out, tout = tx.jvp(case.f, tuple(case.args), tuple(tangents))
    compare(out, case.ref_f(*case.args), 1e-9 if not case.float32 else 1e-5, 1.0, "jvp value",
            dtype_of=case.ref_f(*case.args))
    compare_fd(tout, lambda eps: fd_directional(case.ref_f, case.args64, as64(tangents), eps),
               case.rtol(), 1.0, "jvp tangent")


def check_vjp(case):
    rng = np.random.RandomState(case.seed + 13)
    out, fn = tx.vjp(case.f, *case.args)
    compare(out, case.ref_f(*case.args), 1e-9 if not case.float32 else 1e-5, 1.0, "vjp value")
    ct = like(out, lambda x: rng.uniform(-1, 1, size=np.shape(x)) if np.ndim(x) else
              float(rng.uniform(-1, 1)))
    got = fn(ct)

    def dot(*a):
        return sum(float(np.sum(np.asarray(o, np.float64) * c)) for o, c in
                   zip(leaves(case.ref_f(*a)), leaves(ct)))
    compare_fd(tuple(got), lambda eps: tuple(fd_grad(dot, case.args64, eps)),
               case.rtol(), 1.0, "vjp")


def check_jac(case):
    if isinstance(case.args[0], dict):
        raise NoReference("the first argument is a dict")
    x0, rest = case.args64[0], case.args64[1:]

    def fd(eps):
        cols = []
        for i in range(int(np.size(x0))):
            def at(d):
                x = np.array(x0, np.float64)
                x.reshape(-1)[i] += d
                x = x if np.ndim(x0) else float(x)
                return case.ref_f(x, *rest)
            hi, lo = at(eps), at(-eps)
            cols.append([(np.asarray(h, np.float64) - np.asarray(l, np.float64)) / (2 * eps)
                         for h, l in zip(leaves(hi), leaves(lo))])
        out = case.ref_f(*case.args64)
        jac = []
        for k, o in enumerate(leaves(out)):
            j = np.stack([c[k] for c in cols], axis=-1) if cols else np.zeros(np.shape(o) + (0,))
            jac.append(j.reshape(np.shape(o) + np.shape(x0)))
        return rebuild(out, jac)
    compare_fd(tx.jacfwd(case.f)(*case.args), fd, case.rtol(), 1.0, "jacfwd")
    compare_fd(tx.jacrev(case.f)(*case.args), fd, case.rtol(), 1.0, "jacrev")


def check_hvp(case):
    """Forward over reverse: the jvp of the gradient with respect to the
    first argument, along ``v`` (the other arguments' tangents zero)."""
    if case.float32 or isinstance(case.args[0], dict):
        raise NoReference("Hessian-vector products are checked on float64 array arguments")
    rng = np.random.RandomState(case.seed + 17)
    v = random_like(case.args[0], rng)
    zeros = [like(a, lambda x: np.zeros_like(x) if isinstance(x, np.ndarray) else 0.0)
             for a in case.args[1:]]
    g = tx.grad(case.loss, argnums=0)
    _, hv = tx.jvp(g, tuple(case.args), (v, *zeros))

    def fd(eps):
        return (np.asarray(g(_add(case.args[0], v, eps), *case.args[1:])) -
                np.asarray(g(_add(case.args[0], v, -eps), *case.args[1:]))) / (2 * eps)
    # differences of a gradient: larger steps
    compare_fd(hv, lambda eps: fd(eps) if np.ndim(case.args[0]) else float(fd(eps)),
               1e-4, 1.0, "hvp", steps=(1e-4, 1e-3))


def examples_run(case):
    """The vmap modes' reference is the program run example by example: an
    example on which the program itself raises (a name bound on one path
    only, fuzz seed 481437) has none."""
    for ex in case.examples:
        try:
            with np.errstate(all="ignore"):
                case.ref_loss(*ex)
        except Exception as e:      # noqa: BLE001 - the user's program raised
            raise NoReference(f"the program raises on an example: {type(e).__name__}: {e}")


def loop_over_examples(case, fn):
    return stack_tree([fn(*ex) for ex in case.examples])


def check_vmap(case):
    examples_run(case)
    got = tx.vmap(case.f, in_axes=case.in_axes)(*case.batched)
    compare(got, loop_over_examples(case, case.ref_f), case.exact(), 1.0,
            f"vmap in_axes={case.in_axes}",
            dtype_of=loop_over_examples(case, case.ref_f))


def check_vmap_grad(case):
    examples_run(case)
    g = tx.grad(case.loss, argnums=case.argnums)
    got = tx.vmap(g, in_axes=case.in_axes)(*case.batched)
    compare(tuple(got), loop_over_examples(case, g), case.exact(), 1.0,
            f"vmap(grad) in_axes={case.in_axes}")


def check_grad_vmap(case):
    total = case.harness.total        # np.sum(vmap(loss, in_axes)(...)), written beside the program
    examples_run(case)
    got = tx.grad(total, argnums=case.argnums)(*case.batched)

    def by_loop(*a):
        s = 0.0
        for b in range(B):
            ex = [x if ax is None else _take(x, b, ax) for x, ax in zip(a, case.in_axes)]
            s += float(case.ref_loss(*ex))
        return s
    compare_fd(tuple(got), lambda eps: tuple(fd_grad(by_loop, as64(case.batched), eps)),
               case.rtol(), B, f"grad of a vmapped sum in_axes={case.in_axes}")


def _take(x, b, axis):
    if isinstance(axis, dict):
        return {k: v if axis[k] is None else _take(v, b, axis[k]) for k, v in x.items()}
    if isinstance(x, dict):
        return {k: _take(v, b, axis) for k, v in x.items()}
    return np.take(x, b, axis=axis)


def _unmapped(axis):
    return axis is None or isinstance(axis, dict) and all(a is None for a in axis.values())


def _example_like(a, axis, rng):
    """One example's value of an argument mapped along ``axis`` (a dict of
    axes: leaf by leaf; None: the shared value itself)."""
    if isinstance(axis, dict):
        return {k: v if axis[k] is None else random_like(v, rng) for k, v in a.items()}
    return a if axis is None else random_like(a, rng)


def _batch(examples, a, axis):
    if isinstance(axis, dict):
        return {k: a[k] if axis[k] is None else _stack([ex[k] for ex in examples], axis[k])
                for k in a}
    return a if axis is None else _stack(examples, axis)


def check_jit(case):
    compare(tx.jit(case.f)(*case.args), case.ref_f(*case.args), 1e-9 if not case.float32 else 1e-5,
            1.0, "jit", dtype_of=case.ref_f(*case.args))


def check_jit_grad(case):
    g = tx.grad(case.loss, argnums=case.argnums)
    compare(tuple(tx.jit(g)(*case.args)), tuple(g(*case.args)), case.exact(), 1.0, "jit(grad)",
            dtype_of=tuple(case.args))


def check_jit_vmap(case):
    examples_run(case)
    got = tx.jit(tx.vmap(case.f, in_axes=case.in_axes))(*case.batched)
    want = loop_over_examples(case, case.ref_f)
    compare(got, want, case.exact(), 1.0, f"jit(vmap) in_axes={case.in_axes}", dtype_of=want)


def check_jit_vmap_grad(case):
    """Per-example gradients compiled: jit(vmap(grad)) against the eager
    per-example loop of grad."""
    examples_run(case)
    g = tx.grad(case.loss, argnums=case.argnums)
    got = tx.jit(tx.vmap(g, in_axes=case.in_axes))(*case.batched)
    want = loop_over_examples(case, g)
    compare(tuple(got), want, case.exact(), 1.0, f"jit(vmap(grad)) in_axes={case.in_axes}",
            dtype_of=want)


CHECKS = {"grad": check_grad, "jvp": check_jvp, "vjp": check_vjp, "jac": check_jac,
          "hvp": check_hvp, "vmap": check_vmap, "vmap_grad": check_vmap_grad,
          "grad_vmap": check_grad_vmap, "jit": check_jit, "jit_grad": check_jit_grad,
          "jit_vmap": check_jit_vmap, "jit_vmap_grad": check_jit_vmap_grad}


class Timeout(BaseException):
    """Not an Exception: no ``except Exception`` in the code under test hides it."""


def _alarm(signum, frame):
    raise Timeout()


@contextlib.contextmanager
def time_limit(seconds):
    """Raise Timeout in the main thread after ``seconds`` (where SIGALRM
    exists; elsewhere no limit)."""
    use_alarm = hasattr(signal, "SIGALRM") and \
        threading.current_thread() is threading.main_thread()
    if use_alarm:
        old = signal.signal(signal.SIGALRM, _alarm)
        signal.alarm(seconds)
    try:
        yield
    finally:
        if use_alarm:
            signal.alarm(0)
            signal.signal(signal.SIGALRM, old)


def run(case, mode):
    """The verdict of one mode on one case."""
    with time_limit(JIT_TIMEOUT if mode.startswith("jit") else TIMEOUT):
        return _run(case, mode)


def _run(case, mode):
    before = copy.deepcopy((case.args, case.batched))
    try:
        with np.errstate(all="ignore"):
            CHECKS[mode](case)
        after = (case.args, case.batched)
        if structure(after) != structure(before) or any(
                not np.array_equal(a, b) for a, b in zip(leaves(after), leaves(before))):
            case.args, case.batched = before
            return Verdict(mode, "wrong", "the transform changed the caller's arguments")
        return Verdict(mode, "right")
    except Mismatch as e:
        return Verdict(mode, "wrong", str(e))
    except NoReference as e:
        return Verdict(mode, "skip", str(e))
    except Timeout:
        return Verdict(mode, "crash", "no result within the time limit")
    except tx.TransformError as e:
        if os.path.basename(case.path) in str(e):
            return Verdict(mode, "refused", str(e).splitlines()[0][:300])
        return Verdict(mode, "crash", "unlocated TransformError: " + str(e).splitlines()[0][:300])
    except Exception as e:              # noqa: BLE001 - every other failure is a crash
        tb = traceback.extract_tb(e.__traceback__)
        where = f"{os.path.basename(tb[-1].filename)}:{tb[-1].lineno}" if tb else "?"
        return Verdict(mode, "crash", f"{type(e).__name__}: {str(e).splitlines()[0][:240] if str(e) else ''} "
                                      f"[at {where}]")
