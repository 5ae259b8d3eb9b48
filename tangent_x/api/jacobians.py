"""jacfwd, jacrev and hessian, built from jvp and vjp, batched by vmap.

jacfwd is ``vmap`` of the generated jvp over a batch of one-hot tangents
(one per input element); jacrev runs one forward pass and ``vmap`` of the
generated backward function over a batch of one-hot cotangents (one per
output element).  Where vmap cannot batch the code (a TransformError: e.g.
branches returning containers of mixed batched and shared values) they
loop over the basis vectors instead.  Shapes follow JAX: the Jacobian of an output leaf of shape
``o`` with respect to an input leaf of shape ``i`` has shape ``o + i``; the
result is a pytree shaped like the output whose leaves are pytrees shaped
like the inputs (a tuple of them when ``argnums`` is a tuple).
"""
import functools
import weakref

import numpy as np

from .. import tree_util
from .boundary import check_inputs
from .derivatives import grad
from .transformed import Unspecialized, argnums_tuple, cached, call_with_extra, extra_in_axes
from ..core.arguments import refuse_masked
from ..errors import TransformError, call_site
from .jacobian_source import JacobianSource
from .vmap import vmap


def _basis(leaves):
    """One-hot tangents: for each element of each leaf, (leaf index, tangents)."""
    for j, leaf in enumerate(leaves):
        size = int(np.size(leaf))
        for k in range(size):
            tangents = [np.zeros_like(np.asarray(x, dtype=float)) for x in leaves]
            flat = tangents[j].reshape(-1)
            flat[k] = 1.0
            yield j, tangents


def _assemble(out, columns_per_leaf, in_leaves, in_tree, single, axis_last):
    """Stack per-element derivatives into JAX's nested Jacobian structure."""
    out_leaves, out_tree = tree_util.tree_flatten(out)
    blocks = []
    for o, out_leaf in enumerate(out_leaves):
        per_input = []
        for j, in_leaf in enumerate(in_leaves):
            cols = [np.asarray(c[o]) for c in columns_per_leaf[j]]
            o_shape, i_shape = np.shape(out_leaf), np.shape(in_leaf)
            if axis_last:      # columns: d out / d in_k, each of the output's shape
                block = np.stack(cols, axis=-1) if cols else np.zeros(o_shape + (0,))
                block = block.reshape(o_shape + i_shape)
            else:              # rows: d out_k / d in, each of the input's shape
                block = np.stack(cols, axis=0) if cols else np.zeros((0,) + i_shape)
                block = block.reshape(o_shape + i_shape)
            per_input.append(block)
        inner = tree_util.tree_unflatten(in_tree, per_input)
        blocks.append(inner[0] if single else tuple(inner))
    return tree_util.tree_unflatten(out_tree, blocks)


def _one_hots(leaves):
    """Every one-hot basis vector of the flattened leaves, as a batch: leaf
    ``j`` of the result has shape ``(n,) + shape(leaf_j)``, ``n`` the total size."""
    sizes = [int(np.size(leaf)) for leaf in leaves]
    n = sum(sizes)
    eye = np.eye(n)
    out, offset = [], 0
    for leaf, size in zip(leaves, sizes):
        out.append(eye[:, offset:offset + size].reshape((n,) + np.shape(leaf)))
        offset += size
    return out, sizes


def _split_batch(batch_leaves, sizes):
    """Rows ``offset..offset+size`` of every leaf, per input leaf: the
    columns ``_assemble`` expects, one list entry per basis vector."""
    columns, offset = [], 0
    for size in sizes:
        columns.append([[leaf[offset + k] for leaf in batch_leaves] for k in range(size)])
        offset += size
    return columns


def _jvp_batched(transformed, args, nums, in_leaves, in_tree, wrap):
    """(out, columns) from one vmapped jvp over all one-hot tangents, or None
    where vmap cannot batch this code (or there is nothing to batch)."""
    basis, sizes = _one_hots(in_leaves)
    if not sum(sizes):
        return None
    tangents = tree_util.tree_unflatten(in_tree, basis)
    wrt = [args[i] for i in nums]
    rest = [a for i, a in enumerate(args) if i not in nums]
    in_axes = (None,) * len(wrt) + (0,) * len(wrt) + (None,) * len(rest)
    try:
        out, out_dot = _vmapped(transformed, in_axes, wrap)(*wrt, *tangents, *rest)
    except TransformError:
        return None
    out = tree_util.tree_map(lambda a: a[0], out)
    dot_leaves = tree_util.tree_leaves(out_dot)
    if len(dot_leaves) != len(tree_util.tree_leaves(out)):   # symbolic zeros inside
        return None
    return out, _split_batch(dot_leaves, sizes)


_VMAPPED = weakref.WeakKeyDictionary()


def _vmapped(fun, in_axes, wrap=None):
    """One vmap per (function, in_axes, wrap), so its specialisations (and,
    under jit, its compiled code) are reused."""
    table = _VMAPPED.setdefault(fun, {})
    key = (in_axes, wrap)
    if key not in table:
        batched = vmap(fun, in_axes=in_axes)
        table[key] = wrap(batched) if wrap is not None else batched
    return table[key]


def _driver(jacobian, rebuild, source=None):
    """Mark ``jacobian`` as Python driver code around generated functions.

    A Jacobian is a few NumPy calls (one-hot bases, stacking) around one
    batched derivative: vmap loops over the driver (``__tangent_x_loop__``),
    and ``jit`` rebuilds the driver with its batched derivative compiled
    (``__tangent_x_rebuild__(wrap)``: ``wrap`` is applied to each generated
    callable the driver runs), rather than compiling NumPy glue code whose
    shapes Numba would have to re-derive.  *Why a rebuild with ``wrap``,
    not a flag the helpers consult:* the compiled pieces are cached per
    (function, wrap), so an eager Jacobian and a jitted one of the same
    function never share or evict each other's pieces, and nothing depends
    on which thread or ``with`` block the driver runs in."""
    jacobian.__tangent_x_loop__ = True
    jacobian.__tangent_x_rebuild__ = rebuild
    # another transform of the Jacobian reads its plain-source form
    # (``jacobian_source``), for the arguments of the latest eager call
    if source is not None:
        jacobian.__tangent_x__ = source
    return jacobian


def _check_and_specialize(which, fun, source, nums, args, kwargs):
    """What a Jacobian driver does first: refuse masked and wrong inputs
    with located errors, then (positional arguments only) ``_specialize``."""
    refuse_masked(which, fun, args, kwargs)
    check_inputs(which, fun, args, nums)
    if not kwargs:
        _specialize(fun, source, args)


def _specialize(fun, source, args):
    """Specialise for ``args`` the source forms a transform reads: ``fun``'s
    where it is a transformed function whose code depends on its
    arguments' structure (a Jacobian, a vmapped function), which this
    call's batched derivative of ``fun`` reads now; and the Jacobian's own
    (``source``), only noted: it is built when a transform asks for it."""
    inner = getattr(fun, "__tangent_x__", None)
    if hasattr(inner, "specialize"):
        inner.specialize(*args)
    if source is not None:
        source.note(*args)


def _no_aux(which, fun, has_aux):
    """``has_aux`` is JAX's signature, not yet tangent_x's: say so rather
    than treat ``(value, aux)`` as the output to differentiate."""
    if has_aux:
        raise NotImplementedError(
            f"{which}({getattr(fun, '__name__', 'f')}, has_aux=True) is not supported yet: "
            f"differentiate a function returning only the value, or use "
            f"tx.value_and_grad(..., has_aux=True) / tx.vjp(..., has_aux=True)")


def jacfwd(fun, argnums=0, has_aux=False):
    """Jacobian by forward mode: one jvp per input element."""
    _no_aux("jacfwd", fun, has_aux)
    return _shared("jacfwd", fun, argnums, _jacfwd)


_SHARED = weakref.WeakKeyDictionary()


def _shared(which, fun, argnums, driver):
    """One Jacobian per (function, kind, argnums): a ``tx.jacrev(f)`` made
    inside a transformed function (a new object at each run) is the one
    the eager run specialised (``JacobianSource.specialize``), so the
    transform can read its source form."""
    nums, single = argnums_tuple(argnums)
    try:
        table = _SHARED.setdefault(fun, {})
    except TypeError:
        table = {}
    key = (which, nums, single)
    where = call_site()
    if key not in table:
        table[key] = driver(fun, argnums, None, JacobianSource(which, fun, nums, where,
                                                               tuple_argnums=not single))
    else:       # its refusals name the latest line that made it
        table[key].__tangent_x__._call_site = where
    return table[key]


def _jacfwd(fun, argnums, wrap, source=None):
    """jacfwd's driver; ``wrap`` (None eagerly, ``jit`` under jit: see
    ``_driver``) is applied to the generated callables it runs."""
    nums, single = argnums_tuple(argnums)

    @functools.wraps(fun)
    def jacobian(*args, **kwargs):
        _check_and_specialize("jacfwd", fun, source, nums, args, kwargs)
        transformed = cached(fun, "jvp", nums, lambda out, a: out)
        wrt = [args[i] for i in nums]
        in_leaves, in_tree = tree_util.tree_flatten(list(wrt))
        # keyword arguments pass through, not differentiated (as in JAX);
        # vmap takes positional ones only, so with them: one jvp per column
        batched = None if kwargs else \
            _jvp_batched(transformed, args, nums, in_leaves, in_tree, wrap)
        if batched is not None:
            out, columns = batched
            return _assemble(out, columns, in_leaves, in_tree, single, axis_last=True)
        columns = [[] for _ in in_leaves]
        out = None
        one = _once(transformed, wrap) if wrap is not None else transformed
        for j, tangent_leaves in _basis(in_leaves):
            tangents = tree_util.tree_unflatten(in_tree, tangent_leaves)
            out, out_dot = call_with_extra(one, args, nums, tangents, **kwargs)
            columns[j].append(tree_util.tree_leaves(out_dot))
        if out is None:
            out = fun(*args, **kwargs)
        return _assemble(out, columns, in_leaves, in_tree, single, axis_last=True)

    return _driver(jacobian, lambda w: _jacfwd(fun, argnums, w, source), source)


_ONCE = weakref.WeakKeyDictionary()


def _once(fun, wrap):
    """``wrap(fun)``, made once per (function, wrap)."""
    table = _ONCE.setdefault(fun, {})
    if wrap not in table:
        table[wrap] = wrap(fun)
    return table[wrap]


def _vjp_batched(backward, residuals, out_leaves, out_tree, in_leaves, in_tree, single):
    """The Jacobian from one vmapped backward pass over all one-hot
    cotangents, or None where vmap cannot batch the backward code."""
    basis, sizes = _one_hots(out_leaves)
    if not sum(sizes):
        return None
    cotangents = tree_util.tree_unflatten(out_tree, basis)
    try:
        grads = _vmapped(backward, (None, 0))(residuals, cotangents)
    except TransformError:
        return None
    grads = grads if isinstance(grads, tuple) else (grads,)
    grad_leaves = tree_util.tree_leaves(list(grads))
    if len(grad_leaves) != len(in_leaves):    # symbolic zeros inside containers
        return None
    return _rev_blocks(grad_leaves, out_leaves, out_tree, sizes, in_leaves, in_tree, single)


def jacrev(fun, argnums=0, has_aux=False):
    """Jacobian by reverse mode: one forward pass, one backward pass per
    output element."""
    _no_aux("jacrev", fun, has_aux)
    return _shared("jacrev", fun, argnums, _jacrev)


def _jacrev(fun, argnums, wrap, source=None):
    """jacrev's driver (``wrap``: see ``_jacfwd``).  Eagerly: the generated
    forward pass once, then its backward pass batched over all one-hot
    cotangents.  Compiled, the backward function cannot be a piece of its
    own (its residuals hold the tapes, Python lists whose every entry would
    be one compiled argument), so ``_jacrev_wrapped`` runs the whole vjp,
    batched instead."""
    nums, single = argnums_tuple(argnums)

    @functools.wraps(fun)
    def jacobian(*args, **kwargs):
        _check_and_specialize("jacrev", fun, source, nums, args, kwargs)
        if wrap is not None:
            return _jacrev_wrapped(fun, args, nums, single, wrap, kwargs)
        # keyword arguments pass through, not differentiated (as in JAX):
        # the backward pass reads them from the residuals
        transformed = cached(fun, "vjp_split", nums, lambda out, a: out)
        out, residuals = transformed(*args, **kwargs)
        # the backward pass of the code that ran: for these arguments' kinds
        # (a dict argument) and structure (fuzz seed 611668: the generic
        # code's backward read another code's residuals)
        ran = transformed.generated_for(args, kwargs)
        backward = getattr(ran.module, ran.function.__name__.replace("vjp_fwd_", "vjp_bwd_"))
        wrt = [args[i] for i in nums]
        in_leaves, in_tree = tree_util.tree_flatten(list(wrt))
        out_leaves, out_tree = tree_util.tree_flatten(out)
        batched = _vjp_batched(backward, residuals, out_leaves, out_tree, in_leaves, in_tree,
                               single)
        if batched is not None:
            return batched
        rows = [[] for _ in in_leaves]
        for o, _ in enumerate(out_leaves):
            for k in range(int(np.size(out_leaves[o]))):
                cts = [np.zeros(np.shape(leaf)) for leaf in out_leaves]
                cts[o].reshape(-1)[k] = 1.0
                ct = tree_util.tree_unflatten(out_tree, [c if np.ndim(c) else float(c)
                                                         for c in cts])
                grads = backward(residuals, ct)
                grads = grads if isinstance(grads, tuple) else (grads,)
                leaves = tree_util.tree_leaves(list(grads))
                for j in range(len(in_leaves)):
                    rows[j].append((o, leaves[j]))
        per_leaf = [[[r for (oo, r) in rows[j] if oo == o] for o in range(len(out_leaves))]
                    for j in range(len(in_leaves))]
        blocks = []
        for o, out_leaf in enumerate(out_leaves):
            per_input = []
            for j, in_leaf in enumerate(in_leaves):
                rs = [np.asarray(r) for r in per_leaf[j][o]]
                block = np.stack(rs, axis=0).reshape(np.shape(out_leaf) + np.shape(in_leaf))
                per_input.append(block)
            inner = tree_util.tree_unflatten(in_tree, per_input)
            blocks.append(inner[0] if single else tuple(inner))
        return tree_util.tree_unflatten(out_tree, blocks)

    return _driver(jacobian, lambda w: _jacrev(fun, argnums, w, source), source)


def _jacrev_wrapped(fun, args, nums, single, wrap, kwargs=None):
    """jacrev with its pieces wrapped (compiled, under ``jit``): the primal
    for the output's structure, then one batched vjp (forward and backward
    in one generated function; vmap keeps the forward values unbatched, so
    the forward pass runs once) over all one-hot cotangents.  A vjp that vmap
    cannot batch runs once per cotangent instead."""
    kwargs = kwargs or {}
    out = _once(fun, wrap)(*args, **kwargs)
    full = cached(fun, "vjp", nums, lambda o, a: o)
    wrt = [args[i] for i in nums]
    in_leaves, in_tree = tree_util.tree_flatten(list(wrt))
    out_leaves, out_tree = tree_util.tree_flatten(out)
    basis, sizes = _one_hots(out_leaves)
    grad_leaves = None
    if sum(sizes) and not kwargs:     # (vmap takes positional arguments only)
        try:
            batched = _vmapped(full, extra_in_axes(len(args), nums, (0,)), wrap)
            _, grads = call_with_extra(batched, args, nums,
                                       [tree_util.tree_unflatten(out_tree, basis)])
            grads = grads if isinstance(grads, tuple) else (grads,)
            grad_leaves = tree_util.tree_leaves(list(grads))
        except TransformError:
            grad_leaves = None
    if grad_leaves is None or len(grad_leaves) != len(in_leaves):
        one = _once(full, wrap)
        per_ct = []
        for k in range(sum(sizes)):
            cts = [leaf[k] for leaf in basis]
            cts = [c if np.ndim(c) else float(c) for c in cts]
            _, grads = call_with_extra(one, args, nums, [tree_util.tree_unflatten(out_tree, cts)],
                                       **kwargs)
            grads = grads if isinstance(grads, tuple) else (grads,)
            per_ct.append([np.asarray(g, dtype=float) * np.ones(np.shape(leaf))
                           for g, leaf in zip(tree_util.tree_leaves(list(grads)), in_leaves)])
        grad_leaves = [np.stack([row[j] for row in per_ct]) if per_ct else
                       np.zeros((0,) + np.shape(leaf)) for j, leaf in enumerate(in_leaves)]
    return _rev_blocks(grad_leaves, out_leaves, out_tree, sizes, in_leaves, in_tree, single)


def hessian(fun, argnums=0):
    """JAX's hessian, ``jacfwd(jacrev(fun))``.  For a scalar output jacrev
    is the gradient, so that case is forward over ``grad`` (one backward
    pass, any pytree of arguments); other outputs (shape ``out + in + in``)
    are jacfwd of jacrev.  Which one: decided per structure of the
    arguments by one call of the gradient, whose output check says whether
    the output is a number (not a plain call of ``fun``: it would change
    arrays the function updates in place, and NumPy arrays have no
    ``.at``); ``jit`` of it is the rebuild of the one chosen: its batched
    jvp, compiled."""
    probe = grad(fun, argnums=argnums)
    by_grad = jacfwd(probe, argnums=argnums)
    by_jacrev = jacfwd(jacrev(fun, argnums=argnums), argnums=argnums)
    return _hessian(probe, by_grad, by_jacrev, {})


def _scalar_output(probe, args, kwargs):
    """Whether the function ``probe`` differentiates returns a number."""
    try:
        probe(*args, **kwargs)
    except TypeError as exc:
        if "scalar-output" not in str(exc):
            raise
        return False
    return True


def _hessian(probe, by_grad, by_jacrev, scalar):
    """hessian's driver over its two forms; ``scalar``: per structure of
    the arguments, whether the output is a number (``probe``: the
    function's gradient)."""
    fun = probe.__wrapped__ if hasattr(probe, "__wrapped__") else probe

    def pick(args, kwargs):
        key = tuple((type(a), np.shape(a)) for a in tree_util.tree_leaves((args, kwargs)))
        key = (tree_util.tree_structure((args, kwargs)), key)
        if key not in scalar:
            scalar[key] = _scalar_output(probe, args, kwargs)
        return by_grad if scalar[key] else by_jacrev

    source = _PickedSource(pick)

    @functools.wraps(fun)
    def hessian_of(*args, **kwargs):
        chosen = pick(args, kwargs)
        if not kwargs:
            source.note(*args)
        return chosen(*args, **kwargs)

    rebuild = lambda w: _hessian(probe, by_grad.__tangent_x_rebuild__(w),  # noqa: E731
                                 by_jacrev.__tangent_x_rebuild__(w), scalar)
    return _driver(hessian_of, rebuild, source)


class _PickedSource:
    """hessian's ``__tangent_x__``: the source form of the form it picks."""

    def __init__(self, pick):
        self._pick = pick
        self._latest = None

    def note(self, *args):
        self._latest = self._pick(args, {}).__tangent_x__
        self._latest.note(*args)

    def specialize(self, *args):
        self._latest = self._pick(args, {}).__tangent_x__
        return self._latest.specialize(*args)

    @property
    def generated(self):
        if self._latest is None:
            raise Unspecialized("the source form of hessian depends on the arguments' "
                                "shapes: call it once first (or pass example_args)")
        return self._latest.generated

    @property
    def function(self):
        return self.generated.function


def _rev_blocks(grad_leaves, out_leaves, out_tree, sizes, in_leaves, in_tree, single):
    """jacrev's result from the gradients of all one-hot cotangents (one
    stacked array per input leaf, rows in output order): JAX's nesting,
    output structure outside, input structure inside."""
    blocks, offset = [], 0
    for out_leaf, size in zip(out_leaves, sizes):
        per_input = [np.asarray(g[offset:offset + size]).reshape(np.shape(out_leaf) +
                                                                 np.shape(in_leaf))
                     for g, in_leaf in zip(grad_leaves, in_leaves)]
        offset += size
        inner = tree_util.tree_unflatten(in_tree, per_input)
        blocks.append(inner[0] if single else tuple(inner))
    return tree_util.tree_unflatten(out_tree, blocks)
