"""The CUDA stage's text: one example's numba stage as a device function,
inlined into a kernel with a grid-stride loop over the batch.

The per-example numba stage (what ``jit(vmap(f))`` calls from its
``prange`` loop) is plain Python over numbers and arrays.  A CUDA thread
runs it as it is where it works on numbers and reads the example's (or
the shared) arrays; what a thread cannot do is allocate, so the rewrite
here (``DeviceRewrite``) replaces the helpers that allocate:

* a ``while`` loop's tape (``y_tape = grown(y_tape, y)``) becomes a
  ``cuda.local.array`` of fixed capacity; an example that needs more sets
  its flag (``tape_full``) and the host raises a located error;
* random keys become pairs of 32-bit words (tuples, in registers), and
  ``split``/``fold_in``/``normal``/``uniform`` of shape ``()`` call
  ``device_runtime``, bit for bit the CPU's Threefry stream;
* ``zeros_like``/``unbroadcast``/``check_grad_output`` of numbers, and
  ``checked`` indices, become the numbers and indices they are.

Arrays of a shape fixed when compiling (elementwise arithmetic and ufuncs
of the parameters, copies, ``full_like``, the gradients ``unindex`` and
``tree_add`` make, reductions of them to numbers) become local arrays and
loops (``local_arrays``).  Anything else that makes an array per example
(other NumPy allocations, views of a run-time shape, matrix products), and
any helper or object the device lacks, is refused with a
``TransformError`` naming the user's line and suggesting the CPU target.  Types come from the CPU compile of the same text (Numba's
type map), so the checks see what Numba saw.
"""
import ast

from ..errors import TransformError
from ..numba_stage.render import _render_function
from .local_arrays import LocalArrays, is_array, is_number
from .local_products import LocalProducts

__all__ = ["DeviceRewrite", "render_kernel_module", "HINT", "CHECK_CODES"]

HINT = "use jit(..., target='cpu') for this function (the prange loop over examples)"

_NUMBERS = ("float", "int", "uint", "bool", "complex")
_MATH = {"exp", "log", "tanh", "expm1", "log1p", "sin", "cos", "sqrt"}
_ALLOCATING = {"empty", "zeros", "ones", "full", "array", "asarray", "zeros_like",
               "ones_like", "empty_like", "full_like", "arange", "linspace", "concatenate",
               "stack", "hstack", "vstack", "outer", "copy", "eye", "tile", "repeat",
               "where", "cumsum", "sort", "diag"}
# NumPy functions of numbers that numba-cuda's ufunc table lacks, and the
# math (or operator) form a thread computes them with
_SCALAR_MATH = {"abs": "abs", "absolute": "abs", "fabs": "math.fabs", "sqrt": "math.sqrt",
                "exp": "math.exp", "expm1": "math.expm1", "log1p": "math.log1p",
                "isfinite": "math.isfinite", "isinf": "math.isinf", "arctan": "math.atan",
                "arcsin": "math.asin", "arccos": "math.acos", "arctan2": "math.atan2",
                "arcsinh": "math.asinh", "arccosh": "math.acosh", "arctanh": "math.atanh",
                "copysign": "math.copysign", "erf": "math.erf"}
# NumPy functions numba-cuda computes on numbers (its ufunc table), and the
# scalar types (casts)
_CUDA_NUMPY = {"arccos", "arccosh", "arcsin", "arcsinh", "arctan2", "arctan", "arctanh",
               "bitwise_and", "bitwise_or", "bitwise_xor", "conjugate", "cos", "cosh",
               "deg2rad", "degrees", "divide", "equal", "fmax", "fmin", "greater",
               "greater_equal", "hypot", "invert", "isnan", "left_shift", "less", "less_equal",
               "log10", "log2", "log", "logical_and", "logical_not", "logical_or",
               "logical_xor", "maximum", "minimum", "not_equal", "rad2deg", "radians",
               "right_shift", "sin", "sinh", "tan", "tanh", "float64", "float32", "int64",
               "int32", "uint32", "uint64", "int8", "uint8", "int16", "bool_"}
_PRODUCTS = {"dot", "matmul", "einsum", "tensordot", "inner", "vdot", "kron"}


_is_number, _is_array = is_number, is_array


class DeviceRewrite(LocalArrays, LocalProducts, ast.NodeTransformer):
    """Rewrites the per-example function ``func`` (an ``ast.FunctionDef`` of
    the numba-stage text) for a CUDA thread (see the module doc).

    ``typemap``: Numba's types of the CPU compile (variable name -> type);
    ``linemap``: numba-stage line -> the user's ``Origin``; ``bound``: names
    the module binds -> what they are (``"numpy"``, ``"vmath"``,
    ``"random"``, ``"math"`` or a helper's name); ``keys``: parameters that
    are random keys (become word pairs); ``shapes``: each array parameter's
    shape (the same in every example), for gradients shaped like them."""

    def __init__(self, func, typemap, linemap, bound, keys, capacity, shapes=None):
        self.func = func
        self.shapes = dict(shapes or {})     # parameter -> its shape in every example
        self.typemap = typemap
        self.linemap = linemap
        self.bound = bound
        self.keys = set(keys)
        self.capacity = capacity
        self.params = {a.arg for a in func.args.args}
        self.tapes = {}          # tape name -> its size variable
        self.tape_lines = {}     # tape name -> Origin of its loop
        self.checks = []         # Origin of each index check (status CHECK_CODES + 1, ...)
        self.key_names = set(keys)     # variables holding random keys (word pairs)
        self._pending = []       # statements to put before the statement being rewritten
        self._in_loop_test = False
        self.imports = set()
        self._line = func.lineno

    # ---- where and why not
    def origin(self, node=None):
        line = node if isinstance(node, int) else getattr(node, "lineno", None) or self._line
        while line > 0:
            if line in self.linemap:
                return self.linemap[line]
            line -= 1
        return None

    def refuse(self, node, message):
        raise TransformError(f"a CUDA kernel cannot run this: {message}",
                             self.origin(node), HINT)

    def type_of(self, node):
        if hasattr(node, "_tx_type"):        # an array's element (local_arrays)
            return node._tx_type
        if isinstance(node, ast.Name):
            return self.typemap.get(node.id)
        if isinstance(node, ast.Constant):
            return type(node.value).__name__
        return None

    # ---- statements
    def run(self):
        self.func.args.args.append(ast.arg(arg="tape_full"))
        self.func.body = self._block(self.func.body)
        self.func.decorator_list = []
        return self.func

    def _block(self, body):
        out = []
        for stmt in body:
            self._line = getattr(stmt, "lineno", self._line)
            line = self._line
            saved, self._pending = self._pending, []
            new = self.visit(stmt)
            pending, self._pending = self._pending, saved
            new = [] if new is None else new if isinstance(new, list) else [new]
            for each in pending + new:
                each._tx_src = line          # its origin, for the comments (render)
                out.append(each)
        return out or [ast.Pass()]

    def generic_visit(self, node):
        for field in ("body", "orelse"):
            if getattr(node, field, None) and isinstance(getattr(node, field), list) and \
                    all(isinstance(s, ast.stmt) for s in getattr(node, field)) and \
                    not isinstance(node, (ast.IfExp,)):
                setattr(node, field, self._block(getattr(node, field)))
        for field, value in ast.iter_fields(node):
            if field in ("body", "orelse") and isinstance(value, list):
                continue
            if isinstance(value, list):
                setattr(node, field, [self.visit(v) if isinstance(v, ast.AST) else v
                                      for v in value])
            elif isinstance(value, ast.AST):
                setattr(node, field, self.visit(value))
        return node

    def visit_Expr(self, node):
        call = node.value
        if isinstance(call, ast.Call) and self._helper(call) == "check_grad_output":
            if not _is_number(self.type_of(call.args[0])):
                self.refuse(node, "grad of an array result")
            return None              # a number: the check passed when compiling
        return self.generic_visit(node)

    def visit_Assign(self, node):
        if len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            name = node.targets[0].id
            value = node.value
            if isinstance(value, ast.Constant) and value.value is None and \
                    name.endswith("_tape"):
                return self._tape(node, name)
            t = self.typemap.get(name)
            if isinstance(value, ast.Constant) and value.value is None and _is_number(t):
                # a variable first unset, a number once set (Numba typed it Optional):
                # what a thread reads before it is set is never used
                return ast.parse(f"{name} = np.{t}(0)").body[0]
            if isinstance(value, ast.Call):
                helper = self._helper(value)
                if helper == "zeros_like" and _is_array(t):
                    return self._zeros(node, name, value.args[0], t)
                if helper == "add_at" and isinstance(value.args[0], ast.Name) and \
                        value.args[0].id == name and \
                        _is_number(self.type_of(value.args[2])) or \
                        helper == "add_at" and isinstance(value.args[2], ast.Constant):
                    self.generic_visit(value)
                    index = value.args[1]
                    return ast.AugAssign(ast.Subscript(ast.Name(name, ast.Load()), index,
                                                       ast.Store()), ast.Add(), value.args[2])
                if helper == "shaped" and _is_number(t):
                    return ast.parse(f"{name} = np.{t}(0)").body[0]
                if helper == "unindex" and _is_array(t):
                    return self._unindex(node, name, value, t)
                if helper == "tree_add" and _is_array(t):
                    return self._tree_add(node, name, value, t)
            if _is_array(t) and name not in self.key_names:
                fixed = self._fixed_shape(node, name, value, t)
                if fixed is not None:
                    return fixed
            if _is_number(t) and isinstance(value, ast.Call):
                loop = self._reduction(node, name, value, t) or \
                    self._matmul(node, name, value, t)
                if loop is not None:
                    return loop
            self._target_type = t
            if self._is_key_call(value) and isinstance(value.func, ast.Attribute) and \
                    value.func.attr in ("split", "fold_in") or \
                    isinstance(value, ast.Name) and value.id in self.key_names or \
                    isinstance(value, ast.Subscript) and isinstance(value.value, ast.Name) \
                    and value.value.id in self.key_names:
                self.key_names.add(name)         # a word pair in the kernel, not an array
            if _is_array(t) and not isinstance(value, (ast.Subscript, ast.Name)) and \
                    not self._is_key_call(value):
                self._refuse_array(node, value, t)
        return self.generic_visit(node)

    def _refuse_array(self, node, value, t):
        if any(isinstance(n, ast.BinOp) and isinstance(n.op, ast.MatMult)
               for n in ast.walk(value)) or any(
                   isinstance(n, ast.Call) and (
                       isinstance(n.func, ast.Attribute) and n.func.attr in _PRODUCTS or
                       isinstance(n.func, ast.Name) and n.func.id.startswith(_HELPER_PRODUCTS))
                   for n in ast.walk(value)):
            self.refuse(node, "a matrix product per thread (one example's matmul is too "
                        "big a job for one GPU thread, and it allocates its result)")
        self.refuse(node, f"it makes a new array per example ({t}); a GPU thread cannot "
                    "allocate arrays of run-time size")

    def _tape(self, node, name):
        t = self.typemap.get(name)
        if "_shape_tape" in name:        # shapes of numbers, taped: () each
            self.tapes[name] = None
            self.tape_lines[name] = self.origin(node)
            self.imports.add("cuda")
            return ast.parse(f"{name} = cuda.local.array({self.capacity}, np.int64)").body[0]
        item = getattr(t, "dtype", None)
        item = getattr(item, "type", item)         # a list of Optional numbers: the numbers
        if not (_is_number(item) and (str(t).startswith("list(") or
                                      getattr(t, "ndim", None) == 1)):
            self.refuse(node, f"a loop records arrays per iteration ({name}: {t}); a "
                        "thread's tape holds numbers only")
        dtype = item
        self.tapes[name] = None
        self.tape_lines[name] = self.origin(node)
        self.imports.add("cuda")
        return ast.parse(f"{name} = cuda.local.array({self.capacity}, np.{dtype})").body[0]

    def visit_While(self, node):
        self._in_loop_test = True      # (checks run before a statement: not in a loop test)
        node.test = self.visit(node.test)
        self._in_loop_test = False
        node.body = self._block(node.body)
        if node.orelse:
            node.orelse = self._block(node.orelse)
        return node

    def visit_If(self, node):
        # ``if t is None or t_size == len(t): t = grown(t, v)`` -> a full tape
        # flags the example (the host raises) and starts over, writing in bounds
        body = node.body
        if len(body) == 1 and isinstance(body[0], ast.Assign) and \
                isinstance(body[0].value, ast.Call) and self._helper(body[0].value) == "grown":
            tape = body[0].targets[0].id
            size = next((n.left.id for n in ast.walk(node.test)
                         if isinstance(n, ast.Compare) and isinstance(n.left, ast.Name)
                         and isinstance(n.comparators[0], ast.Call)
                         and getattr(n.comparators[0].func, "id", None) == "len"), None)
            if tape not in self.tapes or size is None:
                self.refuse(node, "a tape the CUDA stage does not know")
            self.tapes[tape] = size
            number = list(self.tapes).index(tape) + 1
            return ast.parse(f"if {size} == {self.capacity}:\n"
                             f"    tape_full[0] = {number}\n"
                             f"    {size} = 0").body[0]
        return self.generic_visit(node)

    # ---- expressions
    def _helper(self, call):
        """What a called name is bound to (see ``bound``), or None."""
        f = call.func
        if isinstance(f, ast.Name):
            return self.bound.get(f.id, "python" if f.id in _BUILTINS else None)
        if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name):
            kind = self.bound.get(f.value.id)
            return f"{kind}.{f.attr}" if kind else None
        return None

    def _is_key_call(self, value):
        return isinstance(value, ast.Call) and (self._helper(value) or "").startswith("random.")

    def visit_Subscript(self, node):
        """``x[slice(a, b, c)]`` (how the numba stage writes ``x[a:b:c]``): a
        slice again, which Numba's CUDA target reads as a view."""
        def as_slice(part):
            if isinstance(part, ast.Call) and isinstance(part.func, ast.Name) and \
                    part.func.id == "slice" and "slice" not in self.bound and \
                    len(part.args) == 3 and not part.keywords:
                return ast.Slice(*(None if isinstance(a, ast.Constant) and a.value is None
                                   else a for a in part.args))
            return part
        node = self.generic_visit(node)
        if isinstance(node.slice, ast.Tuple):
            node.slice.elts = [as_slice(p) for p in node.slice.elts]
        else:
            node.slice = as_slice(node.slice)
        return node

    def visit_BinOp(self, node):
        if isinstance(node.op, ast.MatMult):
            self.refuse(node, "a matrix product per thread (one example's matmul is too big "
                        "a job for one GPU thread, and it allocates its result)")
        return self.generic_visit(node)

    def visit_Call(self, node):
        if isinstance(node.func, ast.Name) and node.func.id == "slice" and \
                "slice" not in self.bound:
            node.args = [self.visit(a) for a in node.args]
            return node             # an index's slice: visit_Subscript writes it a:b:c
        helper = self._helper(node)
        node = self.generic_visit(node)
        if helper is None:
            name = ast.unparse(node.func)
            self.refuse(node, f"{name} is an object Numba's CUDA target cannot call")
        if helper == "python":
            return node
        kind, _, attr = helper.partition(".")
        if kind == "vmath" and attr in _MATH:
            self.imports.add("math")
            return ast.Call(ast.Attribute(ast.Name("math", ast.Load()), attr, ast.Load()),
                            node.args, [])
        if kind == "numpy":
            if attr == "shape" and len(node.args) == 1 and \
                    _is_number(self.type_of(node.args[0])):
                return ast.Constant(0)       # a number's shape, (), taped as a 0
            if attr in ("shape", "size") and len(node.args) == 1 and \
                    self._shape(node.args[0]) is not None:
                return self._shape_constant(node.args[0], attr)
            if attr in _PRODUCTS:
                self.refuse(node, "a matrix product per thread (one example's matmul is too "
                            "big a job for one GPU thread, and it allocates its result)")
            if attr in _ALLOCATING:
                self.refuse(node, f"np.{attr} allocates an array per example; a GPU thread "
                            "cannot allocate arrays of run-time size")
            numbers = self._scalar_context or all(
                _is_number(self.type_of(a)) or isinstance(a, ast.Constant) for a in node.args)
            if numbers and attr in _SCALAR_MATH:
                self.imports.add("math")
                return ast.Call(ast.parse(_SCALAR_MATH[attr], mode="eval").body,
                                node.args, [])
            if numbers and attr == "square" and len(node.args) == 1:
                return ast.BinOp(node.args[0], ast.Mult(), node.args[0])
            if numbers and attr in ("power", "float_power") and len(node.args) == 2:
                return ast.BinOp(node.args[0], ast.Pow(), node.args[1])
            if numbers and attr == "negative" and len(node.args) == 1:
                return ast.UnaryOp(ast.USub(), node.args[0])
            if numbers and attr in _FLOAT_FORMS and all(
                    str(self.type_of(a)).startswith("float") or
                    isinstance(a, ast.Constant) and isinstance(a.value, float)
                    for a in node.args):
                self.imports.add("math")
                form, arity = _FLOAT_FORMS[attr]
                if len(node.args) == arity:
                    text = form.format(*(f"({ast.unparse(a)})" for a in node.args))
                    expr = ast.parse(text, mode="eval").body
                    for n in ast.walk(expr):      # the operands' types, for what follows
                        if isinstance(n, ast.Subscript):
                            n._tx_type = next((getattr(a, "_tx_type", None) for a in node.args
                                               if ast.unparse(a) == ast.unparse(n)), None)
                    return expr
            if attr not in _CUDA_NUMPY:
                self.refuse(node, f"np.{attr} has no device form in numba-cuda"
                            + ("" if numbers else " for arrays"))
            return node
        if kind == "random":
            return self._random(node, attr)
        if helper == "zeros_like":
            t = self.type_of(node.args[0])
            if not _is_number(t):
                self.refuse(node, f"zeros_like of an array ({t}) allocates per example")
            return ast.parse(f"np.{t}(0)", mode="eval").body
        if helper == "unbroadcast":
            if not all(_is_number(self.type_of(a)) or isinstance(a, ast.Constant)
                       for a in node.args):
                self.refuse(node, "a gradient of array shape per example")
            return node.args[0]
        if helper == "weak_number" and len(node.args) == 1:
            # a loop carry started as a Python number (numba_stage.weak_scalars):
            # in a thread, the number as written (numba-cuda unifies it)
            return node.args[0]
        if helper == "checked":
            return self._checked(node)
        if helper == "size" and len(node.args) == 1 and self._shape(node.args[0]) is not None:
            return self._shape_constant(node.args[0], "size")
        if helper == "tree_add" and len(node.args) == 2 and \
                all(_is_number(self.type_of(a)) for a in node.args):
            return ast.BinOp(node.args[0], ast.Add(), node.args[1])
        self.refuse(node, f"{helper} (a tangent_x helper that works on arrays) has no "
                    "CUDA device form")

    def _checked(self, node):
        """``checked(base, index)``: each integer part of the index through
        a bounds check before the statement (a thread reads past an array's end
        without a word);
        slices, and a tuple's constant indices (Numba checks those), as they are."""
        base, index = node.args
        if not isinstance(base, ast.Name) or not _is_array(self.type_of(base)) or \
                base.id in self.key_names or self._in_loop_test:
            return index
        parts = index.elts if isinstance(index, ast.Tuple) else [index]
        out = []
        for axis, part in enumerate(parts):
            if isinstance(part, ast.Slice) or not (
                    isinstance(part, ast.Constant) and isinstance(part.value, int) or
                    str(self.type_of(part)).startswith(("int", "uint"))):
                out.append(part)
                continue
            self.checks.append(self.origin(node))
            code = CHECK_CODES + len(self.checks)
            name = f"bounds_{len(self.checks)}_"
            check = ast.parse(f"{name} = 0\n"
                              f"if -{base.id}.shape[{axis}] <= {name} < {base.id}.shape[{axis}]:\n"
                              f"    pass\n"
                              f"else:\n"
                              f"    tape_full[0] = {code}\n"
                              f"    {name} = 0").body
            check[0].value = part
            # out of range: the example's status says which check (the host
            # runs it again on the CPU, which raises at the user's line), and
            # the read goes to index 0, inside the array
            self._pending += check
            out.append(ast.Name(name, ast.Load()))
        return ast.Tuple(out, ast.Load()) if isinstance(index, ast.Tuple) else out[0]

    def _random(self, node, attr):
        self.imports.add("random")
        args = node.args
        shape_ok = len(args) == 2 and isinstance(args[1], ast.Tuple) and not args[1].elts \
            or len(args) == 1
        keywords = {k.arg for k in node.keywords}
        if attr == "split" and len(args) == 1 and not keywords:
            return _call("split_pair", [args[0], ast.Name("PARTITIONABLE", ast.Load())])
        if attr == "fold_in" and len(args) == 2 and not keywords:
            return _call("fold_in_pair", args)
        dtype = str(getattr(getattr(self, "_target_type", None), "dtype", ""))
        if attr in ("normal", "uniform") and shape_ok and not keywords and \
                dtype in ("float32", "float64"):
            bits = "32" if dtype == "float32" else ""
            return _call(f"{attr}_pair{bits}",
                         [args[0], ast.Name("PARTITIONABLE", ast.Load())])
        self.refuse(node, f"tangent_x.random.{attr} here draws an array or takes options; "
                    "in a kernel: split, fold_in, and one float64 normal(key, ()) or "
                    "uniform(key, ()) at a time")


# NumPy functions of float numbers written with Python's operators and
# math (numba-cuda has no device form of them): form, number of arguments
_FLOAT_FORMS = {
    "reciprocal": ("1.0 / {0}", 1),
    "exp2": ("2.0 ** {0}", 1),
    "cbrt": ("math.copysign(abs({0}) ** (1.0 / 3.0), {0})", 1),
    "logaddexp": ("({0} + 0.6931471805599453) if {0} == {1} else "
                  "max({0}, {1}) + math.log1p(math.exp(-abs({0} - {1})))", 2),
    "conj": ("{0}", 1), "conjugate": ("{0}", 1), "real": ("{0}", 1),
}
_HELPER_PRODUCTS = ("matmul", "dot", "tensordot", "einsum")     # numba_runtime's
CHECK_CODES = 1_000_000  # an example's status past this: an index out of range
_BUILTINS = {"abs", "min", "max", "range", "len", "float", "int", "bool", "round"}


def _call(name, args):
    return ast.Call(ast.Name(name, ast.Load()), list(args), [])


def render_kernel_module(header, device, kernel_name, leaves, out_ndims, bare, batch_leaf,
                         linemap, partitionable, reduce=False):
    """The module text: ``header`` comment lines, imports, the device
    function ``device`` (rewritten ``ast.FunctionDef``), and the kernel.

    ``leaves``: (name, kind) per kernel argument, kind ``"mapped"`` (row
    ``k`` of it is the example's), ``"key"`` (row ``k`` as a word pair) or
    ``"shared"``; ``out_ndims``: the rank of each per-example result (an
    array result is copied into its row of the batched result element by
    element); ``batch_leaf``: the mapped leaf whose length is the batch;
    ``linemap``: numba-stage line -> the user's ``Origin`` (a comment naming
    the user's line goes above each run of statements from it); ``reduce``:
    each result is added into one output (``cuda.atomic.add``: a sum over
    the batch, in the order the threads reach it) instead of its row.
    Returns the text and its line map (kernel-module line -> ``Origin``)."""
    lines = list(header)
    lines += ["import math", "", "import numpy as np", "from numba import cuda", "",
              "from tangent_x.cuda_stage.device_runtime import "
              "(split_pair, fold_in_pair, normal_pair,\n"
              "                                              uniform_pair, normal_pair32, "
              "uniform_pair32)", "",
              f"PARTITIONABLE = {bool(partitionable)}   # config.threefry_partitionable "
              "when compiled", "", ""]
    lines.append('@cuda.jit(device=True, inline="always")')
    params_ = [a.arg for a in device.args.args]
    body, origins = _render_function(device.name, params_, device.body, linemap, None)
    first = len(lines) + 1
    kernel_map = {first + i: o for i, o in enumerate(origins) if o is not None}
    lines += body
    outs = [f"out_{j}" for j in range(len(out_ndims))]
    params = [name for name, _ in leaves] + outs + ["tape_full"]
    lines += ["", "", "@cuda.jit", f"def {kernel_name}({', '.join(params)}):",
              "    start = cuda.grid(1)",
              "    stride = cuda.gridsize(1)",
              f"    for k in range(start, {batch_leaf}.shape[0], stride):"]
    args = []
    for name, kind in leaves:
        args.append(f"{name}[k]" if kind == "mapped" else
                    f"({name}[k, 0], {name}[k, 1])" if kind == "key" else name)
    args.append("tape_full[k:k + 1]")
    lines.append(f"        lane = {device.name}({', '.join(args)})")
    for j, (out, ndim) in enumerate(zip(outs, out_ndims)):
        value = "lane" if bare else f"lane[{j}]"
        if ndim == 0:
            lines.append(f"        cuda.atomic.add({out}, 0, {value})" if reduce else
                         f"        {out}[k] = {value}")
            continue
        lines.append(f"        row = {out}" if reduce else f"        row = {out}[k]")
        lines.append(f"        src = {value}")
        indent = "        "
        idx = [f"i{d}" for d in range(ndim)]
        for d in range(ndim):
            lines.append(f"{indent}for i{d} in range(src.shape[{d}]):")
            indent += "    "
        where = ", ".join(idx)
        at = where if ndim == 1 else f"({where})"
        lines.append(f"{indent}cuda.atomic.add(row, {at}, src[{where}])" if reduce else
                     f"{indent}row[{where}] = src[{where}]")
    return "\n".join(lines) + "\n", kernel_map
