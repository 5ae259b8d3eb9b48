"""Per-example arrays of a shape fixed when the kernel compiles, as a
GPU thread's local arrays.

Under ``vmap`` every example's arrays have the same shape, so where an
array's shape follows from the parameters' (elementwise arithmetic and
NumPy ufuncs with broadcasting, copies, the gradients ``zeros_like``,
``unindex`` and ``tree_add`` make), a thread can hold it in a
``cuda.local.array`` of that constant shape, computed by loops, and a
reduction of it to a number (``np.sum``, ``mean``, ``prod``, ``max``,
``min``, ``var``, ``std``) is a loop too.  ``LocalArrays`` is the part of
``kernel_text.DeviceRewrite`` that does this; an array whose shape is not
known here (a view, a helper's result) is refused as before.

Local arrays live in storage fixed per statement (Numba allocates them
once per call), so a statement that runs again (in a loop) overwrites what
it wrote before.  That is safe because only the statement's own target
names such storage: an assignment of one local array to another name copies
it, and views of local arrays are not given shapes (what uses them is
refused).
"""
import ast

__all__ = ["LocalArrays", "LOCAL_LIMIT", "is_number", "is_array"]

LOCAL_LIMIT = 4096      # elements of one per-example array in a thread's local memory
_NUMBERS = ("float", "int", "uint", "bool", "complex")
# NumPy's elementwise functions a thread computes on numbers (kernel_text
# rewrites each call of numbers into its device form)
ELEMENTWISE = {"abs", "absolute", "fabs", "sqrt", "exp", "expm1", "log1p", "isfinite", "isinf",
               "arctan", "arcsin", "arccos", "arctan2", "arcsinh", "arccosh", "arctanh",
               "copysign", "cos", "cosh", "sin", "sinh", "tan", "tanh", "log", "log2", "log10",
               "hypot", "maximum", "minimum", "fmax", "fmin", "isnan", "logical_and",
               "logical_or", "logical_xor", "logical_not", "square", "power", "negative",
               "greater", "greater_equal", "less", "less_equal", "equal", "not_equal",
               "deg2rad", "rad2deg", "degrees", "radians", "divide", "reciprocal", "exp2",
               "cbrt", "logaddexp", "conj", "conjugate", "real"}
_VMATH = {"exp", "log", "tanh", "expm1", "log1p", "sin", "cos", "sqrt"}
_REDUCE = {"sum", "prod", "max", "min", "amax", "amin", "mean", "argmax", "argmin", "all",
           "any", "count_nonzero"}


def is_number(t):
    return t is not None and str(t).startswith(_NUMBERS) and "array" not in str(t)


def is_array(t):
    return t is not None and str(t).startswith("array(")


_AXES = {"sum_axes": "sum", "mean_axes": "mean", "prod_axes": "prod", "max_axes": "max",
         "min_axes": "min"}      # the runtime's reductions over given axes


def _all_axes(node, ndim):
    """Whether ``node`` is a constant tuple naming every one of ``ndim`` axes."""
    if not isinstance(node, ast.Tuple) or not all(
            isinstance(e, ast.Constant) and isinstance(e.value, int) for e in node.elts):
        return False
    return sorted(e.value % ndim for e in node.elts) == list(range(ndim))


class _Unknown(Exception):
    """An expression that is not elementwise over arrays of known shapes."""


def _broadcast(shapes):
    out = ()
    for shape in shapes:
        if len(shape) > len(out):
            out = (1,) * (len(shape) - len(out)) + out
        shape = (1,) * (len(out) - len(shape)) + tuple(shape)
        merged = []
        for a, b in zip(out, shape):
            if a != b and 1 not in (a, b):
                raise _Unknown()
            merged.append(max(a, b) if 1 in (a, b) else a)
        out = tuple(merged)
    return out


class LocalArrays:
    """Arrays of fixed shape as local arrays (see the module doc); mixed
    into ``DeviceRewrite``, whose ``shapes`` (name -> shape), ``typemap``,
    ``refuse``, ``visit`` and ``imports`` it uses."""

    _scalar_context = False

    @property
    def local(self):
        """Names holding a local array (storage of their own statement)."""
        if "_local" not in self.__dict__:
            self._local = set()
        return self._local

    def _set_shape(self, node, name, shape):
        old = self.shapes.get(name)
        if old is not None and tuple(old) != tuple(shape):
            self.refuse(node, f"{name} holds arrays of different shapes ({old} and {shape}) "
                        "per example; a thread's local array has one shape")
        self.shapes[name] = tuple(shape)

    def _local_array(self, node, name, shape, t):
        size = 1
        for n in shape:
            size *= n
        if size > LOCAL_LIMIT:
            self.refuse(node, f"a per-example array of {size} elements; a thread keeps at "
                        f"most {LOCAL_LIMIT} in its local memory")
        self._set_shape(node, name, shape)
        self.local.add(name)
        self.imports.add("cuda")
        dims = ", ".join(str(n) for n in shape) + ("," if len(shape) == 1 else "")
        return f"{name} = cuda.local.array(({dims}), np.{t.dtype})"

    @staticmethod
    def _loops(shape):
        """(loop header lines, the body's indent, the index variables)."""
        lines, indent = [], ""
        for d, n in enumerate(shape):
            lines.append(f"{indent}for z{d}_ in range({n}):")
            indent += "    "
        return lines, indent, [f"z{d}_" for d in range(len(shape))]

    def _fixed_shape(self, node, name, value, t):
        """Statements for ``name = value``, an array of a shape known when
        compiling (``local_arrays``), or None to go on as before.  Where
        ``value`` reads ``name`` (``x = x * 2``), it reads ``name``'s value
        before the statement (``name_prev_``): the new local array would
        otherwise hide it."""
        helper = self._helper(value) if isinstance(value, ast.Call) else None
        if helper != "tree_add" and self.shapes.get(name) is not None and any(
                isinstance(n, ast.Name) and n.id == name for n in ast.walk(value)):
            prev = f"{name}_prev_"
            if helper in ("matmul", "dot", "matmul_adjoint_lhs", "matmul_adjoint_rhs") and \
                    name in self.local:
                self.refuse(node, f"a matrix product written into its own operand ({name}); "
                            "name the product differently")
            for n in ast.walk(value):
                if isinstance(n, ast.Name) and n.id == name:
                    n.id = prev
            self.typemap[prev] = self.typemap.get(name)
            self.shapes[prev] = self.shapes[name]
            rest = self._fixed_shape(node, name, value, t)
            before = ast.parse(f"{prev} = {name}").body
            return before + rest if rest is not None else None
        helper = self._helper(value) if isinstance(value, ast.Call) else None
        if helper == "unbroadcast" and isinstance(value.args[0], ast.Name) and \
                self._shape(value.args[0]) is not None and \
                self._shape(value.args[0]) == self._shape(value.args[1]):
            value = value.args[0]         # a gradient already of its argument's shape
        if helper in ("numpy.copy", "numpy.asarray") and len(value.args) == 1 and \
                self._shape(value.args[0]) is not None and \
                str(self.type_of(value.args[0])) == str(t) and not value.keywords or \
                helper == "numpy.asarray" and len(value.args) == 1 and \
                self._shape(value.args[0]) is not None and \
                [k.arg for k in value.keywords] == ["dtype"] and \
                str(getattr(self.type_of(value.args[0]), "dtype", "")) == str(t.dtype):
            return self._copy(node, name, value.args[0].id, t)    # (asarray: a copy too)
        if helper in ("matmul", "dot"):
            return self._matmul(node, name, value, t)
        if helper in ("matmul_adjoint_lhs", "matmul_adjoint_rhs"):
            return self._matmul_adjoint(node, name, value, t)
        if helper == "unreduce" and len(value.args) == 2 and not value.keywords and \
                self._shape(value.args[1]) is not None and \
                (isinstance(value.args[0], ast.Constant) or
                 is_number(self.type_of(value.args[0]))):
            return self._full(node, name, self._shape(value.args[1]), value.args[0], t)
        if helper in ("numpy.cumsum", "cumsum"):
            return self._cumsum(node, name, value, t)
        if helper == "full_like" and self._shape(value.args[0]) is not None and \
                (isinstance(value.args[1], ast.Constant) or
                 is_number(self.type_of(value.args[1]))):
            return self._full(node, name, self._shape(value.args[0]), value.args[1], t)
        if isinstance(value, ast.Name):
            if value.id in self.local:
                return self._copy(node, name, value.id, t)
            if self._shape(value) is not None and value.id not in self.key_names:
                self._set_shape(node, name, self._shape(value))     # a parameter's alias
            return None
        if isinstance(value, ast.Subscript):
            base = value.value
            index = value.slice
            if isinstance(base, ast.Name) and base.id in self.params and \
                    self._shape(base) and not isinstance(index, (ast.Slice, ast.Tuple)) and \
                    len(self._shape(base)) > 1:
                self._set_shape(node, name, self._shape(base)[1:])   # a row of a parameter
            return None
        return self._elementwise(node, name, value, t)

    # ---- elementwise
    def _operand_shape(self, node):
        if isinstance(node, ast.Constant):
            return ()
        if isinstance(node, ast.Name):
            t = self.typemap.get(node.id)
            if is_number(t):
                return ()
            shape = self.shapes.get(node.id)
            if is_array(t) and shape:
                return tuple(shape)
            raise _Unknown()
        if isinstance(node, ast.BinOp) and not isinstance(node.op, ast.MatMult):
            return _broadcast([self._operand_shape(node.left), self._operand_shape(node.right)])
        if isinstance(node, ast.UnaryOp):
            return self._operand_shape(node.operand)
        if isinstance(node, ast.Compare) and len(node.comparators) == 1:
            return _broadcast([self._operand_shape(node.left),
                               self._operand_shape(node.comparators[0])])
        if isinstance(node, ast.IfExp):
            if self._operand_shape(node.test) or self._operand_shape(node.body) or \
                    self._operand_shape(node.orelse):
                raise _Unknown()
            return ()
        if isinstance(node, ast.Call) and not node.keywords:
            kind, _, attr = (self._helper(node) or "").partition(".")
            if kind == "numpy" and attr in ELEMENTWISE or kind == "vmath" and attr in _VMATH \
                    or kind == "numpy" and attr == "where" and len(node.args) == 3:
                return _broadcast([self._operand_shape(a) for a in node.args])
        raise _Unknown()

    def _indexed(self, node, out):
        """``node`` with each array read at the element the loop computes
        (broadcast axes at 0), typed as its element (``_tx_type``)."""
        if isinstance(node, ast.Name) and is_array(self.typemap.get(node.id)):
            shape = self.shapes[node.id]
            lead = len(out) - len(shape)
            parts = [f"z{lead + d}_" if n == out[lead + d] else "0"
                     for d, n in enumerate(shape)]
            sub = ast.parse(f"{node.id}[{', '.join(parts)}]", mode="eval").body
            sub._tx_type = self.typemap[node.id].dtype
            return sub
        if isinstance(node, ast.Call) and self._helper(node) == "numpy.where":
            c, a, b = (self._indexed(x, out) for x in node.args)
            return ast.IfExp(c, a, b)
        for field, value in ast.iter_fields(node):
            if isinstance(value, list):
                setattr(node, field, [self._indexed(v, out) if isinstance(v, ast.expr) else v
                                      for v in value])
            elif isinstance(value, ast.expr) and field != "func":
                setattr(node, field, self._indexed(value, out))
        return node

    def _elementwise(self, node, name, value, t):
        """``name = <elementwise expression of arrays of known shapes>`` as a
        local array and loops, or None where the expression is not one."""
        try:
            shape = self._operand_shape(value)
        except _Unknown:
            return None
        if not shape:
            return None
        alloc = self._local_array(node, name, shape, t)
        loops, indent, idx = self._loops(shape)
        expr = self._indexed(value, shape)
        saved, self._scalar_context = self._scalar_context, True
        try:
            expr = self.visit(expr)
        finally:
            self._scalar_context = saved
        body = ast.parse("\n".join([alloc] + loops +
                                   [f"{indent}{name}[{', '.join(idx)}] = 0"])).body
        store = next(n for n in ast.walk(body[-1]) if isinstance(n, ast.Assign))
        store.value = expr
        return body

    def _full(self, node, name, shape, fill, t):
        """``name = full_like(a, fill)`` (``zeros_like``, ``ones_like``) of an
        array of known shape: a local array filled with ``fill``."""
        loops, indent, idx = self._loops(shape)
        body = ast.parse("\n".join([self._local_array(node, name, shape, t)] + loops +
                                   [f"{indent}{name}[{', '.join(idx)}] = 0"])).body
        store = next(n for n in ast.walk(body[-1]) if isinstance(n, ast.Assign))
        store.value = self.visit(fill)
        return body

    def _cumsum(self, node, name, value, t):
        """``name = np.cumsum(a)`` (or the runtime's ``cumsum(a, 0)``) of a
        vector of known shape: a local vector of running sums, or None."""
        helper = self._helper(value)
        args = value.args
        if value.keywords or not args or not isinstance(args[0], ast.Name) or \
                helper == "numpy.cumsum" and len(args) != 1 or \
                helper == "cumsum" and not (len(args) == 2 and isinstance(args[1], ast.Constant)
                                            and args[1].value in (0, -1)):
            return None
        shape = self.shapes.get(args[0].id)
        if shape is None or len(shape) != 1:
            return None
        a = args[0].id
        lines = [self._local_array(node, name, shape, t), f"{name}_run_ = np.{t.dtype}(0)",
                 f"for z0_ in range({shape[0]}):", f"    {name}_run_ += {a}[z0_]",
                 f"    {name}[z0_] = {name}_run_"]
        return ast.parse("\n".join(lines)).body

    def _shape_constant(self, array, what):
        """``np.shape(a)`` (a tuple) or ``np.size(a)`` of an array of known shape."""
        shape = self._shape(array)
        if what == "size":
            size = 1
            for n in shape:
                size *= n
            return ast.Constant(size)
        return ast.Tuple([ast.Constant(n) for n in shape], ast.Load())

    def _copy(self, node, name, src, t):
        """``name = np.copy(a)``, or ``name = a`` of a local array: the
        values into ``name``'s own local array."""
        shape = self.shapes[src]
        loops, indent, idx = self._loops(shape)
        where = ", ".join(idx)
        return ast.parse("\n".join([self._local_array(node, name, shape, t)] + loops +
                                   [f"{indent}{name}[{where}] = {src}[{where}]"])).body

    def _reduction(self, node, name, value, t):
        """``name = np.sum(a)`` (``prod``, ``max``, ``min``, ``mean``, and the
        runtime's ``var_all``/``std_all``) of a local or parameter array of
        known shape: a loop, in NumPy's order of the elements."""
        helper = self._helper(value) or ""
        kind, _, attr = helper.partition(".")
        args = value.args
        if helper in _AXES and len(args) == 2 and isinstance(args[0], ast.Name) and \
                self.shapes.get(args[0].id) and _all_axes(args[1], len(self.shapes[args[0].id])):
            kind, attr, args = "numpy", _AXES[helper], args[:1]     # over every axis
        if not (kind == "numpy" and attr in _REDUCE or helper in ("var_all", "std_all")) or \
                len(args) != 1 or value.keywords or not isinstance(args[0], ast.Name):
            return None
        a = args[0].id
        shape = self.shapes.get(a)
        ta = self.typemap.get(a)
        if not is_array(ta) or a in self.key_names:
            return None
        if not shape:
            # a view of a size known only when running (x[k:k + 1]): the sums
            # and tests that mean something for any size, over its shape
            if attr not in ("sum", "prod", "all", "any", "count_nonzero") or \
                    not getattr(ta, "ndim", 0):
                return None
            shape = tuple(f"{a}.shape[{d}]" for d in range(ta.ndim))
        loops, indent, idx = self._loops(shape)
        item = f"{a}[{', '.join(idx)}]"
        size = 1
        for n in shape:
            size = size * n if isinstance(n, int) and size else None    # (mean: sizes known)
        self.imports.add("math")
        if attr in ("sum", "mean") or helper in ("var_all", "std_all"):
            lines = [f"{name} = np.{t}(0)"] + loops + [f"{indent}{name} += {item}"]
            if attr == "mean":
                lines.append(f"{name} = {name} / {size}")
            elif helper in ("var_all", "std_all"):
                m = f"{name}_mean_"
                lines = [f"{m} = np.{t}(0)"] + loops + [f"{indent}{m} += {item}"]
                lines += [f"{m} = {m} / {size}", f"{name} = np.{t}(0)"] + loops + \
                    [f"{indent}{name} += abs({item} - {m}) ** 2", f"{name} = {name} / {size}"]
                if helper == "std_all":
                    lines.append(f"{name} = math.sqrt({name})")
        elif attr == "prod":
            lines = [f"{name} = np.{t}(1)"] + loops + [f"{indent}{name} *= {item}"]
        elif attr in ("argmax", "argmin"):    # the first best, or the first NaN
            op = ">" if attr == "argmax" else "<"
            at, best = f"{name}_at_", f"{name}_best_"
            first = ", ".join("0" for _ in shape)
            lines = [f"{name} = 0", f"{at} = 0", f"{best} = {a}[{first}]"] + loops + [
                f"{indent}if {best} == {best} and ({item} {op} {best} or {item} != {item}):",
                f"{indent}    {best} = {item}",
                f"{indent}    {name} = {at}",
                f"{indent}{at} += 1"]
        elif attr in ("all", "any"):
            start, flip, end = ("True", "not ", "False") if attr == "all" else \
                ("False", "", "True")
            lines = [f"{name} = {start}"] + loops + [
                f"{indent}if {flip}{item}:", f"{indent}    {name} = {end}"]
        elif attr == "count_nonzero":
            lines = [f"{name} = np.{t}(0)"] + loops + [
                f"{indent}if {item}:", f"{indent}    {name} += 1"]
        else:           # max, min: NaN wins, as in NumPy
            first = ", ".join("0" for _ in shape)
            op = ">" if attr in ("max", "amax") else "<"
            lines = [f"{name} = {a}[{first}]"] + loops + [
                f"{indent}if {item} {op} {name} or {item} != {item}:",
                f"{indent}    if {name} == {name}:",
                f"{indent}        {name} = {item}"]
        return ast.parse("\n".join(lines)).body

    # ---- what gradients make
    def _shape(self, node):
        """The shape of the array ``node`` names where it is fixed when the
        kernel compiles (a parameter's, or a local array's), else None."""
        if isinstance(node, ast.Name):
            return self.shapes.get(node.id)
        return None

    def _unindex(self, node, name, value, t):
        """``name = unindex(x, index, g)`` (the gradient of ``x[index]``) with
        ``x`` of a fixed shape and ``g`` a number: a zeroed local array of
        ``x``'s shape, ``g`` added at ``index``."""
        x, index, g = value.args
        if self._shape(x) is None or not (is_number(self.type_of(g)) or
                                          isinstance(g, ast.Constant)):
            self.refuse(node, f"the gradient of an indexed array of run-time size ({t})")
        zeros = self._zeros(node, name, x, t)
        index = self.visit(index)
        g = self.visit(g)
        add = ast.AugAssign(ast.Subscript(ast.Name(name, ast.Load()), index, ast.Store()),
                            ast.Add(), g)
        return zeros + [add]

    def _tree_add(self, node, name, value, t):
        """``name = tree_add(a, b)`` of two arrays of the same fixed shape:
        element by element, into ``a`` where ``name`` is ``a``, else into a
        new local array."""
        a, b = value.args
        shape = self._shape(a)
        if shape is None or self._shape(b) != shape:
            self.refuse(node, f"a sum of gradients of run-time size ({t}) per example")
        idx = ", ".join(f"z{d}_" for d in range(len(shape))) or "()"
        lines = []
        if isinstance(b, ast.Name) and b.id == name:
            a, b = b, a
        if not (a.id == name and name in self.local):     # (a parameter: not in place)
            lines.append(self._zeros(node, name, a, t))
        indent = ""
        loops = []
        for d, n in enumerate(shape):
            loops.append(f"{indent}for z{d}_ in range({n}):")
            indent += "    "
        src = f"{name}[{idx}] += {b.id}[{idx}]" if a.id == name else \
            f"{name}[{idx}] = {a.id}[{idx}] + {b.id}[{idx}]"
        body = ast.parse("\n".join(loops + [indent + src])).body
        return [s for block in lines for s in block] + body

    def _zeros(self, node, name, like, t):
        """``name = zeros_like(param)``: a thread's local array of the
        parameter's shape, zeroed (a gradient accumulated element by element)."""
        shape = self.shapes.get(like.id) if isinstance(like, ast.Name) else None
        if shape is None:
            self.refuse(node, f"zeros_like of an array of run-time size ({t}) per example")
        loops, indent, idx = self._loops(shape)
        return ast.parse("\n".join([self._local_array(node, name, shape, t)] + loops +
                                   [f"{indent}{name}[{', '.join(idx) or '()'}] = 0"])).body
