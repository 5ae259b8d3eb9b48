"""Inlining a user function where it is called: a scope of its own bound
to the caller's atoms (Python's argument binding: defaults, ``*args``,
``**kwargs``, keyword-only), its body converted in place, and recursion
unrolled while its depth is decided when transforming (at most
``scope.MAX_RECURSION`` calls).  Mixed into ``converter.Converter``."""
import collections

import gast

from ..core import ir, primitives as P
from .scope import MAX_RECURSION, LocalFunction, Scope, Static


class Inlining:
    """Mixed into ``converter.Converter``."""

    def inline(self, node, parsed, parent, args, kwargs, target, call_scope, call_node):
        key = (id(node), _static_signature(args, kwargs, self.tuple_length))
        self.check_recursion(key, getattr(node, "name", parsed.name), call_scope, call_node,
                             list(args) + list(kwargs.values()))
        self._inlining.append(key)
        self.deps.append(parsed.code_dep)
        saved_origin, saved_raised = self.origin, self._raised
        scope = None
        try:
            scope = Scope(parsed, node, parent)
            scope.inlined = key
            scope.caller = call_scope
            # (in a lax loop's body, the body's next step reads what this
            # call changes: every change is followed, for ``pure_loop_body``
            # to refuse)
            scope.caller_live = None if self._lax_loop_bodies else \
                frozenset(self._live_after) | _read_beside(self._stmt, call_node)
            self.bind_params(scope, node, parsed, args, kwargs, call_scope, call_node)
            start = len(self.eqns)
            if isinstance(node, gast.Lambda):
                self.origin = parsed.origin(node)
                result = self.expr(scope, node.body)
            else:
                result = self.block(scope, self.rewrite_exits(node, parsed).body)
        except BaseException:
            if scope is not None:   # abandoned (a loop converted again: ``CarryMore``)
                scope.finished = True
            raise
        finally:
            self._inlining.pop()
            self.origin, self._raised = saved_origin, saved_raised
        if not isinstance(result, LocalFunction):
            # its names are read no more (a function it returns would still read them)
            scope.finished = True
        if (target is not None and ir.is_name(result) and len(self.eqns) > start
                and self.eqns[-1].outs == [result.id]
                and not self._held_outside(result, scope)
                and not self.eqns[-1].bodies() and "carry" not in self.eqns[-1].params):
            new = self.namer.fresh(target)
            self.eqns[-1].outs = [new]
            # what is known of the value goes with its new name (a dict
            # comprehension's result is a dict, its keys known)
            for known in (self._containers, self._dict_keys, self._tuple_lengths,
                          self._run_time_slices):
                if result.id in known:
                    known[new] = known[result.id]
            if result.id in self._views:   # ``return x[1, :]``: a view of the caller's x
                base, idx = self._views.pop(result.id)
                self._view_children[base.id].remove(result.id)
                self._add_view(ir.name(new), base, idx)
            self.rename_container(result, ir.name(new))    # ``return (x[0], x[1])``
            # an equal value computed later reuses it by its new name (the
            # old one is no longer defined: fuzz seed 491003)
            for key in [k for k, v in self._cse.items() if v == result.id]:
                self._cse[key] = new
            result = ir.name(new)
        return result

    def check_recursion(self, key, name_, call_scope, call_node, args=()):
        """A recursive call is inlined again, with its arguments bound, as
        long as its depth is decided when transforming: the test that ends
        it must fold to a constant (``n == 0`` of a number ``n``).  A
        recursive call inside a branch decided at run time, or deeper than
        ``MAX_RECURSION`` levels, is refused where it is made."""
        depth = sum(k[0] == key[0] for k in self._inlining)
        if not depth:
            return
        if key in self._inlining:
            # called again with the same Python numbers: nothing known when
            # transforming gets closer to the end of the recursion
            s = call_scope          # the innermost activation of the function
            while s is not None and getattr(s, "inlined", None) is None:
                s = s.caller
            if s is not None and any(b is s for b in self._branch_scopes):
                sliced = [self._run_time_slices[a.id] for a in args
                          if ir.is_name(a) and a.id in self._run_time_slices]
                if sliced:
                    raise specialisable(self.error(
                        f"recursive call to {name_} over a slice of '{sliced[0]}', whose "
                        f"length is not known when transforming (an argument of the "
                        f"transformed function, or a list): the depth of the recursion "
                        f"is decided at run time", call_node,
                        f"loop over it instead (for p in {sliced[0]}: x = ...), or close "
                        f"over a tuple fixed when transforming (tx.grad(lambda x: "
                        f"loss(layers, x)) with layers a tuple of arrays or numbers)",
                        call_scope))
                raise specialisable(self.error(
                    f"recursive call to {name_} under a test decided at run time (array "
                    f"data, or an array argument of the transformed function): the depth "
                    f"of the recursion is not known when transforming", call_node,
                    "make the test depend on Python numbers fixed when transforming: pass "
                    f"the depth as a Python int ({name_}(x, 3), tx.grad({name_})(x, 3)), "
                    "not an array, or write it as a loop", call_scope))
            raise self.error(f"recursive call to {name_} with the same Python numbers as "
                             f"the call it is in: the recursion never stops", call_node,
                             "change a number argument on each call (n - 1) and stop on "
                             "it (if n == 0: ...), or write it as a loop", call_scope)
        if depth >= MAX_RECURSION:
            raise self.error(
                f"recursive call to {name_} more than {MAX_RECURSION} calls deep "
                f"(tangent_x unrolls recursion when transforming)", call_node,
                "write it as a loop (for/while, or lax.fori_loop)", call_scope)

    def _held_outside(self, atom, scope):
        """True when a name outside the inlined function's ``scope`` holds
        ``atom`` -- an argument it changed in place and returns (``c[i] = v;
        return c``): renaming the value for the caller's target would leave
        the caller's own name pointing at nothing."""
        def inside(s):
            while s is not None:
                if s is scope:
                    return True
                s = s.parent
            return False
        return any(not inside(s) and ir.is_name(s.locals.get(n)) and s.locals[n].id == atom.id
                   for s, n in self._bindings.get(atom.id, []))

    def bind_params(self, scope, node, parsed, args, kwargs, call_scope, call_node):
        a = node.args
        positional = [p.id for p in a.posonlyargs + a.args]
        args = list(args)
        if parsed.self_obj is not None and scope.parent is None:
            scope.locals[positional.pop(0)] = Static(parsed.self_obj)
        fn = parsed.fn if scope.parent is None else None
        defaults = list(getattr(fn, "__defaults__", None) or ()) if fn else None
        kwdefaults = dict(getattr(fn, "__kwdefaults__", None) or {}) if fn else None

        def default(i_or_name, expr_node):
            if fn is not None:
                value = (defaults[i_or_name] if isinstance(i_or_name, int)
                         else kwdefaults[i_or_name])
                return self.value_atom(value, "default")
            return self.atom(scope.parent, expr_node)

        bound = {}
        for p, v in zip(positional, args):
            bound[p] = v
        extra = args[len(positional):]
        if extra:
            if a.vararg is None:
                raise self.error(f"{parsed.name}() takes {len(positional)} positional "
                                 f"arguments but {len(args)} were given", call_node,
                                 None, call_scope)
            bound[a.vararg.id] = self.emit(P.get("tuple"), extra, base=a.vararg.id)
        elif a.vararg is not None:
            bound[a.vararg.id] = self.emit(P.get("tuple"), [], base=a.vararg.id)
        kwonly = [p.id for p in a.kwonlyargs]
        rest = {}
        for k, v in kwargs.items():
            if k in bound:
                raise self.error(f"{parsed.name}() got multiple values for '{k}'",
                                 call_node, None, call_scope)
            if k in positional or k in kwonly:
                bound[k] = v
            else:
                rest[k] = v
        if rest:
            if a.kwarg is None:
                raise self.error(f"{parsed.name}() got an unexpected keyword argument "
                                 f"'{next(iter(rest))}'", call_node, None, call_scope)
            bound[a.kwarg.id] = self.emit(P.get("dict"), list(rest.values()),
                                          params={"keys": tuple(rest)}, base=a.kwarg.id)
        elif a.kwarg is not None:
            bound[a.kwarg.id] = self.emit(P.get("dict"), [], params={"keys": ()},
                                          base=a.kwarg.id)
        first_default = len(positional) - len(a.defaults)
        for i, p in enumerate(positional):
            if p not in bound:
                if i < first_default:
                    raise self.error(f"{parsed.name}() missing argument '{p}'",
                                     call_node, None, call_scope)
                bound[p] = default(i - first_default, a.defaults[i - first_default])
        for i, p in enumerate(kwonly):
            if p not in bound:
                if a.kw_defaults[i] is None:
                    raise self.error(f"{parsed.name}() missing keyword argument '{p}'",
                                     call_node, None, call_scope)
                bound[p] = default(p, a.kw_defaults[i])
        for p, v in bound.items():
            self.bind(scope, p, v)    # the caller's array, mutated here, is seen there


def specialisable(error):
    """``error``, marked as one a transform answers by specialising on its
    call's Python int/bool arguments and tuple/list lengths
    (``api.specialised``) before giving it to the user."""
    error.specialisable = True
    return error


def _static_signature(args, kwargs, tuple_length):
    """What is known now of a call's arguments: numbers, strings and None
    by value, functions and objects by identity, the length of a tuple
    whose length is known (``layers[1:]`` gets shorter); run-time values
    as None."""
    def one(a):
        if isinstance(a, gast.Constant):
            return ("const", type(a.value).__name__, repr(a.value))
        if isinstance(a, Static):
            return ("static", id(a.obj))
        length = tuple_length(a)
        if length is not None:
            return ("tuple", length)
        return None
    return (tuple(one(a) for a in args),
            tuple(sorted((k, one(v)) for k, v in kwargs.items())))


def _read_beside(stmt, call):
    """Names the statement ``stmt`` reads besides the arguments of ``call``
    (``f(a) + a`` reads ``a`` after ``f`` may have changed it in place)."""
    if stmt is None:
        return frozenset()

    def loads(node):
        return collections.Counter(n.id for n in ir.walk(node)
                                   if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load))
    rest = loads(stmt)
    if call is not None:
        rest = rest - loads(call)
    return frozenset(rest)
