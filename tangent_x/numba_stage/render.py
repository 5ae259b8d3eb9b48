"""The numba stage's text: the python stage specialised, fused and rendered.

``numba_stage`` takes a generated function's python stage and the call's
abstract arguments through the specialiser (``specialize``), the checks
and rewrites after it (size-1 axes, elementwise fusion, optional reads,
weak scalars) and renders the module Numba compiles: the module frame
(header, sections, line map) is the python stage's (``emit``); the
statements, with a comment naming the user's line above each run of
them, are rendered here; so is the driver of ``jit(vmap(f))``'s parallel
loop over examples (``render_lane_driver``).
"""
import ast
import inspect
import os

import numpy as np

from .. import runtime
from ..core.naming import Namer
from ..python_stage import emit, loader as modules
from . import fusion, narrow_ints, optional, weak_scalars
from .specialize import Const, Dyn, Plan, Specializer, av_leaves, describe
from .unit_axes import check as check_unit_axes

__all__ = ["numba_stage", "generic_arguments", "render_module", "render_lane_driver"]


def numba_stage(generated, avs, call_site=None, ranks=None, units=None, weak=False,
                callees=None, numbers=(), mixed=False, complete_ranks=False, fuse=True,
                peeled=(), split=()):
    """(module text, line map, plan, function name) of ``generated``'s
    python stage specialised for the abstract arguments ``avs`` (``ranks``:
    argument leaf name -> rank, for the arrays among them; ``units``: leaf
    name -> its size-1 axes, when the signature includes them; ``weak``:
    a leaf is narrow, so Python numbers are typed as NumPy would, see
    weak_scalars; ``callees``: what compiles the user functions the code
    calls, see callees.py; ``numbers``: the leaves that are Python numbers,
    weak too; ``mixed``: integer leaves next to narrow float ones (True,
    or the set of ``flatten.Signature.mixed``: "int_float", "small_ints"
    for integer leaves narrower than 32 bits, see narrow_ints);
    ``complete_ranks``: ``ranks`` names every array leaf, so the other
    leaves are numbers, as a jit signature's do; ``fuse``: elementwise
    chains may become fused kernels -- not for code a CUDA thread runs,
    whose rewrite reads the statements as written); ``peeled``: carried
    variables whose loop runs its first iteration apart (``Loops.peel``);
    ``split``: python-stage lines whose ``if`` splits the paths after it
    (``specialize.splitting``)."""
    # local import: Numba's overloads and kernels load at the first compile, not at import
    from . import numba_runtime, vmath
    tree = ast.parse(generated.text)
    fname = generated.function.__name__
    func = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == fname)
    # keyword-only parameters: ``_bind`` gave their values in the
    # signature's order, and the compiled code takes flat leaves by position
    func.args.args += func.args.kwonlyargs
    func.args.kwonlyargs, func.args.kw_defaults = [], []
    linemap = modules.LINEMAPS.get(generated.path, {})
    origin = generated.canonical.origin
    namespace = dict(generated.module.__dict__)
    spec = Specializer(func, namespace, linemap, origin or call_site)
    spec.ranks = dict(ranks or {})
    spec.units = None if units is None else dict(units)
    spec.param_units = dict(units or {})
    spec.compile_callee = callees
    spec.peeled = set(peeled)
    spec.split_lines = set(split)
    out = spec.run(avs)
    params = []
    for a, av in zip(func.args.args, avs):
        params += [leaf.name for leaf in av_leaves(av) if isinstance(leaf, Dyn)]
    check_unit_axes(spec, spec.code, set(params))
    params += [name for name, _ in spec.hidden]
    plan = Plan(out, spec.hidden, params, dict(spec.bound))
    param_ranks = dict(ranks or {})
    if complete_ranks:
        for p in params:
            param_ranks.setdefault(p, 0)
    for name, value in spec.hidden:
        if isinstance(value, np.ndarray):
            param_ranks[name] = value.ndim
        elif isinstance(value, (int, float, np.number)) and not isinstance(value, bool):
            param_ranks[name] = 0
        else:
            param_ranks.pop(name, None)
    vmath_name = next((n for n, obj in spec.bound.items() if obj is vmath), None)
    numpy_names = {n for n, obj in spec.bound.items() if obj is np}
    taken = set(spec.taken) | set(spec.bound) | {fname}
    if {"elementwise", "elementwise_sum"} & taken or not fuse:
        code, kernels = spec.code, []         # (a user's name, or a GPU thread's code: no fusion)
    else:
        code, kernels, decorators = fusion.fuse(spec.code, params, vmath_name, numpy_names,
                                                taken, param_ranks)
        for used in decorators:
            spec.bound[used] = plan.bound[used] = getattr(numba_runtime, used)

    def takes_optional(call):
        return isinstance(call.func, ast.Name) and \
            spec.bound.get(call.func.id) in numba_runtime.TAKES_OPTIONAL
    if "assigned" not in spec.bound and "assigned" not in spec.taken and \
            optional.mark_assigned_reads(list(code) + list(kernels), spec.unbound_starts,
                                         "assigned", takes_optional):
        spec.bound["assigned"] = plan.bound["assigned"] = numba_runtime.assigned
    if weak:
        helper = "weak_scalar"
        numpy_names = {n for n, obj in spec.bound.items() if obj is np}
        helpers = (helper, "weak_number", "promoted", "weak_lanes_of")
        kinds = mixed if isinstance(mixed, frozenset) else \
            frozenset({"int_float"} if mixed else ())
        if all(h not in spec.bound and h not in spec.taken for h in helpers):
            for used in weak_scalars.weaken(list(code) + list(kernels), helper, numpy_names,
                                            numbers, "weak_number", "int_float" in kinds,
                                            "promoted"):
                spec.bound[used] = plan.bound[used] = getattr(numba_runtime, used)

    narrow = ("float_operand", "division_operand")
    if isinstance(mixed, frozenset) and "small_ints" in mixed and \
            all(h not in spec.bound and h not in spec.taken for h in narrow):
        spelled = {n for n, obj in spec.bound.items() if obj is np or obj is vmath}
        for used in narrow_ints.spell(list(code) + list(kernels), spelled, *narrow):
            spec.bound[used] = plan.bound[used] = getattr(numba_runtime, used)
    text, numba_linemap = render_module(fname, params, code, linemap, origin,
                                        generated.description, avs, func, spec.bound,
                                        kernels)
    return text, numba_linemap, plan, fname


def generic_arguments(function):
    """Abstract arguments when no example is given: each parameter one
    run-time value (an array or a number); parameters with defaults keep
    them, folded in as constants."""
    out = []
    for name, param in inspect.signature(function).parameters.items():
        if param.default is not param.empty:
            out.append(Const(param.default))
        elif param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            out.append(Const(() if param.kind == param.VAR_POSITIONAL else {}))
        else:
            out.append(Dyn(name))
    return out


def render_module(name, params, stmts, src_linemap, origin, description, avs, func, bound,
                  kernels=()):
    """(text, line map) of the numba-stage module: the function ``name``
    taking ``params`` and running ``stmts``, after the ``kernels``
    (fused elementwise functions, see fusion) and the imports of what
    ``bound`` binds."""
    # local import: Numba's overloads load at the first compile, not at import
    from . import numba_runtime
    signature = ", ".join(f"{a.arg}: {describe(av)}" for a, av in zip(func.args.args, avs))
    header = emit.module_header(f"numba stage of {description}", origin,
                                [f"specialised for ({signature})"])
    modules_, runtime_names, numba_names, others = [], [], [], []
    for n, obj in sorted(bound.items()):
        if obj is np:
            modules_.append("import numpy as np" if n == "np" else f"import numpy as {n}")
        elif isinstance(obj, type(np)):
            modules_.append(f"import {obj.__name__} as {n}" if n != obj.__name__.split(".")[-1]
                            or "." in obj.__name__ else f"import {n}")
        elif getattr(runtime, n, None) is obj:
            runtime_names.append(n)
        elif getattr(numba_runtime, n, None) is obj:
            numba_names.append(n)
        elif n in dir(__builtins__) or n in __builtins__:
            continue
        else:
            others.append(n)
    header += sorted(set(modules_))
    if runtime_names:
        header.append(f"from tangent_x.runtime import {', '.join(runtime_names)}")
    header.append("import tangent_x.numba_stage.numba_runtime  "
                  "# Numba implementations of the helpers")
    if numba_names:
        header.append(f"from tangent_x.numba_stage.numba_runtime import {', '.join(numba_names)}")
    if others:
        header.append(f"# bound when loaded, from the function's globals: {', '.join(others)}")
    sections = []
    for kernel in kernels:
        kernel_lines = emit.unparse_ast(kernel).splitlines()
        sections.append((kernel_lines, [None] * len(kernel_lines)))
    lines, origins = _render_function(name, params, stmts, src_linemap, origin)
    sections.append((lines, origins))
    return emit.assemble_module(header, sections)


def _render_function(name, params, stmts, src_linemap, origin):
    """(lines, origins) of the function: a comment naming the user's line
    above each run of statements from it (again after a block's head, and
    at each iteration of an unrolled loop)."""
    lines = [f"def {name}({', '.join(params)}):"]
    origins = [origin]
    state = {"last": None}

    def walk(body, indent):
        for stmt in body:
            src = getattr(stmt, "_tx_src", None)
            o = src_linemap.get(src) if src is not None else None
            # an iteration of an unrolled loop (specialize.Specializer.unroll)
            iteration = getattr(stmt, "_tx_iteration", None)
            if iteration is not None:
                state["last"] = None
            if o is not None and (o.filename, o.lineno) != state["last"]:
                unrolled = f" (unrolled: {iteration})" if iteration is not None else ""
                lines.append(f"{indent}# {o.short()}: {o.text}{unrolled}")
                origins.append(o)
                state["last"] = (o.filename, o.lineno)
            if isinstance(stmt, ast.If):
                block(f"if {emit.unparse_ast(stmt.test)}:", stmt.body, indent, o)
                if stmt.orelse:
                    lines.append(f"{indent}else:")
                    origins.append(o)
                    walk(stmt.orelse, indent + "    ")
                    state["last"] = (o.filename, o.lineno) if o is not None else None
            elif isinstance(stmt, ast.For):
                block(f"for {emit.unparse_ast(stmt.target)} in {emit.unparse_ast(stmt.iter)}:",
                      stmt.body, indent, o)
            elif isinstance(stmt, ast.While):
                block(f"while {emit.unparse_ast(stmt.test)}:", stmt.body, indent, o)
            else:
                for text in emit.unparse_ast(stmt).splitlines():
                    lines.append(indent + text)
                    origins.append(o)

    def block(head, body, indent, o):
        lines.append(indent + head)
        origins.append(o)
        state["last"] = None
        walk(body or [ast.Pass()], indent + "    ")
        # the comment above the block's head also covers what follows it at
        # this indent from the same line
        state["last"] = (o.filename, o.lineno) if o is not None else None

    walk(stmts, "    ")
    return lines, origins


def render_lane_driver(name, compiled, leaf_axes, n_out, ragged_message):
    """(text, line map, namespace) of ``jit(vmap(f))``'s loop over examples
    (see lane_loop), the driver calling ``compiled``: the first example run on
    its own (its results tell the batched results' shapes and dtypes), then
    the others in a ``prange`` loop, each example's results written into
    the batched ones (``ragged_message``: the error when their shapes
    differ)."""
    plan = compiled.plan
    params = list(plan.params)
    n_leaves = len(leaf_axes)
    namer = Namer(set(params) | {"numba", "np", "lane_buffer", "set_lane"})
    example = namer.fresh(f"{name[len('vmap_'):]}_example")
    batch_size, k, first, lane, ragged, done = (namer.fresh(h) for h in (
        "batch_size", "k", "first", "lane", "ragged", "done"))
    outs = [namer.fresh(f"out_{j}") for j in range(n_out)]
    hidden = params[n_leaves:]

    def lane_args(index):
        items = []
        for p, ax in zip(params[:n_leaves], leaf_axes):
            items.append(p if ax is None else f"{p}[{':, ' * ax}{index}]")
        return ", ".join(items + hidden)

    mapped = next(i for i, ax in enumerate(leaf_axes) if ax is not None)
    example_module = "tangent_x_" + os.path.basename(compiled.path)[:-3]
    header = emit.module_header(
        "numba stage of vmap by a loop over examples (numba.prange, parallel=True)", None,
        [f"{example}: the numba stage of one example, compiled from {example_module}",
         f"    ({compiled.path}); bound when loaded"])
    header += ["import numba",
               "import numpy as np",
               "from tangent_x.numba_stage.lane_runtime import lane_buffer, set_lane"]
    lines = [
        f"def {name}({', '.join(params)}):",
        f"    {batch_size} = {params[mapped]}.shape[{leaf_axes[mapped]}]",
        f"    {first} = {example}({lane_args(0)})",
    ]
    def result(var, j):       # an example's j-th result (a lone one is not in a
        # tuple, unless its dtype code is beside it: result_dtypes)
        return var if plan.bare and not compiled.tags else f"{var}[{j}]"

    for j, out in enumerate(outs):
        lines.append(f"    {out} = lane_buffer({result(first, j)}, {batch_size})")
        lines.append(f"    set_lane({out}, 0, {result(first, j)})")
    writes = [f"set_lane({out}, {k}, {result(lane, j)})" for j, out in enumerate(outs)]
    outs.append(done)
    lines.append(f"    {done} = np.zeros({batch_size}, np.bool_)")
    lines.append(f"    {done}[0] = True")
    if writes:         # (results that are all constants need no loop)
        lines.append(f"    {ragged} = 0")
        lines.append(f"    for {k} in numba.prange(1, {batch_size}):")
        lines.append(f"        {lane} = {example}({lane_args(k)})")
        # one reduction statement: Numba's prange takes ``r += ...`` once per body
        if len(writes) == 1:
            lines.append(f"        {ragged} += {writes[0]}")
        else:
            indent = " " * (len(ragged) + 13)
            lines.append(f"        {ragged} += ({writes[0]}")
            lines += [f"{indent}+ {w}" for w in writes[1:-1]] + [f"{indent}+ {writes[-1]})"]
        # an example raising inside prange stops its worker's chunk and the
        # exception is dropped: the flags tell the caller which examples ran
        lines.append(f"        {done}[{k}] = True")
        lines.append(f"    if {ragged}:")
        lines.append(f"        raise ValueError({ragged_message!r})")
    else:
        lines.append(f"    {done}[:] = True")
    lines.append(f"    return ({', '.join(outs)}{',' if len(outs) == 1 else ''})")
    text, linemap = emit.assemble_module(header, [(lines, [None] * len(lines))])
    return text, linemap, {example: compiled.dispatcher}
