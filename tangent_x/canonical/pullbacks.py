"""``tx.vjp(f, *primals)`` inside a transformed function (mixed into
``converter.Converter``).  Its pair ``(out, pullback)`` is known when
transforming: ``out`` is ``f`` inlined on the primals, and the pullback a
transform-time value (``Pullback``) which, called on a cotangent, inlines
the vjp code of ``f`` (made now, as ``tx.jvp``'s jvp code is) on the same
primals and that cotangent, and returns its cotangents, one per primal, as
JAX's pullback does.  So ``tx.vjp(f, x)[1](ct)[0]``, or ``y, pullback =
tx.vjp(f, x)`` then ``pullback(ct)``, differentiates, vmaps and compiles
like any code (the forward pass is run again inside the pullback: two
passes of ``f`` where JAX's linearisation keeps one)."""
import gast

from ..core import ir, primitives as P
from . import parser
from .scope import Static


class Pullback:
    """The pullback of a ``tx.vjp`` made inside the code: the vjp code of
    ``fun`` and the atoms it is called on."""

    def __init__(self, code, primals, bound):
        self.code = code
        self.primals = primals
        self.bound = bound


class VjpPair:
    """``tx.vjp(f, x)``'s ``(out, pullback)`` inside the code."""

    def __init__(self, out, pullback):
        self.items = (out, Static(pullback))


class Pullbacks:
    """Mixed into ``converter.Converter``."""

    def vjp_call(self, scope, vjp, node, target):
        if any(k.arg != "has_aux" or not (isinstance(k.value, gast.Constant)
                                          and k.value.value is False) for k in node.keywords):
            raise self.error("tx.vjp(..., has_aux=True) inside a transformed function is "
                             "not supported", node,
                             "return the auxiliary value from a separate call of the "
                             "function", scope)
        if len(node.args) < 2:
            raise self.error("tx.vjp takes (fun, *primals)", node,
                             "call it as tx.vjp(f, x)", scope)
        fun, bound = self._jvp_target(scope, node.args[0], node)
        primals = [self.atom(scope, a) for a in node.args[1:]]
        code, primal = vjp.pullback_for_primals(fun, len(primals), first=len(bound))
        parsed = parser.parse(primal)       # the primal output: f itself, inlined
        out = self.inline(parsed.node, parsed, None, bound + primals, {}, target, scope, node)
        return Static(VjpPair(out, Pullback(code, primals, bound)))

    def pullback_call(self, scope, pullback, node, target):
        """``pullback(ct)``: the vjp code inlined; its cotangents, a tuple."""
        if len(node.args) != 1 or node.keywords:
            raise self.error("a pullback takes one cotangent", node,
                             "call it as pullback(ct), ct shaped like the output", scope)
        ct = self.atom(scope, node.args[0])
        parsed = parser.parse(pullback.code.function)
        both = self.inline(parsed.node, parsed, None,
                           pullback.primals + [ct] + pullback.bound, {}, None, scope, node)
        grads = self.emit(P.get("getitem"), [both, ir.const(1)], target=target, base="cts")
        if len(pullback.primals) == 1:     # one primal: vjp code returns it bare
            grads = self.emit(P.get("tuple"), [grads], base="cts")
            self._tuple_lengths[grads.id] = 1
        else:
            self._tuple_lengths[grads.id] = len(pullback.primals)
        return grads

    def vjp_pair_item(self, pair, idx, node, scope):
        """``tx.vjp(f, x)[0]`` or ``[1]``."""
        if not (isinstance(idx, gast.Constant) and type(idx.value) is int
                and -2 <= idx.value < 2):
            raise self.error("tx.vjp(...) is a pair (out, pullback): index it with 0 or 1",
                             node, None, scope)
        return pair.items[idx.value]
