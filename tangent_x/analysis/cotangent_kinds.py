"""How the reverse pass adds cotangents: which variables hold arrays.

A variable's cotangents add with ``+`` when it holds an array, with
``tree_add`` (which also takes None as zero) when it may hold a container
or None.  Read off the canonical equations: what produced or consumed a
value (``array_kinds``), which values may be None (``_maybe_none``), closed
over the names that are one value on different paths (``_across_joins``).
Used by ``transforms/reverse.py``."""
import gast

from ..core import ir


def array_kinds(eqns):
    """Variables known to hold arrays (their cotangents add with ``+``).

    A variable is an array if an array primitive produced or consumed it;
    the rest (containers from packing or indexing into pytrees) accumulate
    with ``tree_add``.
    """
    structural = {"getitem", "getattr", "tuple", "list", "dict", "namedtuple",
                  "assign", "opaque", "iteration_item", "scan_slice", "appended",
                  "unstack_steps", "scan_unslice",
                  # runtime helpers that take or give containers of cotangents
                  "tree_add", "unattr", "cotangent_item", "dense", "unindex",
                  "index_zero", "add_at", "zeros_like",
                  # vmap's lane helpers pass pytrees through (a tuple chosen per
                  # lane; a function's results given their batch axes)
                  "select_lanes", "broadcast_lanes", "finish_lanes", "unfinish_lanes",
                  # (a function run lane by lane, and the stacking of its lanes'
                  # results, take and give any pytree: a tuple's cotangents
                  # added with ``+`` were concatenated)
                  "map_lanes", "stack_steps", "lane_item", "unlane_item",
                  # pytrees cut into leaves and rebuilt (tree_map and friends)
                  "tree_leaves_like", "tree_rebuild", "tree_def"}
    packs = {"tuple", "list", "dict", "namedtuple"}
    # helpers that return one cotangent per item of a sequence argument
    splits = {"unconcatenate", "unhstack", "unstack", "item_cotangent", "unstack_steps",
              "appended", "dict_copy", "list_copy", "list_to_tuple", "with_item",
              "tree_leaves_like", "tree_rebuild"}
    # array primitives' arguments that are sequences of arrays
    sequences = {"concatenate": (0,), "stack": (0,), "hstack": (0,), "vstack": (0,),
                 "stack_steps": (0,), "unconcatenate": (1,), "unhstack": (1,),
                 "unstack_steps": (0, 1), "rejoin": (0, 2), "item_cotangent": (0,),
                 "dict_copy": (0,), "list_copy": (0,), "list_to_tuple": (0,),
                 "with_item": (0,), "tree_leaves_like": (0, 1), "tree_rebuild": (0, 1)}
    kinds, containers = set(), set()
    for eqn in ir.all_eqns(eqns):
        if eqn.prim.kind in ("cond", "while", "for_range"):
            continue
        seq = sequences.get(eqn.prim.name, ())
        containers.update(a.id for i, a in enumerate(eqn.args) if i in seq and ir.is_name(a))
        if eqn.prim.name in packs or eqn.prim.name in splits or eqn.params.get("container"):
            containers.update(eqn.outs)
            continue
        if eqn.prim.name not in structural and eqn.prim.differentiable:
            kinds.update(eqn.outs)
            # (an argument read for its shape alone may be a container: the
            # ``like`` of ``last_writes(g[i], i, like)`` is a list's cotangent)
            kinds.update(a.id for i, a in enumerate(eqn.args) if ir.is_name(a) and i not in seq
                         and i not in eqn.prim.shape_args)
        elif eqn.prim.name == "getitem":
            kinds.update(a.id for a in eqn.args[1:] if ir.is_name(a))
    containers = _across_joins(eqns, containers | _maybe_none(eqns))
    return kinds - containers


def _maybe_none(eqns):
    """Variables that may hold None at run time (or lists that may hold None
    items): a loop's early-``return`` value starts as None, and so does its
    cotangent (a symbolic zero) and, at second order, that cotangent's
    cotangent.  Their cotangents add with
    ``tree_add``, which treats None as zero."""
    def none(atom):
        return isinstance(atom, gast.Constant) and atom.value is None or \
            ir.is_name(atom) and atom.id in found

    found = set()
    joins = [(out, [a]) for eqn in ir.all_eqns(eqns) if eqn.prim.kind in ("while", "for_range")
             for out, a in zip(eqn.outs, eqn.args[len(eqn.args) - len(eqn.outs):])]
    joins += [(out, [b.results[i] for b in eqn.params["branches"]])
              for eqn in ir.all_eqns(eqns) if eqn.prim.kind == "cond"
              for i, out in enumerate(eqn.outs)]
    joins += [(out, [eqn.params["body"].results[i]])
              for eqn in ir.all_eqns(eqns) if eqn.prim.kind in ("while", "for_range")
              for i, out in enumerate(eqn.outs)]
    # (a tape of such values holds None items: what is popped from it may be None)
    passes = {"assign": (0,), "zeros_like": (0,), "tree_add": (0, 1),
              "cotangent_item": (2,), "item_cotangent": (0,), "appended": (1,),
              "getitem": (0,)}
    changed = True
    while changed:
        changed = False
        for eqn in ir.all_eqns(eqns):
            positions = passes.get(eqn.prim.name)
            if positions and eqn.out not in found and \
                    any(i < len(eqn.args) and none(eqn.args[i]) for i in positions):
                found.add(eqn.out)
                changed = True
        for out, atoms in joins:
            if out not in found and any(none(a) for a in atoms):
                found.add(out)
                changed = True
    return found


def _across_joins(eqns, containers):
    """``containers`` closed over the names that are one value on different
    paths: a loop's initial value, carry and next value, a branch's results
    and the cond's outputs."""
    links = {}
    for eqn in ir.all_eqns(eqns):
        if eqn.prim.kind in ("while", "for_range"):
            inits = eqn.args[len(eqn.args) - len(eqn.outs):]
            for i, out in enumerate(eqn.outs):
                group = [out, inits[i], eqn.params["body"].results[i]]
                links.setdefault(out, []).extend(a.id for a in group[1:] if ir.is_name(a))
        elif eqn.prim.kind == "cond":
            for branch in eqn.params["branches"]:
                for out, r in zip(eqn.outs, branch.results):
                    if ir.is_name(r):
                        links.setdefault(out, []).append(r.id)
    neighbours = {}
    for a, bs in links.items():
        for b in bs:
            neighbours.setdefault(a, set()).add(b)
            neighbours.setdefault(b, set()).add(a)
    found, todo = set(containers), list(containers)
    while todo:
        for b in neighbours.get(todo.pop(), ()):
            if b not in found:
                found.add(b)
                todo.append(b)
    return found
