"""Numba's refusals, as located tangent_x errors, and the one mended here.

A Numba compile failure names a line of the generated numba stage;
``translate`` turns it into a ``JitError`` at the user's line, with a hint
(mark an argument static, run without jit).  One refusal is mended rather
than reported: a variable holding arrays of two float (or two integer)
dtypes (``widened_text``).  A variable holding a number on one path and an
array on another, or integers and floats, is reported at the user's
assignments of it (``join_error``): no one type follows NumPy on both.
"""
import ast
import os
import re

import numba.core.errors as numba_errors
import numpy as np

from ..errors import TransformError
from ..python_stage import loader as modules
from .kernels.common import HINT, REFUSES
from .overloads.lanes import SELECT_KINDS
from .specialize import depends_on, static_hint

__all__ = ["JitError", "translate", "widened_text", "MAX_WIDENED"]


class JitError(TransformError):
    """Code or arguments that Numba cannot compile (located at the user's line)."""


# a Numba typing refusal of a variable holding arrays of two dtypes (widened_text)
_UNIFY_ARRAYS = re.compile(r"Cannot unify array\((\w+), (\d+)d, \w+\) and "
                           r"array\((\w+), (\d+)d, \w+\) for '([A-Za-z_]\w*)\.\d+'")
# weak_scalars' mark of vmap's lanes of a Python number (numba_runtime.WeakLanes)
_WEAK_LANES = re.compile(r"weak_scalar\((broadcast_lanes\([^()]*\))\)")
# a variable holding a number on one path and an array on another (or arrays
# of two ranks): no one Numba type holds both (join_error)
_UNIFY_KINDS = re.compile(r"Cannot unify (\S+?(?:\([^()]*\))?(?: \(a Python number\))?) and "
                          r"(\S+?(?:\([^()]*\))?(?: \(a Python number\))?) "
                          r"for '([A-Za-z_]\w*)\.\d+', defined at (.+?) \((\d+)\)")
MAX_WIDENED = 8          # variables widened, at most, before the refusal stands
# a literal's type in Numba's message: Literal[int](0) (typed as int64)
_LITERAL = re.compile(r"^Literal\[(\w+)\]\(.*\)$")
_COLOURS = re.compile(r"\x1b\[[0-9;]*m")
# ``x[i] = v`` with ``v`` an array of more axes than the place it goes
_SETITEM_ARRAY = re.compile(r"No implementation of function Function\(<built-in function "
                            r"setitem>\).*?setitem\(array\(\w+, (\d+)d, \w+\), .*?, "
                            r"array\(\w+, (\d+)d", re.S)
_LINE = re.compile(r'File "([^"]+)", line (\d+)')
_UNTYPED_GLOBAL = re.compile(r"Untyped global name '(\w+)'.*?Numba type of <class '([\w.]+)'>",
                             re.S)


def widened_text(exc, compiled):
    """The numba stage's text mended for a Numba typing refusal ``exc``, or
    None.  A variable whose arrays have two dtypes (``acc = x`` float32,
    then ``acc = acc * 0.7 + c`` with a float64 ``c`` in a loop: NumPy
    changes the array's dtype as the loop runs) is refused by Numba's
    typing.  Its assignments are then cast to the common dtype
    (``widen_dtype``): Numba types a variable once, so the wider dtype is
    the one that holds every value (and the one NumPy ends with once the
    widening line has run)."""
    if not isinstance(exc, numba_errors.TypingError) or \
            getattr(compiled, "name", None) is None:
        return None
    message = _COLOURS.sub("", str(exc))
    match = _UNIFY_ARRAYS.search(message)
    if match is None:
        return None
    if _WEAK_LANES.search(compiled.text):
        # first without the lanes of Python numbers typed as weak (a
        # carry read where its two types meet in one temporary): the
        # code as typed before they were
        return _WEAK_LANES.sub(r"\1", compiled.text)
    a, ndim_a, b, ndim_b, var = match.groups()
    if ndim_a != ndim_b:
        return None
    try:
        dtype = np.promote_types(np.dtype(a), np.dtype(b))
    except TypeError:
        return None
    derivative = re.search(r"_(bar|dot)(_\d+)*$", var) is not None
    if dtype.kind not in "biufc" or (np.dtype(a).kind != np.dtype(b).kind
                                     and not derivative):
        # (a derivative's variable, e.g. the cotangent of an integer loop
        # counter, is widened: its integer side is a zero of the counter)
        # integers on one path and floats on the other: cast, the path
        # that keeps the integers would give floats (``join_error``)
        return None
    lines = compiled.text.split("\n")
    pattern = re.compile(rf"^(\s*){re.escape(var)} = (.+)$")
    changed = False
    for i, line in enumerate(lines):
        m = pattern.match(line)
        if m is None or m.group(2).startswith("widen_dtype("):
            continue
        try:
            ast.parse(m.group(2), mode="eval")
        except SyntaxError:
            continue
        lines[i] = f"{m.group(1)}{var} = widen_dtype({m.group(2)}, _tx_np.{dtype.name})"
        changed = True
    if not changed:
        return None
    imported(lines, "import numpy as _tx_np; "
             "from tangent_x.numba_stage.numba_runtime import widen_dtype")
    return "\n".join(lines)


def imported(lines, statements):
    """Add the import ``statements`` to the first import line of a numba
    stage's ``lines`` (in place; before its comment), so that line numbers
    (the line map) stay."""
    first = next(i for i, line in enumerate(lines) if line.startswith(("import ", "from ")))
    code, hash_, comment = lines[first].partition("  #")
    lines[first] = f"{code}; {statements}{hash_}{comment}"


def renamed_text(exc, compiled):
    """The numba stage's text with its variables renamed, where Numba's
    array-expression fusion failed on their names, or None.  The fusion
    names a fused kernel's parameters after the variables, an SSA
    version's ``.`` made ``_`` (``x_1.1`` becomes ``x_1_1``), and stops on
    a name that is then taken twice (``AssertionError: 'x_1_1' not
    unique``: fuzz seed 571068).  Every variable whose name ends in a digit
    gets ``_v`` after it, so none of ours looks like a renamed version:
    ``x_1`` is ``x_1_v``, its versions ``x_1_v_1``, ...  The lines stay
    where they were (the text is changed in place, name by name)."""
    if "not unique" not in _COLOURS.sub("", str(exc)) or \
            getattr(compiled, "name", None) is None or not getattr(compiled, "text", None):
        return None
    names = set()
    for node in ast.walk(ast.parse(compiled.text)):
        if isinstance(node, ast.FunctionDef):
            names.update(a.arg for a in node.args.args)
            names.update(n.id for n in ast.walk(node)
                         if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store))
    names = sorted((n for n in names if n[-1].isdigit()), key=len, reverse=True)
    if not names:
        return None
    pattern = re.compile(r"(?<![\w.])(" + "|".join(map(re.escape, names)) + r")(?!\w)")
    return pattern.sub(lambda m: m.group(1) + "_v", compiled.text)


def number_then_array(exc, compiled):
    """The numba-stage variable of a Numba typing refusal ``exc`` joining a
    number and an array, in ``compiled``'s own text, or None (a loop's
    variable that starts as a Python number: ``Jitted._peeled``)."""
    if not isinstance(exc, numba_errors.TypingError):
        return None
    match = _UNIFY_KINDS.search(_COLOURS.sub("", str(exc)))
    if match is None or getattr(compiled, "path", None) is None or \
            os.path.abspath(match.group(4)) != os.path.abspath(compiled.path):
        return None
    a, b, var = match.group(1), match.group(2), match.group(3)
    if sorted([_rank(a) == 0, (_rank(b) or 0) > 0]) != [True, True] and \
            sorted([_rank(b) == 0, (_rank(a) or 0) > 0]) != [True, True]:
        return None
    return var


def is_compile_failure(exc, compiled, known):
    """Whether ``exc``, raised by a call of ``compiled``'s dispatcher (which
    had ``known`` compiled versions before it), is Numba refusing to
    compile rather than the compiled code raising."""
    return isinstance(exc, numba_errors.NumbaError) or (
        len(compiled.dispatcher.overloads) == known and isinstance(
            exc, (AssertionError, NotImplementedError, KeyError, AttributeError)))


def translate(exc, compiled, leaves):
    """A Numba compile failure as a located tangent_x error."""
    message = str(exc)
    origin, code_line, inner = None, None, None
    for path, line in _LINE.findall(message):
        if os.path.abspath(path) == os.path.abspath(compiled.path):
            origin = compiled.linemap.get(int(line))
            code_line = int(line)
        elif inner is None:
            # the first generated line named that is not this function's: a
            # function it calls (a custom rule, see callees.py), where Numba failed
            inner = modules.LINEMAPS.get(os.path.abspath(path), {}).get(int(line))
    what = _summary(message) or f"{type(exc).__name__}"
    if inner is not None and origin is not None:
        what += f" (in {inner.short()}: {inner.text}, called from {origin.short()})"
        origin = inner
    types_ = ", ".join(_numba_type(v) for v in leaves)
    where = ""
    if code_line is not None:
        text = compiled.text.splitlines()[code_line - 1].strip()
        where = f" (numba stage {compiled.path}:{code_line}: {text})"
    untyped = _UNTYPED_GLOBAL.search(_COLOURS.sub("", message))
    if untyped is not None:     # a Python object the code calls, not an argument
        name, kind = untyped.groups()
        hint = (f"compiled code can call NumPy functions and functions tangent_x "
                f"inlines, not '{name}' (a {kind.rpartition('.')[2]}); run without jit "
                "(with tx.disable_jit(): ...) or write it with NumPy")
    elif REFUSES in message:
        what = _COLOURS.sub("", message)
        what = what[what.index(REFUSES) + len(REFUSES):].split("\n")[0].rstrip(". ")
        what, _, hint = what.partition(HINT)
        hint = hint or "run without jit (with tx.disable_jit(): ...)"
        error = JitError(what + where, origin or compiled.origin, hint)
        error.numba_error = exc
        return error
    elif SELECT_KINDS in message:
        what = _COLOURS.sub("", message)
        what = what[what.index(SELECT_KINDS):].split("\n")[0].rstrip(". ")
        what += "; NumPy's dtype depends on the side the examples take, compiled code has one"
        hint = ("give the variable one dtype on both sides (make the integers floats "
                "where they are made: np.arange(3.0), x.astype(np.float64)), or run "
                "without jit (with tx.disable_jit(): ...)")
    elif _SETITEM_ARRAY.search(_COLOURS.sub("", message)) is not None:
        ranks = _SETITEM_ARRAY.search(_COLOURS.sub("", message)).groups()
        what = (f"this writes a {ranks[1]}-d array into a place of a {ranks[0]}-d array "
                "that has fewer axes than the value; compiled code writes only values of "
                "the place's shape or fewer axes (NumPy drops a value's leading size-1 "
                "axes, and raises 'setting an array element with a sequence' for an array "
                "written into one element)")
        hint = ("give the value the place's shape: v[0] or v.item() for one element, "
                "v.reshape(x[i].shape) for a row")
    else:
        hint = static_hint(_arguments_read(compiled, code_line, leaves))
    joined = join_error(message, compiled, hint if hint.startswith("if ") else None)
    if joined is not None:
        error = JitError(*joined)
        error.numba_error = exc
        return error
    error = JitError(f"Numba cannot compile this: {what}{where}; the compiled function's "
                     f"arguments are ({types_})", origin or compiled.origin, hint)
    error.numba_error = exc         # for a caller that can still mend it (LaneLoop)
    return error


def join_error(message, compiled, static=None, numbers=False):
    """(message, origin, hint) for Numba refusing a variable that holds a
    number on one path and an array on another, or arrays of two ranks
    (``a = x * 2.0`` under an ``if``, ``a = 1.5`` under its ``else``): NumPy
    runs either, but compiled code gives a variable one type, and making the
    number an array would change what later lines compute (``np.sum(a)``).
    Likewise integer arrays on one path and float arrays on another
    (``i = np.arange(3)``, then ``i = i * x`` under an ``if``): cast to
    floats, the path that keeps the integers would end in floats.
    Names the user's assignments; ``static``: the hint to mark arguments
    static (a loop whose trip count they give is then unrolled), if any;
    ``numbers``: numbers of two types of one kind (float32 and float64,
    which Numba unifies silently: ``joins``) are refused too.
    None for any other refusal."""
    match = _UNIFY_KINDS.search(_COLOURS.sub("", message))
    if match is None:
        return None
    a, b, var, path, _ = match.groups()
    ranks = {_rank(t) for t in (a, b)}
    kinds_ = {_dtype(t).kind for t in (a, b) if _dtype(t) is not None}
    dtypes = {_dtype(t) for t in (a, b)}
    if None in ranks or (len(ranks) != 2 and len(kinds_) != 2 and
                         not (numbers and len(ranks) == 1 and len(dtypes) == 2)):
        return None
    path = os.path.abspath(path)
    if path == os.path.abspath(compiled.path):
        text, linemap = compiled.text, compiled.linemap
    else:
        linemap = modules.LINEMAPS.get(path, {})
        try:
            with open(path) as f:
                text = f.read()
        except OSError:
            return None
    assigned = re.compile(rf"^\s*{re.escape(var)}\s*=[^=]")
    origins = []
    for i, line in enumerate(text.split("\n"), 1):
        origin = linemap.get(i) if assigned.match(line) else None
        if origin is not None and all(origin.short() != o.short() for o in origins):
            origins.append(origin)
    if not origins:
        return None
    name, lines = _user_assignments(var, origins)
    if len(ranks) == 2:
        kinds = " and ".join(sorted(f"{r}-d arrays" if r else "numbers" for r in ranks))
    else:
        noun = "numbers" if ranks == {0} else "arrays"
        kinds = " and ".join(f"{_dtype(t).name} {noun}" for t in (a, b))
    where = ", ".join(lines or [f"{o.short()}: {o.text.strip()}" for o in origins])
    message = (f"Numba cannot compile this: '{name}' holds {kinds} on different paths "
               f"or loop turns ({where}); compiled code "
               "gives a variable one type, and NumPy's result depends on the path taken")
    if ranks == {0}:
        hint = ("give it one dtype on every path: write the number with that dtype where "
                "it is made (2.0 for 2, float(...), np.float32(...)), or run without jit "
                "(with tx.disable_jit(): ...)")
        return message, origins[0], hint
    if len(ranks) != 2 and len(kinds_) == 1:
        hint = ("give it one dtype on every path: cast where it is made "
                "(x.astype(np.float64), np.float32(...)), or run without jit "
                "(with tx.disable_jit(): ...)")
        return message, origins[0], hint
    if len(ranks) != 2:
        hint = ("give it one dtype on every path: make the integers floats where they "
                "are made (np.arange(3.0), x.astype(np.float64)), or run without jit "
                "(with tx.disable_jit(): ...)")
        return message, origins[0], hint
    hint = ("give it the same kind of value on every path (an array of one shape, "
            "e.g. np.full(shape, number) or np.broadcast_to(number, shape), if that is "
            "what the later lines should see; or float(...) of a 0-d value), or run "
            "without jit (with tx.disable_jit(): ...)")
    if static is not None:       # a loop with a fixed trip count is unrolled
        hint = static.replace("; or run without jit (with tx.disable_jit(): ...)", "") + \
            "; or " + hint
    return message, origins[0], hint


def _user_assignments(var, origins):
    """The user's name for the numba stage's ``var`` (``a`` for ``a_1``) and
    its assignments ("file:line: text") in the user's functions that hold
    the statements ``origins`` name (an ``if`` names its branches' lines),
    or (var, [])."""
    base = re.sub(r"_\d+$", "", var)
    found = []
    for origin in origins:
        try:
            with open(origin.filename) as f:
                source = f.read()
            tree = ast.parse(source)
        except (OSError, SyntaxError, ValueError):
            continue
        source_lines = source.split("\n")
        # the function the statement is in: every assignment of the name there
        scope = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.Lambda))
                 and n.lineno <= origin.lineno <= getattr(n, "end_lineno", n.lineno)]
        nodes = scope[-1:] or [n for n in ast.walk(tree) if isinstance(n, ast.stmt)
                               and n.lineno == origin.lineno]
        for inner in sorted((n for node in nodes for n in ast.walk(node)
                             if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign))),
                            key=lambda n: n.lineno):
            targets = inner.targets if isinstance(inner, ast.Assign) else [inner.target]
            if any(isinstance(t, ast.Name) and t.id in (var, base) for t in targets):
                line = f"{os.path.basename(origin.filename)}:{inner.lineno}: " \
                    f"{source_lines[inner.lineno - 1].strip()}"
                if line not in found:
                    found.append(line)
                    base = next(t.id for t in targets if isinstance(t, ast.Name)
                                and t.id in (var, base))
        if found:
            break
    found = found[:3] + (["..."] if len(found) > 3 else [])
    return (base, found) if found else (var, [])


def _plain(numba_type):
    """A Numba type's text without its mark of a Python number, a literal
    as its type (``Literal[int](0)``: int64)."""
    numba_type = numba_type.replace(" (a Python number)", "")
    return _LITERAL.sub(lambda m: {"int": "int64", "float": "float64"}.get(m.group(1),
                                                                          m.group(1)),
                        numba_type)


def _dtype(numba_type):
    """The dtype of a Numba type's text (an array's or a number's), or None."""
    numba_type = _plain(numba_type)
    m = re.fullmatch(r"array\((\w+), \d+d, \w+\)", numba_type)
    try:
        return np.dtype(m.group(1) if m else numba_type)
    except TypeError:
        return None


def _rank(numba_type):
    """The rank of a Numba type's text (0 for a number), None for others."""
    numba_type = _plain(numba_type)
    m = re.fullmatch(r"array\(\w+, (\d+)d, \w+\)", numba_type)
    if m is not None:
        return int(m.group(1))
    if re.fullmatch(r"(float|int|uint|complex)\d+|bool", numba_type):
        return 0
    return None


def _arguments_read(compiled, code_line, leaves):
    """The compiled function's number (or string) arguments that the failing
    line's values are computed from: those marking static could fix."""
    if code_line is None:
        return []
    try:
        tree = ast.parse(compiled.text)
    except SyntaxError:
        return []
    name = getattr(compiled, "name", None)
    func = next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name),
                None)
    if func is None:
        return []
    reads = [n.id for stmt in ast.walk(func) if isinstance(stmt, ast.stmt)
             and getattr(stmt, "lineno", None) == code_line
             and not isinstance(stmt, (ast.For, ast.While, ast.If, ast.FunctionDef))
             for n in ast.walk(stmt) if isinstance(n, ast.Name)]
    scalars = [a.arg for a, v in zip(func.args.args, leaves) if not isinstance(v, np.ndarray)]
    return depends_on(func, reads, scalars)


def _summary(message):
    lines = [ln.strip() for ln in message.splitlines() if ln.strip()]
    keep = []
    for ln in lines:
        if ln.startswith("Failed in ") or ln.startswith("During:") or \
                ln.startswith("File ") or ln.startswith("^") or set(ln) <= set("- "):
            continue
        keep.append(ln)
        if len(keep) >= 3:
            break
    text = " ".join(keep)
    text = _COLOURS.sub("", text)
    return text[:400]


def _numba_type(value):
    if isinstance(value, np.ndarray):
        return f"array({value.dtype}, {value.ndim}d)"
    return type(value).__name__
