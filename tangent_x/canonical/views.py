"""Views a NumPy function returns (``x.T``, ``x.reshape(-1)``, ``np.swapaxes``):
how to take one again from a changed array, and how writing into one changes
the array it was taken from.  ``mutation`` records them beside the views an
index takes (``row = x[0]``).

``reshape`` and ``ravel`` give a view only when the array's layout allows
(a copy otherwise), ``np.asarray`` the array itself only when it has the
dtype asked for, ``np.real`` a view of an array but a new number from a
number, which only the running code knows: the relation carries
a flag computed where the view was taken (``is_view_of``), and each write
chooses on it."""
import gast

from ..core import ir, primitives as P
from ..core.naming import base_name

# Which NumPy functions return views, and of which kind, is the primitive
# table's ``view`` property ("always", "maybe", "read_only"); the inverse
# of each, to write a changed view back, is spelled below.
_KINDS = ("always", "maybe", "read_only")


class ViewCall:
    """``view = fn(base, *args)``.  ``flag``: for ``reshape``/``ravel``/``asarray``,
    the atom saying whether NumPy made a view (None: always a view).
    ``eqns``: the equations before it (where constant axes are spelled)."""

    def __init__(self, eqn, flag=None, eqns=()):
        self.prim, self.args, self.kwargs = eqn.prim, list(eqn.args[1:]), dict(eqn.kwargs)
        self.params, self.flag = eqn.params, flag
        self.axes = _constant_axes(eqns, self.args[0]) if self.args else None

    @property
    def label(self):
        return f"np.{self.prim.name}"

    def take(self, conv, base):
        """The view taken again from ``base`` (a changed array)."""
        return conv.emit(self.prim, [base] + list(self.args), dict(self.kwargs), self.params,
                         base=base_name(self.prim.name, base))

    def put_back(self, conv, base, view):
        """``base`` after its view became ``view``."""
        name_ = self.prim.name
        if self.prim.view == "read_only":
            raise conv.error(f"this writes into the read-only view {self.label}(...) returns "
                             f"(NumPy raises ValueError here)", None,
                             f"copy it first ({self.label}(...).copy())")
        if name_ == "asarray":
            return view
        if name_ == "real":
            return conv.emit(P.get("with_real"), [base, view], base="written")
        if name_ in ("reshape", "ravel", "squeeze", "expand_dims", "atleast_1d", "atleast_2d",
                     "atleast_3d"):
            shape = conv.emit(P.get("shape"), [base], base="shape")
            return conv.emit(P.get("reshape"), [view, shape], base="written")
        if name_ == "swapaxes" and len(self.args) == 2 and not self.kwargs:
            return conv.emit(self.prim, [view] + list(self.args), base="written")
        if name_ == "moveaxis" and len(self.args) == 2 and not self.kwargs:
            return conv.emit(self.prim, [view, self.args[1], self.args[0]], base="written")
        if name_ == "flip":
            return conv.emit(self.prim, [view] + list(self.args), dict(self.kwargs),
                             base="written")
        if name_ == "transpose" and not self.kwargs:
            if not self.args:
                return conv.emit(self.prim, [view], base="written")
            if self.axes is not None:
                inverse = sorted(range(len(self.axes)), key=lambda i: self.axes[i])
                inverse = conv.emit(P.get("tuple"), [ir.const(i) for i in inverse],
                                    base="inverse_axes")
                return conv.emit(self.prim, [view, inverse], base="written")
        raise conv.error(f"tangent_x cannot follow this write back into the array "
                         f"{self.label}(...) was taken from", None,
                         f"copy the view first ({self.label}(...).copy()) and write into "
                         f"the array itself")


def _constant_axes(eqns, atom):
    """The axes of ``transpose(x, axes)`` when known while transforming."""
    if isinstance(atom, gast.Constant) and isinstance(atom.value, tuple):
        return atom.value
    if ir.is_name(atom):
        for eqn in reversed(eqns):
            if atom.id in eqn.outs and eqn.prim.name == "tuple" and all(
                    isinstance(a, gast.Constant) and type(a.value) is int for a in eqn.args):
                return tuple(a.value for a in eqn.args)
    return None


def of_call(eqn):
    """Whether the equation ``eqn`` makes a view of its first argument (a name)."""
    return (eqn.prim.kind == "call" and eqn.prim.view in _KINDS and eqn.args
            and ir.is_name(eqn.args[0]) and len(eqn.outs) == 1)


def may_copy(eqn):
    return eqn.prim.view == "maybe"
