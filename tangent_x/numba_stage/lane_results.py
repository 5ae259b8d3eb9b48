"""The results of ``jit(vmap)``'s loop over examples (``lane_loop``; the
CUDA launch too): the compiled leaves per argument in the example's order,
the lanes' dtypes of tagged code, and the pytree of batched results with
each batch at its ``out_axes``."""
import collections

import numpy as np

from .. import tree_util
from ..core.arguments import broadcast_prefix
from .overloads.promotion import DTYPE_CODES
from .specialize import Const, Dyn, Zero, av_leaves, children, is_container, rebuild

__all__ = ["finish", "lanes_untagged", "leaf_axes", "leaves", "outputs"]


def outputs(plan):
    """The number of compiled results of a plan."""
    return sum(1 for leaf in av_leaves(plan.out) if isinstance(leaf, Dyn))


def lanes_untagged(values, tags):
    """The batched results without the lanes' dtype codes of tagged code
    (``result_dtypes``): each tagged result in the dtype NumPy gives the
    examples' results stacked (float32 where every example's is, else
    float64: the compiled lanes hold each example's numbers exactly)."""
    if not tags:
        return values
    values = list(values)
    for leaf, position, _ in tags:
        codes = [int(c) for c in np.unique(values[position]) if c >= 0]
        if codes:
            dtype = np.result_type(*[DTYPE_CODES[c] for c in codes])
            if values[leaf].dtype != dtype:
                values[leaf] = values[leaf].astype(dtype)
    return values[:len(values) - len(tags)]


def keys(d):
    """A dict's keys in the order the example's code has them: the examples
    are made by ``tree_util.tree_map``, which visits (and rebuilds) a dict
    in sorted key order (an ``OrderedDict`` in its own order), so the
    example's code was compiled with its leaves in that order."""
    if type(d) in (dict, collections.defaultdict):
        return sorted(d)
    return list(d)


def leaves(value):
    """The compiled leaves of an argument, in ``flatten.Signature``'s order
    for an example (see ``keys``)."""
    if isinstance(value, dict):
        return [a for k in keys(value) for a in leaves(value[k])]
    if isinstance(value, (list, tuple)):
        return [a for v in value for a in leaves(v)]
    return [] if value is None else [value]


def leaf_axes(value, axes):
    """The axis of every leaf ``flatten.Signature`` makes of ``value``, in its order."""
    if isinstance(value, dict):
        return [a for k in keys(value) for a in leaf_axes(value[k], axes[k])]
    if isinstance(value, (list, tuple)):
        return [a for i, v in enumerate(value) for a in leaf_axes(v, axes[i])]
    if value is None:
        return []
    return [axes]


class Lane:
    """A leaf of the result while its batch axis is placed: ``batched`` says
    whether the compiled loop gave it one."""

    def __init__(self, value, batched):
        self.value = value
        self.batched = batched


def finish(out_av, values, size, out_axes, like):
    """The pytree of results: compiled leaves batched on axis 0 (in the
    dtype of ``like``, example 0's finished result), constants (the same
    for every example; a symbolic zero: its value in ``like``) given the
    batch axis, then every batch moved to its ``out_axes`` entry (as eager
    vmap's ``finish_lanes``)."""

    def build(av, like):
        if isinstance(av, Zero):
            return shared(like)
        if is_container(av):
            if isinstance(av, dict):      # the finished dict may order its keys otherwise
                return rebuild(av, [build(av[k], like[k]) for k in av])
            return rebuild(av, [build(c, l) for c, l in zip(children(av), children(like))])
        if isinstance(av, Dyn):
            value = values[int(av.name[1:])]
            dtype = getattr(like, "dtype", None)
            if dtype is not None and isinstance(value, np.ndarray) and value.dtype != dtype:
                value = value.astype(dtype)
            return Lane(value, True)
        if isinstance(av, Const) and av.value is None:
            return None
        return Lane(av.value, False)

    def shared(value):
        if value is None:
            return None
        if is_container(value):
            return rebuild(value, [shared(c) for c in children(value)])
        return Lane(value, False)

    tree = build(out_av, like)
    if out_axes is None or isinstance(out_axes, int):
        spec = tree_util.tree_map(lambda _: out_axes, tree)
    else:
        spec = broadcast_prefix(out_axes, tree)

    def place(leaf, axis):
        if leaf is None:
            return None
        if axis is None:
            if leaf.batched:
                raise ValueError("vmap has mapped output but out_axes is None: pass an "
                                 "axis for outputs that differ between examples")
            return leaf.value
        value = leaf.value
        if not leaf.batched:
            value = np.broadcast_to(value, (size,) + np.shape(value)).copy()
        return np.moveaxis(value, 0, axis) if axis != 0 else value

    return tree_util.tree_map(place, tree, spec, is_leaf=lambda v: v is None)
