"""The numba stage: python-stage source specialised for one call signature.

``jit`` hands Numba the same generated source that eager mode runs, after
one more source-to-source pass.  The python stage is generic: it indexes
pytrees (``params[0]['W']``), builds cotangent containers (``unindex``,
``tree_add``), tests Python values (``if config['relu']``) and keeps
symbolic zeros (``None``).  Numba can type none of that.  This pass is a
small *partial evaluator*: it walks the generated function once with an
abstract value for every variable,

* ``Dyn(name)``  a value only known at run time, held in a compiled variable
  (an array or a number): the only thing Numba ever sees;
* ``Const(v)``   a value known now: static arguments, literals, shapes of
  containers, functions and modules;
* ``Zero(like)`` a symbolic zero cotangent shaped like ``like``;
* ``Tape(t)``    a growable list (per leaf) filled by a loop (see
  ``Specializer.sizes`` for how it is kept).  A compiled list grows in
  place; where the python stage keeps it in each of its versions (a
  derivative's tape, ``new = appended(old, y)``), the versions are its
  first items, their lengths kept (``Tapes.version_length``), and a name
  for the list before an item went in is ``Stale`` (read: refused);
* Python ``dict``/``list``/``tuple``/namedtuple of abstract values: a
  pytree whose structure is known and whose leaves are any of the above.

Container operations and anything computed from constants are evaluated
away (``params[0]['W']`` becomes the leaf ``params_0_W``; an ``if`` on a
static value keeps only the branch taken); everything else is re-emitted
as it was.  Control flow stays real: an ``if`` on a run-time value keeps
both branches (values that differ between them are joined into one
variable), and loops keep running in compiled code, their carried pytrees
split into one variable per leaf.  *Why source, not tracing:* a tracer
would see one path through value-dependent ``if``/``while`` and one shape
of ``x[x < 0]``; a source pass keeps every path, so those compile.

The result is the ``numba`` stage: a function of the arguments' leaves,
returning a flat tuple of leaves, and a ``Plan`` telling the Python wrapper
how to flatten arguments and rebuild the result.

The package, from the bottom up:

* ``signals``, ``values``: the error, the internal signals and the
  abstract values above; ``hints``, ``syntax``, ``plan``: advice in errors,
  facts read off the source, and the wrapper's ``Plan``;
* ``Specializer`` (``specializer``) is one object made of one mixin per
  part of the walk: ``state`` (names, errors, emitting), ``rendering``
  (values spelled as code: constants, globals, hidden arguments),
  ``statements``, ``expressions``, ``calls``, ``joins`` (an ``if`` on a
  run-time test), ``loops`` (unrolled or compiled), ``carries`` (a
  compiled loop's carried variables) and ``tapes`` (lists a loop fills);
* ``registry`` with ``container_calls``, ``numpy_calls``, ``scan_calls`` and
  ``tree_calls``:
  the calls the specialiser evaluates itself instead of emitting them, or
  respells for Numba.
"""
from .hints import depends_on, static_hint
from .plan import Plan
from .signals import SpecializationError
from .specializer import Specializer
from .values import (Const, Dyn, Expr, Steps, Tape, Zero, av_leaves, children, describe,
                     is_container, is_namedtuple, rebuild)

__all__ = ["Const", "Dyn", "Expr", "Plan", "SpecializationError", "Specializer", "Steps",
           "Tape", "Zero", "av_leaves", "children", "depends_on", "describe", "is_container",
           "is_namedtuple", "rebuild", "static_hint"]
