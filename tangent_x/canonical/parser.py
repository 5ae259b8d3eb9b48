"""Find and parse the source of a Python function.

Source comes from ``linecache`` so functions typed into an interactive
session or built with ``exec`` work once their source is registered there.
Whole files are parsed (and cached) rather than ``inspect.getsource``'s
line-slicing, because a lambda is only identifiable by its position in the
file: two lambdas may share a line, and only the code object's positions
(``co_positions``, Python >= 3.11) tell them apart.

The source must be the code that runs: the file is read again when it
changed on disk (``linecache.checkcache``), and the definition found in it
is compiled and compared with the function's code object (see
``verify``), so an edited and reloaded module, a file re-run with
``runpy`` or a function redefined by ``exec`` is transformed as it now
is, and a function whose file changed after it was defined is refused
with an error naming the file and line, never transformed from text it
was not compiled from.
"""
import ast
import functools
import inspect
import linecache
import textwrap
import types

import gast

from ..core import primitives
from ..core.custom import _Custom
from ..core.origins import LINEMAPS
from ..errors import Origin, TransformError
from .partials import as_function


class ParsedFunction:
    """A function's AST plus everything needed to resolve its names."""

    def __init__(self, fn, node, filename, lines, globals_, closure, self_obj=None):
        self.fn = fn
        self.node = node            # gast.FunctionDef or gast.Lambda
        self.filename = filename
        self.lines = lines
        self.globals = globals_
        self.closure = closure      # name -> value, for free variables
        self.self_obj = self_obj    # bound method's instance, if any
        self.code = fn.__code__     # the code object the source was checked against
        self.name = fn.__name__ if node.__class__ is not gast.Lambda else "lambda"
        if self.name == "<lambda>":
            self.name = "lambda"

    @property
    def code_dep(self):
        """A dependency (as ``canonical.deps_current`` reads them) on the
        function's code object: code generated from this source is stale
        once ``fn.__code__`` is replaced (IPython's autoreload does that)."""
        return ("attr", self.fn, "__code__", self.code)

    def origin(self, node):
        lineno = getattr(node, "lineno", None) or self.node.lineno
        mapped = LINEMAPS.get(self.filename, {}).get(lineno)
        if mapped is not None:     # generated code: point at the user's line
            return mapped
        text = self.lines[lineno - 1].strip() if 0 < lineno <= len(self.lines) else ""
        return Origin(self.filename, lineno, text, self.name)


@functools.lru_cache(maxsize=256)
def _parse_file(filename, source):
    return gast.parse(source, filename=filename)


_FUNCTION_INDEX = {}


def _function_nodes(tree):
    """Every def and lambda of a parsed file (indexed once per file)."""
    found = _FUNCTION_INDEX.get(id(tree))
    if found is None or found[0] is not tree:
        nodes = [n for n in gast.walk(tree) if isinstance(n, (gast.FunctionDef, gast.Lambda))]
        found = _FUNCTION_INDEX[id(tree)] = (tree, nodes)
    return found[1]


def _first_line(node):
    if isinstance(node, gast.FunctionDef) and node.decorator_list:
        return min(d.lineno for d in node.decorator_list)
    return node.lineno


def _lambda_candidates(nodes, code):
    """Pick the lambda whose body contains the code object's positions."""
    positions = [p for p in getattr(code, "co_positions", lambda: [])()
                 if p[0] is not None and p[2] is not None and p[3] is not None
                 and (p[1], p[3]) > (p[0], p[2])]     # skip zero-width bookkeeping
    if positions:
        line, col = min((p[0], p[2]) for p in positions)
        inside = [n for n in nodes
                  if (n.body.lineno, n.body.col_offset) <= (line, col)
                  <= (n.body.end_lineno, n.body.end_col_offset)]
        if inside:
            # lambda bodies holding one point are nested in one another
            # (``lambda: g(lambda x: x * x)``): the code is the innermost's
            return [max(inside, key=lambda n: (n.body.lineno, n.body.col_offset))]
    wanted = list(code.co_varnames[:code.co_argcount])
    same_args = [n for n in nodes if [a.id for a in n.args.args] == wanted]
    if len(same_args) > 1:      # no positions (Python 3.10): compare the bytecode
        same_code = [n for n in same_args if _compiles_to(n, code)]
        if same_code:           # equal bytecode: any of them is this code
            return same_code[:1]
    return same_args


def _compiles_to(lambda_node, code):
    """Whether this lambda's source compiles to the same bytecode as ``code``."""
    try:
        expr = ast.Expression(body=gast.gast_to_ast(lambda_node))
        ast.fix_missing_locations(expr)
        module = compile(expr, code.co_filename, "eval")
    except (SyntaxError, ValueError, TypeError):
        return False
    for const in module.co_consts:
        if hasattr(const, "co_code"):
            return const.co_code == code.co_code and const.co_consts == code.co_consts \
                and const.co_names == code.co_names
    return False


def source_lines(fn):
    """The lines of the file ``fn`` was defined in, as the file is now."""
    code = fn.__code__
    linecache.checkcache(code.co_filename)     # re-read a file changed on disk
    return code.co_filename, linecache.getlines(code.co_filename, fn.__globals__)


def parse(fn):
    """Return a ParsedFunction for a plain function, lambda or bound method."""
    self_obj = None
    if isinstance(fn, _Custom):
        fn = _custom_wrapper(fn)      # transform a call to it, so its rule is used
    if not isinstance(fn, (type, types.FunctionType, types.MethodType)) and \
            isinstance(getattr(fn, "__call__", None), types.MethodType):
        fn = fn.__call__              # a callable instance
    if isinstance(fn, types.MethodType):
        self_obj = fn.__self__
        fn = fn.__func__
    if isinstance(fn, functools.partial):
        return parse(as_function(fn))     # the one-line function it stands for
    if not isinstance(fn, types.FunctionType):
        wrapper = _primitive_wrapper(fn)
        if wrapper is not None:
            return parse(wrapper)
        raise TransformError(
            f"{fn!r} has no Python source (it is a {type(fn).__name__})",
            hint="only functions written in Python can be transformed; wrap "
                 "the call in a Python function, e.g. lambda x: f(x)")
    code = fn.__code__
    filename, lines = source_lines(fn)
    _refuse_async(fn, filename, lines)
    if not lines:
        raise TransformError(
            f"cannot find the source of {fn.__qualname__} (file {filename!r})",
            hint="define it in a file, or register exec'd source with "
                 "linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)")
    source = "".join(lines)
    try:
        tree = _parse_file(filename, source)
    except SyntaxError:
        # A function defined in an indented block of a snippet: fall back
        # to inspect's slicing, shifted back to file line numbers.
        snippet = textwrap.dedent("".join(inspect.getsourcelines(fn)[0]))
        tree = gast.parse(snippet)
        gast.increment_lineno(tree, code.co_firstlineno - 1)
    is_lambda = fn.__name__ == "<lambda>"
    on_line = [n for n in _function_nodes(tree)
               if _first_line(n) == code.co_firstlineno
               and (isinstance(n, gast.Lambda) if is_lambda
                    else isinstance(n, gast.FunctionDef) and n.name == fn.__name__)]
    nodes = on_line
    if is_lambda and len(nodes) > 1:
        nodes = _lambda_candidates(nodes, code)
    if not nodes:
        if not _runs_from(fn, filename, source):
            raise _not_the_code_that_runs(fn, filename, source)
        raise TransformError(
            f"cannot locate the source of {fn.__qualname__} at "
            f"{filename}:{code.co_firstlineno} (the file changed since it was loaded?)",
            hint="reload the module that defines it")
    if len(nodes) > 1:
        raise TransformError(
            f"{len(nodes)} lambdas taking the same arguments share this line and "
            "tangent_x cannot tell which of them is being transformed",
            Origin(filename, code.co_firstlineno), hint="put each lambda on its own line")
    verify(fn, nodes[0], on_line, filename, source)
    closure = {}
    for name, cell in zip(code.co_freevars, fn.__closure__ or ()):
        try:
            closure[name] = cell.cell_contents
        except ValueError:
            pass  # not yet assigned; reported if used
    return ParsedFunction(fn, nodes[0], filename, lines, fn.__globals__, closure, self_obj)


def verify(fn, node, on_line, filename, source):
    """Raise a located TransformError unless ``node``, the definition found
    for ``fn`` in ``source``, compiles to ``fn``'s code: same name, first
    line, parameters, bytecode, constants (nested functions and lambdas
    compared alike), names and flags.  The file is compiled whole, as
    Python compiled it (closures, methods and decorators alike), once per
    text; a module whose asserts pytest rewrote is compiled as pytest
    does."""
    code = fn.__code__
    compiled = _compile_as_loaded(filename, source, fn.__globals__.get("__loader__"))
    if compiled is not None:
        found = _compiled_like(compiled, code)
        if isinstance(node, gast.Lambda) and len(on_line) > 1:
            # the lambda at the compiled code's own positions must be ``node``
            found = [c for c in found if node in _lambda_candidates(on_line, c)]
        if found:
            return
    elif _signature(node) == _code_signature(code):
        return       # a snippet that does not compile alone: names and parameters agree
    raise _not_the_code_that_runs(fn, filename, source)


def _runs_from(fn, filename, source):
    """Whether ``source`` holds ``fn``'s code (True when it cannot tell)."""
    compiled = _compile_as_loaded(filename, source, fn.__globals__.get("__loader__"))
    return compiled is None or bool(_compiled_like(compiled, fn.__code__))


def _compiled_like(compiled, code):
    return [c for c in compiled.get((code.co_name, code.co_firstlineno), ())
            if _same_code(c, code)]


def _not_the_code_that_runs(fn, filename, source):
    line = fn.__code__.co_firstlineno
    lines = source.splitlines()
    text = lines[line - 1].strip() if 0 < line <= len(lines) else ""
    return TransformError(
        f"the source of {fn.__qualname__} in {filename} is not the code that runs: the "
        f"file changed after {fn.__name__} was defined (or it was redefined from other "
        f"source under the same file name)", Origin(filename, line, text, fn.__name__),
        hint="reload its module (importlib.reload) or run its definition again, then "
             "transform the new function; source registered in linecache must be the "
             "text that was compiled")


def _signature(node):
    a = node.args
    return [p.id for p in a.posonlyargs + a.args + a.kwonlyargs]


def _code_signature(code):
    n = code.co_argcount + code.co_kwonlyargcount
    return list(code.co_varnames[:n])


@functools.lru_cache(maxsize=64)
def _compile_file(filename, source, loader_kind, loader):
    """The code objects of ``source`` as its loader compiled it, by (name,
    first line); None if it does not compile alone (a snippet of a larger
    cell)."""
    try:
        if loader_kind == "pytest":
            # local import: pytest is optional, present only when it loaded the file
            from _pytest.assertion.rewrite import rewrite_asserts
            tree = ast.parse(source, filename=filename)
            rewrite_asserts(tree, source.encode(), filename, getattr(loader, "config", None))
            module = compile(tree, filename, "exec", dont_inherit=True)
        else:
            module = compile(source, filename, "exec", dont_inherit=True)
    except Exception:         # SyntaxError, or a pytest whose rewriter moved
        return None
    index = {}
    for code in _code_objects(module):
        index.setdefault((code.co_name, code.co_firstlineno), []).append(code)
    return index


def _compile_as_loaded(filename, source, loader):
    if type(loader).__name__ == "AssertionRewritingHook":
        return _compile_file(filename, source, "pytest", loader)
    return _compile_file(filename, source, None, None)


def _code_objects(code):
    """``code`` and every code object nested in it."""
    found = [code]
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            found += _code_objects(const)
    return found


_FUTURE_FLAGS = 0xFFFF      # co_flags above this are __future__ imports (inherited by exec)


def _same_code(a, b):
    """Whether two code objects compile the same source (line table aside:
    moving a line inside a function does not change what it computes)."""
    if (a.co_code != b.co_code or a.co_names != b.co_names
            or a.co_varnames != b.co_varnames or a.co_freevars != b.co_freevars
            or a.co_cellvars != b.co_cellvars or a.co_argcount != b.co_argcount
            or a.co_posonlyargcount != b.co_posonlyargcount
            or a.co_kwonlyargcount != b.co_kwonlyargcount
            or (a.co_flags & _FUTURE_FLAGS) != (b.co_flags & _FUTURE_FLAGS)
            or a.co_name != b.co_name or len(a.co_consts) != len(b.co_consts)):
        return False
    return all(_same_const(x, y) for x, y in zip(a.co_consts, b.co_consts))


def _same_const(x, y):
    if isinstance(x, types.CodeType) or isinstance(y, types.CodeType):
        return isinstance(x, types.CodeType) and isinstance(y, types.CodeType) \
            and _same_code(x, y)
    if type(x) is not type(y):
        return False
    if isinstance(x, tuple):
        return len(x) == len(y) and all(_same_const(p, q) for p, q in zip(x, y))
    if isinstance(x, frozenset):
        return len(x) == len(y) and {repr(v) for v in x} == {repr(v) for v in y}
    return repr(x) == repr(y)       # 0.0 and -0.0 differ; nan equals nan


def _refuse_async(fn, filename, lines):
    """A coroutine or async generator runs nothing when called: there is no
    value to differentiate or compile."""
    if inspect.iscoroutinefunction(fn) or inspect.isasyncgenfunction(fn):
        line = fn.__code__.co_firstlineno
        text = lines[line - 1].strip() if 0 < line <= len(lines) else ""
        raise TransformError(
            f"{fn.__qualname__} is an async function; tangent_x transforms only plain "
            "(synchronous) functions", Origin(filename, line, text, fn.__name__),
            hint="write the computation as a plain def and await other work outside it")


_WRAPPERS = {}


def _primitive_wrapper(fn):
    """``grad(np.sin)`` works as in JAX: a NumPy primitive is wrapped in a
    one-line Python function whose source is registered with linecache."""
    prim = primitives.lookup(fn)
    if prim is None or prim.kind not in ("call", "binop", "unaryop") or prim.fn is None:
        return None
    if prim.name in _WRAPPERS:
        return _WRAPPERS[prim.name]
    nin = getattr(fn, "nin", None)
    if nin is None:
        try:
            nin = len([p for p in inspect.signature(fn).parameters.values()
                       if p.default is inspect.Parameter.empty
                       and p.kind == p.POSITIONAL_OR_KEYWORD])
        except (TypeError, ValueError):
            return None
    args = ", ".join("xyzw"[i] if i < 4 else f"a{i}" for i in range(nin))
    spelled = "np." + prim.name if prim.spelling is None else prim.spelling
    if prim.kind == "binop":
        spelled = f"np.{getattr(fn, '__name__', prim.name)}"
    name = getattr(fn, "__name__", prim.name)
    source = f"def {name}({args}):\n    return {spelled}({args})\n"
    filename = f"<tangent_x primitive {name}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = {"np": __import__("numpy")}
    exec(compile(source, filename, "exec"), namespace)
    _WRAPPERS[prim.name] = namespace[name]
    return namespace[name]


def _custom_wrapper(obj):
    """``grad(f)`` for a custom_jvp/custom_vjp ``f``: a one-line function
    calling it, with the same parameters, whose source linecache knows."""
    cached = getattr(obj, "_tx_wrapper", None)
    if cached is not None:
        return cached
    params = list(inspect.signature(obj.fun).parameters)
    args = ", ".join(params)
    name = obj.__name__
    source = f"def {name}({args}):\n    return custom_function({args})\n"
    filename = f"<tangent_x call of {name} {id(obj)}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = {"custom_function": obj}
    exec(compile(source, filename, "exec"), namespace)
    obj._tx_wrapper = namespace[name]
    return obj._tx_wrapper
