"""Calling compiled code: the ``disable_jit`` switch and the fast path.

A jitted function's general path (``Jitted.__call__``) binds, flattens and
looks the call's signature up in a dict.  After a call whose arguments are
arrays, numbers and plain containers (list, tuple, dict) of them, the
function ``jit`` returned gets as its code a small guard written for that
signature (``fast_path``): it checks the argument types and that every
global, closure value and attribute the code was built from is still the
same object, then calls the Numba dispatcher directly.  Anything else falls
through to the general path.

While a ``disable_jit`` block is open in any thread no fast path is
installed, and opening one removes them all, so a fast path need not ask.
"""
import functools
import itertools
import re
import threading
import types
import weakref

import numpy as np

from .results import finish_grads, identity_finish, leaf_caster
from .specialize import Dyn, Zero, children, is_container, is_namedtuple

__all__ = ["disabled", "open_disabled", "close_disabled", "LOCK", "fast_paths_allowed",
           "INSTALLED", "fast_path", "plain_tree"]

_STATE = threading.local()
# How many disable_jit() blocks are open in any thread: while one is, no
# jitted function has a fast path (see Jitted._install); the general path
# reads this thread's own setting.
_DISABLING = [0]
LOCK = threading.Lock()
INSTALLED = weakref.WeakSet()      # jitted functions whose fast path is installed
_FRONT_CODES = itertools.count()   # numbers the fast paths' names in a front's globals
_MISSING = object()
# attributes a Python function always has (deleting one sets it to None or
# is refused), so the fast path reads them without getattr's default
_FUNCTION_SLOTS = ("__code__", "__defaults__", "__kwdefaults__", "__globals__", "__closure__")


def disabled():
    """Whether this thread is inside a ``disable_jit`` block."""
    return getattr(_STATE, "disabled", False)


def open_disabled(disable=True):
    """Enter a ``disable_jit`` block: every fast path removed.  Returns the
    thread's previous setting, for ``close_disabled``."""
    old = disabled()
    _STATE.disabled = disable
    with LOCK:
        _DISABLING[0] += 1
        for jitted in list(INSTALLED):
            jitted._uninstall()
    return old


def close_disabled(old):
    """Leave a ``disable_jit`` block opened by ``open_disabled``."""
    _STATE.disabled = old
    with LOCK:
        _DISABLING[0] -= 1


def fast_paths_allowed():
    """No ``disable_jit`` block is open in any thread (read under ``LOCK``)."""
    return not _DISABLING[0]


def fast_path(jitted, general, generated, compiled, names, args, values):
    """The fast path's function (see ``Jitted._install``) and, for the
    function ``jit`` returned (``Jitted.front``), its code and defaults:
    Python source written for one signature, because on a call that costs
    a few hundred nanoseconds in all, each generic step (a loop over the
    arguments, a dict lookup, even a ``**kwargs`` dict) would cost more
    than the compiled code.  Its parameters are the function's own, so
    keyword arguments bind as they would; their default marks one not
    passed, which the general path (``general``) then reports as any call
    would."""
    env = {"_tx_dispatcher": compiled.dispatcher,
           "_tx_general": functools.partial(_general_call, general, names),
           "_tx_failed": functools.partial(jitted._failed, compiled=compiled,
                                           known=len(compiled.dispatcher.overloads)),
           "_tx_missing": _MISSING, "_tx_attribute_holds": _attribute_holds,
           "_tx_cell_holds": _cell_holds}
    checks, guards, leaves = [], [], []
    for name, value in zip(names, args):
        _guard_tree(name, value, env, checks, guards, leaves)
    holders, seen = {}, set()
    for j, (kind, holder, attr, value) in enumerate(generated.deps):
        if (kind, id(holder), attr, id(value)) in seen:
            continue
        seen.add((kind, id(holder), attr, id(value)))
        env[f"_tx_v{j}"] = value
        if kind == "global":
            h = holders.setdefault(id(holder), f"_tx_g{len(holders)}")
            env[h] = holder
            checks.append(f"{h}.get({attr!r}, _tx_missing) is _tx_v{j}")
        elif kind == "cell":
            env[f"_tx_c{j}"] = holder
            checks.append(f"_tx_cell_holds(_tx_c{j}, _tx_v{j})")
        else:
            env[f"_tx_o{j}"] = holder
            if _rebound_on_access(value):
                checks.append(f"_tx_attribute_holds(_tx_o{j}, {attr!r}, _tx_v{j})")
            elif type(holder) is types.FunctionType and attr in _FUNCTION_SLOTS:
                # an attribute every function has (``__code__``, replaced by
                # IPython's autoreload): read as an attribute, no getattr call
                checks.append(f"_tx_o{j}.{attr} is _tx_v{j}")
            else:       # inline: a Python call costs as much as the check
                checks.append(f"getattr(_tx_o{j}, {attr!r}, _tx_missing) is _tx_v{j}")
    if compiled.contents:
        env["_tx_contents"] = compiled.contents
        checks.append("_tx_contents.held()")
    hidden = []
    for k, value in enumerate(compiled.hidden):
        env[f"_tx_h{k}"] = value
        hidden.append(f"_tx_h{k}")
    given = ", ".join(names)
    packed = f"({given}{',' if names else ''})"
    flat = f"({', '.join(leaves)}{',' if leaves else ''})"
    result = _fast_result(jitted, compiled, args, values, env, packed, flat)
    fname = getattr(jitted._fun, "__name__", "")
    if not fname.isidentifier() or fname in env or fname in names:
        fname = "jitted"
    # a container argument: its structure checked, then its leaves bound
    # to locals, level by level (each check guards the reads after it)
    lines = [f"def {fname}({', '.join(f'{n}=_tx_missing' for n in names)}):"]
    for test, binds in guards:
        lines.append(f"    if not ({test}):")
        lines.append(f"        return _tx_general({given})")
        lines += [f"    {bind}" for bind in binds]
    lines += [
        f"    if {' and '.join(checks or ['True'])}:",
        "        try:",
        f"            _tx_values = _tx_dispatcher({', '.join(leaves + hidden)})",
        "        except Exception as _tx_exc:",
        f"            _tx_failed(_tx_exc, leaves={flat}, call=({packed}, {{}}))",
        f"        return {result}",
        f"    return _tx_general({given})",
        ""]
    text = "\n".join(lines)
    code = compile(text, f"<tangent_x jit fast path of {jitted._name()}>", "exec")
    exec(code, env)
    function = env[fname]
    function.source = text       # for reading: type(jitted).__call__.source
    front = jitted.__dict__.get("_front")
    if front is None:
        return staticmethod(function), None, None
    # the same code for the front (see ``Jitted.front``), its globals prefixed
    prefix = f"_tx_{next(_FRONT_CODES)}_"  # new names: code running never sees them change
    renamed = {prefix + k[len("_tx_"):]: v for k, v in env.items() if k.startswith("_tx_")}
    front.__globals__.update(renamed)
    text = re.sub(r"\b_tx_", prefix, text)
    scratch = dict(renamed)
    exec(compile(text, f"<tangent_x jit fast path of {jitted._name()}>", "exec"), scratch)
    made = scratch[fname]
    front.source = text          # for reading: jitted.source
    return staticmethod(function), made.__code__, made.__defaults__


def _fast_result(jitted, compiled, args, values, env, packed, flat):
    """The expression of the fast path's result.  The structure is
    rebuilt inline; a gradient is returned as computed where the general
    path's finishing (cast to the argument's type, copy what shares
    memory) would give it back unchanged: every argument a Python float
    or int (no array to share memory with; Numba's types, fixed by the
    argument types, give float gradients and a float value, as this
    call showed).  Otherwise the general finishing runs."""
    plan, inner = compiled.plan, jitted._inner
    if compiled.weak or compiled.narrow_results() or compiled.tags:
        # narrow scalars are cast back (see Compiled.narrow_scalars), and
        # results tagged with their dtype (Compiled.untag)
        env["_tx_finish"] = functools.partial(jitted._finish, compiled)
        return f"_tx_finish(_tx_values, {packed}, {flat})"
    direct = inner._finish is identity_finish
    if not direct and getattr(inner, "_single", None) is not None and \
            not plan.has_zeros and not inner._has_aux and \
            all(type(a) in (float, int) for a in args):
        flat = (values,) if plan.bare else values
        direct = all(type(v) is float for v in flat) and \
            all(type(args[i]) is float for i in inner._argnums)
    rebuilt = _rebuild_text(plan.out, "_tx_values" if plan.bare else None, env)
    if direct:
        return rebuilt
    if getattr(inner, "_single", None) is not None and not plan.has_zeros:
        # the general finishing of gradients, less its pytree walks
        # when every argument is a leaf (then the fill is a leaf's cast)
        every_leaf = all(_plain_leaf(a) for a in args)
        env["_tx_finish_grads"] = functools.partial(
            finish_grads, inner, inner._single,
            fill=leaf_caster(inner.cast_gradient) if every_leaf else inner.fill_gradient)
        out = "(_tx_values,)" if plan.bare else "_tx_values"
        return f"_tx_finish_grads({rebuilt}, {packed}, {flat}, {out})"
    env["_tx_finish"] = functools.partial(jitted._finish, compiled)
    return f"_tx_finish(_tx_values, {packed}, {flat})"


def _general_call(general, names, *values):
    """The general path called from a fast path that stepped aside: the
    parameters given, by position up to the first one not given, by name
    after it."""
    args, kwargs = [], {}
    for name, value in zip(names, values):
        if value is _MISSING:
            continue
        if kwargs or len(args) < names.index(name):
            kwargs[name] = value
        else:
            args.append(value)
    return general(*args, **kwargs)


def plain_tree(value):
    """An argument the fast path takes: a plain leaf, or a list, tuple or
    dict (of string or int keys) of them, nested (not a namedtuple or a
    registered node: the general path rebuilds those)."""
    if type(value) in (list, tuple):
        return all(plain_tree(v) for v in value)
    if type(value) is dict:
        return all(type(k) in (str, int) and plain_tree(v) for k, v in value.items())
    return _plain_leaf(value)


def _guard_tree(expr, value, env, checks, guards, leaves):
    """The fast path's checks for the argument ``expr`` shaped as ``value``
    (see ``plain_tree``), in the general path's flattening order: a
    container's type, length and (a dict's) keys in order go in ``guards``
    with the statements binding its items to locals; a leaf's type, dtype
    and rank go in ``checks``, its local in ``leaves``.  Together they hold
    exactly when the general path would make the key this call made."""
    n = len(env)
    if type(value) in (list, tuple, dict):
        env[f"_tx_t{n}"] = type(value)
        test = f"type({expr}) is _tx_t{n} and len({expr}) == {len(value)}"
        if type(value) is dict:
            env[f"_tx_k{n}"] = list(value)
            test += f" and list({expr}) == _tx_k{n}"
            items = [(f"{expr}[{k!r}]", v) for k, v in value.items()]
        else:
            items = [(f"{expr}[{i}]", v) for i, v in enumerate(value)]
        binds, local = [], []
        for j, (item, v) in enumerate(items):
            name = f"_tx_a{n}_{j}"
            binds.append(f"{name} = {item}")
            local.append((name, v))
        guards.append((test, binds))
        for name, v in local:
            _guard_tree(name, v, env, checks, guards, leaves)
        return
    env[f"_tx_t{n}"] = type(value)
    checks.append(f"type({expr}) is _tx_t{n}")
    if isinstance(value, np.ndarray):
        env[f"_tx_d{n}"] = value.dtype
        checks.append(f"{expr}.dtype is _tx_d{n}")
        checks.append(f"{expr}.ndim == {value.ndim}")     # ranks are in the key
        if value.ndim == 0:           # as the general path: the number it holds
            expr = f"{expr}[()]"
    leaves.append(expr)


def _plain_leaf(value):
    """An argument the fast path takes as it is: an array or a number of a
    type the compiled code accepts."""
    if isinstance(value, np.ndarray):
        return value.dtype.kind in "biufc" and value.dtype.isnative
    if type(value) in (float, int, bool, complex):
        return True
    return isinstance(value, np.generic) and value.dtype.kind in "biufc"


def _cell_holds(cell, value):
    try:
        return cell.cell_contents is value
    except ValueError:       # emptied
        return False


def _rebound_on_access(value):
    """A bound method: a new object on every attribute access, so the fast
    path compares it with ``==`` (``_attribute_holds``), not ``is``."""
    if isinstance(value, types.MethodType):
        return True
    return (isinstance(value, types.BuiltinMethodType)
            and not isinstance(getattr(value, "__self__", None), types.ModuleType))


def _attribute_holds(holder, attr, value):
    current = getattr(holder, attr, _MISSING)
    # bound methods are new objects on every access (as canonical.deps_current)
    return current is value or (callable(value) and current == value)


def _rebuild_text(av, bare, env):
    """Python source rebuilding a plan's result structure from the flat
    ``_tx_values`` (``bare``: the name of the one value returned unwrapped)."""
    if is_container(av):
        items = [_rebuild_text(c, bare, env) for c in children(av)]
        if isinstance(av, dict):
            keys = []
            for k in av:
                env[f"_tx_k{len(env)}"] = k
                keys.append(f"_tx_k{len(env) - 1}")
            return "{" + ", ".join(f"{k}: {v}" for k, v in zip(keys, items)) + "}"
        if type(av) is tuple:
            return "(" + "".join(f"{v}, " for v in items) + ")"
        if type(av) is list:
            return "[" + ", ".join(items) + "]"
        env[f"_tx_T{len(env)}"] = type(av)
        t = f"_tx_T{len(env) - 1}"
        if is_namedtuple(av):
            return f"{t}({', '.join(items)})"
        return f"{t}([{', '.join(items)}])"
    if isinstance(av, Dyn):
        return bare if bare is not None else f"_tx_values[{int(av.name[1:])}]"
    if isinstance(av, Zero):
        return "None"
    env[f"_tx_k{len(env)}"] = av.value
    return f"_tx_k{len(env) - 1}"
