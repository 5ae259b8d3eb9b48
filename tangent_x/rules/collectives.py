"""Rules for JAX's collectives: psum, pmean, pmax, pmin, all_gather,
psum_scatter, ppermute, axis_index.

Reverse mode, JAX's transposes: psum's is psum (each device's output is the
sum of every device's input, so every device's input receives every
device's cotangent), pmean's pmean, all_gather's psum_scatter (the sum over
devices, each keeping its own slice) and back, ppermute's the inverse
permutation.  axis_index has no derivative (an integer).

pmax and pmin are beyond JAX (it has no rule).  Tie rule: the devices
holding the extreme value *share* the cotangent equally, like NumPy's
``np.max`` rule here: with ``share = (x == ans)``, ``x_bar = psum(g) *
share / psum(share)`` (every device's cotangent flows to the winners);
forward mode is the same average of the winners' tangents.

Forward mode: every collective but pmax/pmin is linear in ``x``: its
tangent is the same collective of ``x_dot``.

Batching (``vmap(f, axis_name='i')``, JAX has it): a collective over the
vmapped axis becomes NumPy over the batch axis -- psum is ``np.sum(x,
axis=0)``, unbatched (every example sees the same sum); all_gather is the
batch itself; axis_index is ``np.arange(batch_size)``; ppermute moves
examples (``out[d] = x[s]`` per pair, zeros elsewhere).  A collective over
another axis (an enclosing pmap's, or an outer vmap's) acts on each example
alone, so it stays, on the batched value (all_gather's ``axis`` shifted
past the batch axis).  A tuple of axis names reduces over this vmap's axis
here and leaves the others to their own maps.
"""
import gast
import numpy as np

from .. import lax
from ..core import ir
from ..core.builders import assign
from ..errors import TransformError
from .batching_util import NO_VALUE, bound_args, call, constant_atom, static_value, with_args
from .forward_util import linear
from .registry import adjoint, batching, tangent_maker

_OBJECTS = (lax.psum, lax.pmean, lax.pmax, lax.pmin, lax.all_gather, lax.psum_scatter,
            lax.ppermute, lax.collectives.ppermute_inverse, lax.axis_index)
NAMES = frozenset(("psum", "pmean", "pmax", "pmin", "all_gather", "psum_scatter", "ppermute",
                   "ppermute_inverse", "axis_index"))


# --- reverse mode ------------------------------------------------------------

@adjoint(lax.psum)
def _(g, ans, x, axis_name, axis_index_groups=None):
    x_bar = lax.psum(g, axis_name)


@adjoint(lax.pmean)
def _(g, ans, x, axis_name, axis_index_groups=None):
    x_bar = lax.pmean(g, axis_name)


@adjoint(lax.pmax, lax.pmin)
def _(g, ans, x, axis_name, axis_index_groups=None):
    """The devices holding the extreme value share the cotangent equally."""
    share = np.where(x == ans, 1.0, 0.0)
    x_bar = lax.psum(g, axis_name) * share / lax.psum(share, axis_name)


@adjoint(lax.all_gather)
def _(g, ans, x, axis_name, axis_index_groups=None, axis=0, tiled=False):
    x_bar = lax.psum_scatter(g, axis_name, scatter_dimension=axis, tiled=tiled)


@adjoint(lax.psum_scatter)
def _(g, ans, x, axis_name, scatter_dimension=0, axis_index_groups=None, tiled=False):
    x_bar = lax.all_gather(g, axis_name, axis=scatter_dimension, tiled=tiled)


@adjoint(lax.ppermute)
def _(g, ans, x, axis_name, perm):
    x_bar = lax.ppermute_inverse(g, axis_name, perm)


@adjoint(lax.collectives.ppermute_inverse)
def _(g, ans, x, axis_name, perm):
    x_bar = lax.ppermute(g, axis_name, perm)


# --- forward mode --------------------------------------------------------------

linear(lax.psum, lax.pmean, lax.all_gather, lax.psum_scatter, lax.ppermute,
       lax.collectives.ppermute_inverse, args=((0, "x"),))


@tangent_maker(lax.pmax, lax.pmin)
def _(eqn, fwd):
    """The winners' tangents, averaged over the devices that tie."""
    primal = ir.spell(eqn)
    x = eqn.args[0]
    x_dot = fwd.dot_of(x)
    if x_dot is None:
        return primal
    axis = eqn.args[1] if len(eqn.args) > 1 else eqn.kwargs["axis_name"]
    share = fwd.namer.fresh("share")
    share_sum = share + "_sum"
    ans = ir.name(eqn.out)
    return primal + [
        assign(share, call("np.where", gast.Compare(left=x, ops=[gast.Eq()],
                                                      comparators=[ans]),
                           constant_atom(1.0), constant_atom(0.0))),
        assign(share_sum, call("lax.psum", ir.name(share), axis)),
        assign(fwd.new_dot(eqn.out),
               gast.BinOp(left=call("lax.psum", gast.BinOp(left=x_dot, op=gast.Mult(),
                                                             right=ir.name(share)), axis),
                          op=gast.Div(), right=ir.name(share_sum))),
    ]


# --- batching --------------------------------------------------------------------

def axis_names(eqn, b):
    """The collective's axis names, a tuple of static values."""
    args = bound_args(eqn)
    value = _constant(b, args["axis_name"])
    if value is NO_VALUE:
        raise TransformError(f"lax.{eqn.prim.name} under vmap needs its axis_name written as "
                             "a constant", eqn.origin,
                             "write the axis name literally, e.g. lax.psum(x, 'i')")
    return tuple(value) if isinstance(value, tuple) else (value,)


def own_axis(eqn, b):
    """Whether the collective spans the axis this vmap maps (``b.axis_name``)."""
    if eqn.prim.name not in NAMES:
        return False
    mine = getattr(b, "axis_name", None)
    return mine is not None and mine in axis_names(eqn, b)


_REDUCE = {"psum": "np.sum", "pmean": "np.mean", "pmax": "np.max", "pmin": "np.min"}


@batching(*_OBJECTS)
def _(eqn, b):
    op = eqn.prim.name
    args = bound_args(eqn)
    if not own_axis(eqn, b):
        return _per_example(eqn, b, args)
    names = axis_names(eqn, b)
    rest = tuple(n for n in names if n != b.axis_name)
    out = eqn.out
    if op == "axis_index":
        b.mark(out)
        return [assign(out, call("np.arange", b.batch_size))]
    x = args["x"]
    batched = b.batched(x)
    if op in _REDUCE:
        if batched:
            value = call(_REDUCE[op], x, axis=constant_atom(0))
        elif op == "psum":
            value = gast.BinOp(left=x, op=gast.Mult(), right=b.batch_size)
        else:
            value = x
        if rest:
            value = call(f"lax.{op}", b.let(f"{out}_{b.axis_name}", value, flag=False),
                         constant_atom(rest if len(rest) > 1 else rest[0]))
        b.mark(out, False)
        return [assign(out, value)]
    if rest:
        raise TransformError(f"lax.{op} over several axes {names} is not supported",
                             eqn.origin, "apply it over one axis at a time")
    if op == "all_gather":
        axis = _static_param(eqn, b, args, "axis", 0)
        tiled = _static_param(eqn, b, args, "tiled", False)
        if not batched:
            x = b.let(f"{out}_lanes", call("np.broadcast_to", x, _lanes_shape(b, x)))
        b.mark(out, False)
        if tiled:
            return [assign(out, call("np.concatenate", x, axis=constant_atom(axis)))]
        return [assign(out, call("np.moveaxis", x, constant_atom(0), constant_atom(axis)))]
    if op == "psum_scatter":
        # example k keeps entry (block, if tiled) k of the sum along ``dim``
        dim = _static_param(eqn, b, args, "scatter_dimension", 0)
        summed = (call("np.sum", x, axis=constant_atom(0)) if batched
                  else gast.BinOp(left=x, op=gast.Mult(), right=b.batch_size))
        total = b.let(f"{out}_total", summed, flag=False)
        b.mark(out)
        if not _static_param(eqn, b, args, "tiled", False):
            return [assign(out, call("np.moveaxis", total, constant_atom(dim),
                                     constant_atom(0)))]
        front = b.let(f"{out}_front", call("np.moveaxis", total, constant_atom(dim),
                                           constant_atom(0)), flag=False)
        blocks_shape = gast.BinOp(
            left=gast.Tuple(elts=[b.batch_size, constant_atom(-1)], ctx=gast.Load()),
            op=gast.Add(), right=gast.Subscript(value=call("np.shape", front),
                                                slice=gast.Slice(lower=constant_atom(1),
                                                                 upper=None, step=None),
                                                ctx=gast.Load()))
        blocks = b.let(f"{out}_blocks", call("np.reshape", front, blocks_shape))
        return [assign(out, call("np.moveaxis", blocks, constant_atom(1),
                                 constant_atom(dim + 1 if dim >= 0 else dim)))]
    if op in ("ppermute", "ppermute_inverse"):
        pairs = _static_perm(b, args["perm"])
        if pairs is not None:
            if op == "ppermute_inverse":
                pairs = [(d, s) for s, d in pairs]
            if not batched:
                x = b.let(f"{out}_lanes", call("np.broadcast_to", x, _lanes_shape(b, x)))
            b.mark(out)
            # example d gets example s's value; an example no pair sends to: zeros
            made = [assign(out, call("np.zeros_like", x))]
            for s, d in pairs:
                made.append(assign(gast.Subscript(value=ir.name(out), slice=constant_atom(d),
                                                  ctx=gast.Store()),
                                   gast.Subscript(value=x, slice=constant_atom(s),
                                                  ctx=gast.Load())))
            return made
    raise TransformError(f"lax.{op} over the axis a vmap maps is not supported by tangent_x "
                         f"in this form", eqn.origin,
                         "pmap the function instead, or write it with psum/all_gather")


def _per_example(eqn, b, args):
    """A collective over another map's axis: the same call on every example."""
    op = eqn.prim.name
    b.mark(eqn.out, b.flag(args.get("x")))
    if op == "all_gather":
        axis = _static_param(eqn, b, args, "axis", 0)
        return with_args(eqn, axis=constant_atom(axis + 1 if axis >= 0 else axis))
    if op == "psum_scatter":
        dim = _static_param(eqn, b, args, "scatter_dimension", 0)
        return with_args(eqn, scatter_dimension=constant_atom(dim + 1 if dim >= 0 else dim))
    return ir.spell(eqn)


def _static_param(eqn, b, args, key, default):
    if key not in args:
        return default
    value = static_value(b, args[key])
    if value is NO_VALUE:
        raise TransformError(f"lax.{eqn.prim.name}(..., {key}=...) under vmap needs a "
                             "constant", eqn.origin, f"write {key} literally")
    return value


def _constant(b, atom):
    """A value the code fixes (a literal, or a tuple/list of literals), else
    NO_VALUE: never a value the probe saw, which may come from an argument
    the cached code does not depend on."""
    value = static_value(b, atom)
    return b.constant(atom) if value is NO_VALUE else value


def _static_perm(b, atom):
    """ppermute's (source, destination) pairs when the code fixes them."""
    value = _constant(b, atom)
    if value is NO_VALUE:
        return None
    return [(int(s), int(d)) for s, d in value]


def _lanes_shape(b, x):
    """``(batch_size, *np.shape(x))`` as an expression."""
    return gast.BinOp(left=gast.Tuple(elts=[b.batch_size], ctx=gast.Load()), op=gast.Add(),
                      right=call("np.shape", x))
