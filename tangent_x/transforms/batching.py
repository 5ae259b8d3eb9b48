"""vmap by batching rules: a canonical function -> vectorised NumPy source.

Every batched value carries its batch on axis 0 (the boundary moves
``in_axes`` there and ``out_axes`` back), and keeps its user's name: the
vectorised code reads like the original, with an axis shifted here and a
transposed matmul there.  Values that do not depend on a batched argument
stay unbatched (weights shared by all examples are never broadcast).

Which values are batched is a flag per name: a bool for an array, a nested
list/dict of bools for a container (a tuple of a batched and a shared
array).  Per-example ranks come from ``probe`` (one example run at first
call).  Each primitive's rule lives in its family module under ``rules/``
(table ``BATCHING``, keyed by primitive like the derivative rules); the transform
here knows only control flow:

- ``if`` on a shared condition stays an ``if``; on a batched condition both
  branches run and ``select_lanes`` picks per lane;
- loops on a shared condition stay loops; a ``while`` whose condition is
  batched runs while any lane is live, finished lanes frozen by
  ``select_lanes`` (``batching_loops``, mixed in);
- an operation without a rule (or whose ranks the probe did not see) is
  run once per example by ``map_lanes`` — always correct, just not
  vectorised;
- a ``print`` of batched values prints once per example (of shared values,
  once), and inside a branch or loop whose condition differs between
  examples only for the examples that get there (``Batcher.reaching``).
"""
import gast

from ..core import ir, primitives as P
from ..analysis.probe import describe
from ..core.builders import assign, call
from ..analysis.defuse import bound_names
from ..core import lower
from ..errors import TransformError
from ..rules import BATCHING, load_all
from ..rules.collectives import own_axis
from .batching_loops import (LoopBatching, PerExample, _MixedContainer,  # noqa: F401
                             _appends, _both, _ranks_differ)
from ..rules.batching_util import (NO_VALUE, all_batched, any_batched, full_flag, merge_flags,
                                   truth_batched)


def fixed(b, atom):
    """The value of ``atom`` when the code fixes it (a literal, a tuple/list
    of literals built here, a global or closure tuple of literals), else
    ``NO_VALUE``: such values may shape the batched code (a collective's axis
    names, ppermute's pairs), unlike the probe's, which may come from an
    argument that the cached code does not depend on."""
    if isinstance(atom, gast.Constant):
        return atom.value
    if ir.is_name(atom):
        if atom.id in b.constants:
            return b.constants[atom.id]
        value = b.env.get(atom.id, NO_VALUE) if atom.id not in b.flags else NO_VALUE
        return value if _literal_tuple(value) else NO_VALUE     # immutable: fixed
    return NO_VALUE


def _note_constant(b, eqn):
    if eqn.prim.name in ("tuple", "list") and not eqn.kwargs and len(eqn.outs) == 1:
        items = [fixed(b, a) for a in eqn.args]
        if all(i is not NO_VALUE for i in items):
            b.constants[eqn.out] = tuple(items) if eqn.prim.name == "tuple" else items


def _literal_tuple(value):
    return isinstance(value, tuple) and all(
        isinstance(v, (int, str)) or _literal_tuple(v) for v in value)


class Batcher(LoopBatching):
    def __init__(self, namer, flags, shapes, batch_size, env=None, axis_name=None):
        load_all()
        self.axis_name = axis_name      # vmap's axis_name: collectives over it batch here
        self.env = env or {}            # free names of the code: globals, closure values
        self.stmts_out = []
        self.namer = namer
        self.flags = flags              # name -> batched flag
        self.shapes = shapes            # name -> probe.Shape
        self.batch_size = batch_size    # gast atom: the number of examples
        self.unbound = set()            # names holding ``unbound(...)`` placeholders
        self.constants = {}             # names of tuples/lists of literals: their values
        # the lanes that reach this code (a batched bool): None for all of them,
        # else inside a branch or loop whose condition differs between lanes
        self.reaching = None

    # --- what rules ask -----------------------------------------------------

    def flag(self, atom):
        if ir.is_name(atom):
            return self.flags.get(atom.id, False)
        if isinstance(atom, (gast.Tuple, gast.List)):
            return [self.flag(e) for e in atom.elts]
        if isinstance(atom, gast.AST):
            return any(self.flags.get(n, False) for n in ir.names_in(atom)) or False
        return False

    def constant(self, atom):
        """``atom``'s value where the code fixes it, else NO_VALUE (``fixed``)."""
        return fixed(self, atom)

    def batched(self, atom):
        return any_batched(self.flag(atom))

    def shape(self, atom):
        if ir.is_name(atom):
            if atom.id in self.shapes:
                return self.shapes[atom.id]
            if atom.id in self.env and atom.id not in self.flags:
                return describe(self.env[atom.id])
            return None
        if isinstance(atom, gast.Constant):
            return describe(atom.value)
        return None

    def rank(self, atom):
        """Per-example rank, or None when unknown (or not an array)."""
        if isinstance(atom, gast.Attribute) and ir.is_name(atom.value, "np"):
            return 0
        shape = self.shape(atom)
        return shape.ndim if shape is not None and shape.kind == "array" else None

    def mark(self, out, flag=True):
        self.flags[out] = flag

    def fresh(self, base):
        return self.namer.fresh(base)

    def let(self, base, value, flag=True):
        """``base = value`` on a fresh name; returns the name atom."""
        name = self.fresh(base)
        self.flags[name] = flag
        self.stmts_out.append(assign(name, value))
        return ir.name(name)

    # --- equations ----------------------------------------------------------

    def stmts(self, eqns):
        out = []
        for eqn in eqns:
            out += self.eqn(eqn)
        return out

    def eqn(self, eqn):
        kind = eqn.prim.kind
        if kind == "cond":
            return self.cond(eqn)
        if kind in ("while", "for_range"):
            return self.loop(eqn)
        if eqn.prim.name == "unbound":
            self.unbound.update(eqn.outs)
        if not any(self.batched(a) for a in list(eqn.args) + list(eqn.kwargs.values())) \
                and not (self.axis_name is not None and own_axis(eqn, self)):
            for o in eqn.outs:
                self.flags[o] = False
            _note_constant(self, eqn)
            if ir.kept_for_effect(eqn) and self.reaching is not None:
                # (``print`` of shared values: once, if any lane gets here)
                return [gast.If(test=call("np.any", self.reaching), body=lower.lower([eqn]),
                                orelse=[])]
            return lower.lower([eqn])
        rule = BATCHING.get(eqn.prim.name)
        self.stmts_out = []
        made = rule(eqn, self) if rule is not None else None
        if made is None:
            self.stmts_out = []
            return self.map_lanes(eqn)
        return self.stmts_out + made

    def map_lanes(self, eqn):
        """``out = map_lanes(lambda x: <the operation>, batch_size, x)``: one
        call per example, for operations with no batching rule."""
        atoms = list(eqn.args) + list(eqn.kwargs.values())
        lanes = []
        setup = []
        acc = eqn.args[0] if eqn.prim.name in _WRITES_FIRST and eqn.args else None
        if ir.is_name(acc) and not all_batched(self.flags.get(acc.id)):
            # ``add_at`` writes into its accumulator: a shared one, closed
            # over by the lambda, would be one buffer every example adds
            # into (and every lane's result the same array).  Its lanes are
            # copies (``_example``), one private accumulator per example.
            full, made = self.lanes_of(acc, full_flag(self.shape(acc)))
            setup += made
            atoms = [_renamed(a, acc.id, full.id) for a in atoms]
            eqn = ir.Eqn(eqn.outs, eqn.prim, atoms[:len(eqn.args)],
                         dict(zip(eqn.kwargs, atoms[len(eqn.args):])), eqn.params,
                         eqn.origin)
        for a in atoms:
            for n in sorted(ir.names_in(a)):
                if any_batched(self.flags.get(n)) and n not in lanes:
                    lanes.append(n)
        reaching = self.reaching if ir.kept_for_effect(eqn) else None
        for i, n in enumerate(lanes):
            flag = self.flags[n]
            if not all_batched(flag):       # a container of batched and shared values
                # (the shape: a bool flag on a list inside covers each leaf)
                leaves = flag_leaves(flag, self.shapes.get(n))
                full = self.fresh(f"{n}_lanes")
                setup.append(assign(full, call(
                    "finish_lanes", ir.name(n),
                    gast.Tuple(elts=[ir.const(f) for f in leaves], ctx=gast.Load()),
                    gast.Tuple(elts=[ir.const(0) for _ in leaves], ctx=gast.Load()),
                    self.batch_size)))
                self.flags[full] = full_flag(self.shapes.get(n))
                atoms = [_renamed(a, n, full) for a in atoms]
                lanes[i] = full
                eqn = ir.Eqn(eqn.outs, eqn.prim, atoms[:len(eqn.args)],
                             dict(zip(eqn.kwargs, atoms[len(eqn.args):])), eqn.params,
                             eqn.origin)
        if eqn.prim.name == "index_set" and eqn.params.get("container"):
            x, idx, v = eqn.args         # a list's, dict's or tuple's item
            body = call("with_item", x, ir.clone(idx), v)
        elif eqn.prim.kind == "index_set" and eqn.prim.name in _INDEX_HELPERS:
            x, idx, v = eqn.args
            body = call(_INDEX_HELPERS[eqn.prim.name], x, ir.clone(idx), v)
        elif eqn.prim.kind in ("index_set", "effect"):
            label = eqn.params.get("label", eqn.prim.name)
            raise TransformError(f"vmap has no batching rule for {label} on batched "
                                 "values", eqn.origin,
                                 "compute it outside the vmapped function")
        else:
            body = ir.expr_of(eqn)
        for o in eqn.outs:
            self.flags[o] = full_flag(self.shapes.get(o))
        return setup + _per_example(self, body, lanes, eqn.outs, reaching)

    # --- control flow ---------------------------------------------------------

    def lanes_of(self, atom, flag, hint=None):
        """``atom`` given the batch axis wherever ``flag`` says so but its own
        flag does not (a shared value meeting a batched one); in a container,
        leaf by leaf.  Returns (atom, statements computing it)."""
        have = self.flag(atom)
        if all_batched(have) or not any_batched(flag) or _no_leaves(self.shape(atom)):
            return atom, []
        stem = atom.id if ir.is_name(atom) else (hint or "value")
        if not isinstance(have, (dict, list)) and not isinstance(flag, (dict, list)):
            name = self.fresh(f"{stem}_lanes")
            self.flags[name] = True
            return ir.name(name), [assign(name, call("broadcast_lanes", atom,
                                                      self.batch_size))]
        shape = self.shape(atom)
        have_full = have if isinstance(have, (dict, list)) else full_flag(shape, bool(have))
        if not isinstance(have_full, (dict, list)):
            have_full = _everywhere(flag, bool(have))
        want_full = flag if isinstance(flag, (dict, list)) else _everywhere(have_full, True)
        # (with the shape: a bool flag on a list inside stands for each of its leaves)
        have_leaves, want_leaves = flag_leaves(have_full, shape), flag_leaves(want_full, shape)
        if len(have_leaves) != len(want_leaves) or not isinstance(want_full, (dict, list)):
            raise _MixedContainer()
        name = self.fresh(f"{stem}_lanes")
        self.flags[name] = want_full
        value = call("finish_lanes", atom,
                     gast.Tuple(elts=[ir.const(h) for h in have_leaves], ctx=gast.Load()),
                     gast.Tuple(elts=[ir.const(0 if w else None) for w in want_leaves],
                                ctx=gast.Load()),
                     self.batch_size)
        return ir.name(name), [assign(name, value)]

    def cond(self, eqn):
        pred = eqn.args[0]
        branches = eqn.params["branches"]
        results = []
        for i, body in enumerate(branches):
            inner = self.sub()
            eqns = body.eqns
            if truth_batched(self, pred):     # both sides run: each reaches its own lanes
                inner.reaching = _both(self.reaching,
                                       pred if i == 0 else call("np.logical_not", pred))
                eqns = _own_writes(eqns, self.namer, self.shapes)
            stmts = inner.stmts(eqns)
            results.append((inner, stmts, body.results))
        out_flags = []
        for k, _ in enumerate(eqn.outs):
            flag = False
            for inner, _, res in results:
                flag = merge_flags(flag, inner.flag(res[k]))
            out_flags.append(flag)
        for inner, _, _ in results:
            self.flags.update(inner.flags)
        if truth_batched(self, pred):
            return self.select(eqn, pred, results, out_flags)
        out = []
        for inner, stmts, res in results:
            fixed = []
            for k, (o, r) in enumerate(zip(eqn.outs, res)):
                try:
                    atom, setup = inner.lanes_of(r, out_flags[k], o)
                except _MixedContainer:
                    return self.map_compound(eqn)
                stmts = stmts + setup
                fixed.append(atom)
            out.append((stmts + lower.assign_many(eqn.outs, fixed)) or [gast.Pass()])
        for o, f in zip(eqn.outs, out_flags):
            self.flags[o] = f
        orelse = [] if len(out[1]) == 1 and isinstance(out[1][0], gast.Pass) else out[1]
        return lower.IF.fill(test=pred, body=out[0], orelse=orelse)

    def select(self, eqn, pred, results, out_flags):
        """Both branches on every lane, then ``select_lanes`` per output.

        A per-lane choice differs between lanes even where both sides are
        shared, so each side is given the batch first (``lanes_of``): a
        shared value meeting a batched one is broadcast, never left to
        NumPy's broadcasting to line up with the per-example axes.  A side
        its branch never assigns (``unbound``) leaves the other side as it
        is.  Sides whose per-example ranks differ cannot be one array: the
        whole function then runs once per example."""
        # each side runs only when some lane takes it: a branch no lane takes
        # may fail on every lane (the body of ``if k < len(items)`` reading
        # ``items[k]`` once every lane is past the end); its results are
        # then None, which ``select_lanes`` passes over
        sides_code = [list(stmts) for _, stmts, _ in results]
        defined = [bound_names(code) for code in sides_code]
        out = []
        (_, _, on_true), (_, _, on_false) = results
        for o, a, b in zip(eqn.outs, on_true, on_false):
            if self.unassigned(a) or self.unassigned(b):
                kept = b if self.unassigned(a) else a
                if not self.batched(kept):
                    out.append(assign(o, kept))
                    self.flags[o] = self.flag(kept)
                    continue
            elif ir.is_name(a) and ir.is_name(b) and a.id == b.id and not self.batched(a):
                out.append(assign(o, a))
                self.flags[o] = False
                continue
            else:
                if _ranks_differ(self.shape(a), self.shape(b)):
                    raise PerExample("the branches give values of different per-example "
                                     f"ranks to {o!r}", eqn.origin)
                _same_appends(eqn, o, a, b)
            want = full_flag(self.shapes.get(o))
            sides = []
            for i, side in enumerate((a, b)):
                if self.unassigned(side):
                    sides.append(side)
                    continue
                try:
                    atom, setup = self.lanes_of(side, want, o)
                except _MixedContainer:
                    return self.map_compound(eqn)
                if ir.is_name(side) and side.id in defined[i]:
                    sides_code[i] += setup
                    defined[i] |= bound_names(setup)
                else:
                    out += setup
                sides.append(atom)
            out.append(assign(o, call("select_lanes", pred, *sides)))
            self.flags[o] = _everywhere(self.flag(sides[1] if self.unassigned(sides[0])
                                                  else sides[0]), True)
        guarded = []
        for code, names, taken in zip(sides_code, defined, _taken(self.reaching, pred)):
            if code:
                guarded.append(gast.If(test=taken, body=code,
                                       orelse=[assign(n, ir.const(None)) for n in sorted(names)]
                                       or [gast.Pass()]))
        return guarded + out

    def unassigned(self, atom):
        """Whether ``atom`` is the placeholder of a variable its branch never
        assigned (``unbound``)."""
        return ir.is_name(atom) and atom.id in self.unbound

    def sub(self):
        inner = Batcher(self.namer, dict(self.flags), self.shapes, self.batch_size, self.env,
                        self.axis_name)
        inner.unbound = self.unbound
        inner.reaching = self.reaching
        return inner

    def map_compound(self, eqn):
        raise PerExample("vmap cannot line up the branches' results (a container "
                         "mixing batched and shared values)", eqn.origin)


def _per_example(b, body, lanes, outs, reaching):
    """``outs = map_lanes(lambda x_k: body, batch_size, x)``: ``body`` run on
    example k of each name in ``lanes``, in the lanes ``reaching`` (None:
    all) only -- an effect (``print``) inside a branch or loop whose
    condition differs between examples runs for the examples that get
    there.  The lambda's parameters get names of their own (``x_k``), so
    that later passes renaming ``x`` outside cannot capture them."""
    params = [b.fresh(f"{n}_k") for n in lanes]
    for n, p in zip(lanes, params):
        body = _renamed(body, n, p)
    lane_atoms = [ir.name(n) for n in lanes]
    if reaching is not None:
        params.insert(0, b.fresh("reaches_k"))
        lane_atoms.insert(0, reaching)
        body = gast.IfExp(test=ir.name(params[0]), body=body, orelse=ir.const(None))
    fn = gast.Lambda(args=gast.arguments(
        args=[ir.name(p, gast.Param()) for p in params], posonlyargs=[], vararg=None,
        kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[]), body=body)
    value = call("map_lanes", fn, b.batch_size, *lane_atoms)
    if not outs:        # kept for its effect (``print``): once per example
        return [gast.Expr(value=value)]
    if len(outs) == 1:
        return [assign(outs[0], value)]
    target = gast.Tuple(elts=[ir.name(o, gast.Store()) for o in outs], ctx=gast.Store())
    return [gast.Assign(targets=[target], value=value, type_comment=None)]


def _taken(reaching, pred):
    """Whether a lane that gets here takes each side of a branch on the
    batched ``pred``: lanes an enclosing branch or loop has left may hold
    values no example computes with (and fail on them)."""
    if reaching is None:
        return (call("np.any", pred),
                gast.UnaryOp(op=gast.Not(), operand=call("np.all", pred)))
    return (call("np.any", _both(reaching, ir.clone(pred))),
            call("np.any", _both(reaching, call("np.logical_not", ir.clone(pred)))))


def _renamed(atom, old, new):
    atom = ir.clone(atom)
    for node in ir.walk(atom):
        if isinstance(node, gast.Name) and node.id == old:
            node.id = new
    return atom


def _no_leaves(shape):
    """A container holding no value (an empty tape): the same batched or not."""
    if shape is None or shape.kind not in ("list", "tuple", "dict"):
        return False
    items = shape.items.values() if shape.kind == "dict" else shape.items
    return all(_no_leaves(s) for s in items)


# operations that update their first argument in place (see ``map_lanes``)
_WRITES_FIRST = {"add_at"}


def _own_writes(eqns, namer, shapes):
    """A branch's equations, where an operation writing into its first
    argument (``add_at`` of an adjoint: the in-place pass made it write
    into a value only one branch could reach) writes into a copy of a value
    from outside the branch: under vmap both branches run, and the other
    still reads that value (seed 420000: vmap(grad) gave every example the
    gradient of the branch some took)."""
    return _owned(eqns, namer, set(), shapes)


def _owned(eqns, namer, defined, shapes):
    """``_own_writes`` of ``eqns``, ``defined`` the names the branch made
    before them (an ``if`` or loop inside the branch: the same, within)."""
    out = []
    for e in eqns:
        shape = shapes.get(e.args[0].id) if e.args and ir.is_name(e.args[0]) else None
        if e.prim.name in _WRITES_FIRST and shape is not None and shape.kind == "array" \
                and e.args[0].id not in defined:
            # (an array's: a list's cotangent is no array to np.copy, fuzz
            # seed 451764; its items are rebound, not written into)
            own = namer.fresh(f"{e.args[0].id}_own")
            out.append(ir.Eqn([own], P.get("copy"), [e.args[0]], origin=e.origin))
            e = ir.Eqn(e.outs, e.prim, [ir.name(own)] + list(e.args[1:]), e.kwargs, e.params,
                       e.origin)
        elif e.bodies():         # (seed 430242: an add_at inside an if inside the branch)
            # (a loop's carries start as values from outside the branch:
            # not the branch's own, so writes into them copy too)
            inner = set(defined)
            params = dict(e.params)
            if "branches" in params:
                params["branches"] = tuple(ir.Body(_owned(b.eqns, namer, set(inner), shapes),
                                                   b.results)
                                           for b in params["branches"])
            for key in ("cond", "body"):
                if key in params:
                    b = params[key]
                    params[key] = ir.Body(_owned(b.eqns, namer, set(inner), shapes), b.results)
            e = ir.Eqn(e.outs, e.prim, e.args, e.kwargs, params, e.origin)
        out.append(e)
        defined.update(e.outs)
    return out
# functional index updates as one call each (tangent_x/runtime/lanes.py), for map_lanes
_INDEX_HELPERS = {"index_set": "set_index", "index_add": "add_index", "index_min": "min_index",
                  "index_max": "max_index", "index_mul": "mul_index"}


def _same_appends(eqn, o, a, b):
    """A list the branches append to differently has a length per example
    (which the probe, seeing one length, a loop's last, does not show)."""
    branches = eqn.params["branches"]
    if _appends(branches[0], a) != _appends(branches[1], b):
        raise PerExample(f"the branches append to the list {o!r} differently: "
                         "its length differs between examples", eqn.origin)


def _everywhere(flag, value):
    """``flag``'s structure with every leaf ``value``."""
    if isinstance(flag, dict):
        return {k: _everywhere(f, value) for k, f in flag.items()}
    if isinstance(flag, list):
        return [_everywhere(f, value) for f in flag]
    return value


def flag_leaves(flag, shape):
    """Flags in the order tree_util flattens (dict keys sorted).  A bool
    flag on a container (a dict none of whose values is batched, inside a
    tuple that also holds batched ones) stands for every leaf of it: the
    probe's ``shape`` says how many, at any depth.  Where the probe saw no
    container (a symbolic zero, None, standing for a whole item of a
    cotangent), the value there is one leaf, whatever the flag's structure
    (the code's: a list of pairs, say)."""
    if shape is not None and shape.kind == "other" and isinstance(flag, (dict, list)):
        return [any_batched(flag)]
    if isinstance(flag, dict):
        return [x for k in sorted(flag) for x in flag_leaves(flag[k], _item_shape(shape, k))]
    if isinstance(flag, list):
        return [x for i, f in enumerate(flag) for x in flag_leaves(f, _item_shape(shape, i))]
    if shape is not None and shape.kind not in ("array", "other"):
        return flag_leaves(full_flag(shape, bool(flag)), shape)
    return [bool(flag)]


def _item_shape(shape, key):
    """The probe shape of item ``key`` of a container's shape, or None."""
    if shape is None or shape.kind in ("array", "other"):
        return None
    try:
        return shape.items[key]
    except (KeyError, IndexError, TypeError):
        return None
