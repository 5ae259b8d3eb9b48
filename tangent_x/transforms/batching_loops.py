"""vmap's loops: which carries a loop batches, and how it runs.

A loop whose condition is shared stays a loop; the flags of its carries
are a fixed point of what its body's rules give (``trial``).  A ``while``
whose condition differs between examples runs while any lane is live,
finished lanes frozen by ``select_lanes``; a ``for`` whose range differs
between examples runs as such a ``while`` (``_for_as_while``).  A list the
body grows, in a loop whose lanes stop at different turns, would need a
length per lane: vmap then runs the whole function once per example
(``RaggedTapes``).  Mixed into ``batching.Batcher``."""
import gast

from ..core import ir, lower, primitives as P
from ..core.builders import assign, call
from ..core.naming import Namer
from ..errors import TransformError
from ..rules.batching_util import full_flag, merge_flags, truth_batched


class PerExample(TransformError):
    """Raised where vectorised code cannot be written (branches whose
    results differ in per-example rank, containers that cannot be lined
    up): ``vmap`` then runs the whole function once per example."""


class RaggedTapes(PerExample):
    """A list grown or shrunk in a loop whose lanes stop at different steps
    (the tape of a derivative through a per-example ``while``): one list of
    batched items cannot hold a different number of items per lane, so vmap
    takes the per-example loop for the whole function (``vmapping.build``)."""


class _MixedContainer(Exception):
    pass



class LoopBatching:
    """Mixed into ``batching.Batcher``."""

    def for_as_while(self, eqn):
        return _for_as_while(eqn, self.namer)

    def trial(self, body, carry_flags):
        """The flags of ``body``'s results when its carries have ``carry_flags``:
        the body batched on the side, its code and names thrown away."""
        inner = type(self)(Namer(self.namer.taken), {**self.flags, **carry_flags},
                        self.shapes, self.batch_size, self.env, self.axis_name)
        inner.stmts(body.eqns)
        return [inner.flag(r) for r in body.results]

    def loop(self, eqn):
        if eqn.prim.kind == "for_range" and any(self.batched(b) for b in eqn.args[:3]):
            return self.loop(self.for_as_while(eqn))
        carry = list(eqn.params["carry"])
        body = eqn.params["body"]
        n_lead = len(eqn.args) - len(carry)
        inits = eqn.args[n_lead:]
        bounds = eqn.args[:n_lead]
        flags = {c: self.flag(a) for c, a in zip(carry, inits)}
        cond = eqn.params.get("cond")
        # which carries become batched: a fixed point of the flags the body's
        # rules give its results (a shape read off a batched value, pushed on
        # a tape, stays shared)
        while True:
            results = self.trial(body, flags)
            new = {c: merge_flags(flags[c], f) for c, f in zip(carry, results)}
            pred_batched = False
            if cond is not None:
                pred_batched = truth_batched(self, cond.results[0], self.trial(cond, new)[0])
                if pred_batched:
                    new = {c: (full_flag(self.shapes.get(c)) if not
                               (ir.is_name(r) and r.id == c) else new[c])
                           for c, r in zip(carry, body.results)}
            if new == flags:
                break
            flags = new
        for c, a, r in zip(carry, inits, body.results):
            before, after = self.shape(a), self.shape(r)
            if before is not None and after is not None and before.kind == after.kind == "array" \
                    and _ranks_differ(before, after):
                # a number that becomes a vector as the loop runs: one batched
                # variable cannot hold both ranks
                raise PerExample(f"vmap: the loop variable '{c}' changes rank in the loop",
                                 eqn.origin)
            if before is not None and after is not None and before.kind != after.kind \
                    and "array" in (before.kind, after.kind):
                # an array that becomes a list (a list's cotangent, first the
                # array ``np.array(items)`` gave back): one batched variable
                # cannot index both alike (fuzz seed 430439)
                raise PerExample(f"vmap: the loop variable '{c}' is an array on entry and "
                                 f"a {after.kind if after.kind != 'array' else before.kind} "
                                 f"after a turn", eqn.origin)
        if pred_batched and not _ranks_kept(self, carry, inits, body):
            # lanes leave at different turns, and the probe never ran a turn:
            # whether a carry keeps its rank is not known (a sum from 0 of
            # arrays), and ``select_lanes`` cannot join two ranks (fuzz seed
            # 430021): the loop runs once per example
            return self.map_compound(eqn)
        lined = _lanes_of_all(self, carry, inits, flags)
        if lined is None:
            return self.map_compound(eqn)
        init_atoms, setup = lined
        self.flags.update(flags)
        inner = self.sub()
        if pred_batched:            # the body runs for the live lanes only
            inner.reaching = _both(self.reaching, ir.clone(cond.results[0]))
        body_stmts = inner.stmts(body.eqns)
        lined = _lanes_of_all(inner, carry, body.results, flags)
        if lined is None:
            return self.map_compound(eqn)
        results, stmts = lined
        body_stmts += stmts
        self.flags.update({k: v for k, v in inner.flags.items() if k not in flags})
        if eqn.prim.kind == "for_range":
            updates = lower.assign_many(carry, results)
            loop = lower.FOR.fill(index=eqn.params["index"],
                                  iterations=lower.range_call(*bounds), body=body_stmts + updates)
            return setup + lower.assign_many(carry, init_atoms) + loop
        cinner = self.sub()
        cond_stmts = cinner.stmts(cond.eqns)
        self.flags.update({k: v for k, v in cinner.flags.items() if k not in flags})
        pred = cond.results[0]
        if truth_batched(cinner, pred):
            tapes = [c for c, r in zip(carry, body.results)
                     if (_is_list(self.shapes.get(c)) or _appends(body, r))
                     and not (ir.is_name(r) and r.id == c)]
            if tapes:
                raise RaggedTapes(f"vmap: the lanes of this loop finish at different "
                                  f"steps, and it pushes on {', '.join(tapes)}: each "
                                  "lane's list would have its own length", eqn.origin,
                                  "vmap runs the function once per example instead")
            live = pred
            if self.reaching is not None:   # lanes that never get here may never stop it
                live = ir.name(self.fresh("live"))
                cond_stmts.append(assign(live.id, _both(self.reaching, ir.clone(pred))))
            test = call("np.any", live)         # while any lane is live
            results = [call("select_lanes", live, r, ir.name(c))
                       if not (ir.is_name(r) and r.id == c) else r
                       for c, r in zip(carry, results)]
        else:
            test = pred
        updates = lower.assign_many(carry, results)
        loop = lower.WHILE_TRUE.fill(cond=cond_stmts, pred=test, body=body_stmts + updates)
        return setup + lower.assign_many(carry, init_atoms) + loop


def _lanes_of_all(b, carry, atoms, flags):
    """(atoms, statements) giving each carry's value in ``atoms`` the lanes
    its flag says; None where one is a container mixing batched and shared
    values."""
    out, stmts = [], []
    for c, a in zip(carry, atoms):
        try:
            atom, more = b.lanes_of(a, flags[c], c)
        except _MixedContainer:
            return None
        stmts += more
        out.append(atom)
    return out, stmts


def _both(reaching, lanes):
    """The lanes reaching code that only ``lanes`` (a batched bool) of the
    lanes ``reaching`` (None: all) get to."""
    if reaching is None:
        return lanes
    return call("np.logical_and", ir.clone(reaching), lanes)


def _for_as_while(eqn, namer):
    """``for i in range(start, stop, step)`` as a while loop carrying ``i``:
    how a range that differs between examples is batched (lanes stop at
    their own bound)."""
    start, stop, step = eqn.args[:3]
    if not isinstance(step, gast.Constant) or not step.value:
        raise TransformError("vmap: the loop's range differs between examples and its "
                             "step is not a constant", eqn.origin,
                             "use a constant step, or vmap(..., method='loop')")
    index = eqn.params["index"]
    body = eqn.params["body"]
    live = namer.fresh(f"{index}_live")
    following = namer.fresh(f"{index}_next")
    test = ir.Eqn([live], P.get("lt" if step.value > 0 else "gt"),
                  [ir.name(index), stop], origin=eqn.origin)
    advance = ir.Eqn([following], P.get("add"), [ir.name(index), step], origin=eqn.origin)
    return ir.Eqn([index] + list(eqn.outs), P.get("while"), [start] + list(eqn.args[3:]),
                  params={"carry": [index] + list(eqn.params["carry"]),
                          "cond": ir.Body([test], [ir.name(live)]),
                          "body": ir.Body(list(body.eqns) + [advance],
                                          [ir.name(following)] + list(body.results))},
                  origin=eqn.origin)


def _is_list(shape):
    return shape is not None and shape.kind == "list"


def _appends(body, atom):
    """How many items a branch's code appends to the list it gives as
    ``atom`` (following its ``appended`` and ``assign`` equations)."""
    made = {o: e for e in body.eqns for o in e.outs}
    n = 0
    while ir.is_name(atom) and atom.id in made and made[atom.id].prim.name in ("appended",
                                                                                "assign"):
        n += made[atom.id].prim.name == "appended"
        atom = made[atom.id].args[0]
    return n


def _ranks_kept(b, carry, inits, body):
    """Whether each carry of a loop keeps its rank through a turn: read
    from the probe's shapes where it ran the loop, else inferred along
    the body's elementwise equations from the carries' first ranks (a
    result of anything else the probe never saw: not known)."""
    ranks = {c: b.rank(a) for c, a in zip(carry, inits)}

    def rank(atom):
        if ir.is_name(atom) and atom.id in ranks:
            return ranks[atom.id]
        if isinstance(atom, gast.Constant):
            return 0 if isinstance(atom.value, (int, float, bool)) else None
        return b.rank(atom)
    for e in body.eqns:
        if len(e.outs) == 1 and e.prim.elementwise and not e.kwargs:
            known = [rank(a) for a in e.args]
            ranks[e.out] = None if None in known else max(known, default=0)
        else:
            for o in e.outs:
                ranks[o] = b.rank(ir.name(o))
    for c, r in zip(carry, body.results):
        if ir.is_name(r) and r.id == c or ranks[c] is None:
            continue            # (a list or a value of unknown rank: as before)
        if rank(r) != ranks[c]:
            return False
    return True


def _ranks_differ(a, b):
    """Whether two probe shapes are known to hold values of different
    per-example ranks (leaf by leaf for containers)."""
    if a is None or b is None or "other" in (a.kind, b.kind):
        return False
    if a.kind == "array" or b.kind == "array":
        return a.kind != b.kind or (None not in (a.ndim, b.ndim) and a.ndim != b.ndim)
    if a.kind == "dict" or b.kind == "dict":
        return a.kind != b.kind or set(a.items) != set(b.items) or \
            any(_ranks_differ(a.items[k], b.items[k]) for k in a.items)
    return len(a.items) != len(b.items) or \
        any(_ranks_differ(u, v) for u, v in zip(a.items, b.items))
