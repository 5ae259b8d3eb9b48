"""``tree_util`` calls inside a function being canonicalized (mixed into
``converter.Converter``): ``tree_map``, ``tree_leaves``, ``tree_flatten``,
``tree_unflatten``, ``tree_structure`` and ``tree_reduce`` (and their
``tx.tree`` names) are not inlined from tree_util's source, which walks
node kinds with Python machinery no transform can follow.  Each becomes
the loop it is over the tree's leaves::

    leaves = tree_leaves_like(params, params, is_leaf)
    leaves_1 = tree_leaves_like(params, grads, is_leaf)
    mapped = []
    for leaf, leaf_1 in zip(leaves, leaves_1):
        mapped.append(f(leaf, leaf_1))          # f inlined
    new_params = tree_rebuild(params, mapped, is_leaf)

with the helpers of ``runtime.trees`` (taking the leaves and rebuilding
are each other's transpose: ``rules.trees``).  The structure is that of
the values at run time; eager code loops over the leaves, and jit's
specialiser, which knows the structure of every container, writes the
loop out leaf by leaf.  The loop is a small function of its own per call
site, whose lines map to the user's ``tree_map`` line.  ``is_leaf`` is
called on the tree's nodes at run time, so it must be a function that
reads no local variables of the transformed function."""
import linecache

import gast

from ..core import ir, primitives as P
from ..core.origins import LINEMAPS
from .. import runtime, tree_util
from . import parser
from .scope import LocalFunction, Static

_HELPERS = {}      # (call site, kind, number of trees) -> its function


def _map_source(n_rest):
    rest = [f"rest_{i}" for i in range(1, n_rest + 1)]
    leaves = ["leaves"] + [f"leaves_{i}" for i in range(1, n_rest + 1)]
    items = ["leaf"] + [f"leaf_{i}" for i in range(1, n_rest + 1)]
    lines = [f"def tree_map(f, tree, {''.join(r + ', ' for r in rest)}is_leaf):",
             "    leaves = tree_leaves_like(tree, tree, is_leaf)"]
    lines += [f"    {lv} = tree_leaves_like(tree, {r}, is_leaf)"
              for lv, r in zip(leaves[1:], rest)]
    lines.append("    mapped = []")
    if n_rest:
        lines.append(f"    for {', '.join(items)} in zip({', '.join(leaves)}):")
    else:
        lines.append("    for leaf in leaves:")
    lines += [f"        mapped.append(f({', '.join(items)}))",
              "    return tree_rebuild(tree, mapped, is_leaf)"]
    return "\n".join(lines) + "\n"


_REDUCE_SOURCE = {
    True: ("def tree_reduce(function, tree, initializer, is_leaf):\n"
           "    total = initializer\n"
           "    for leaf in tree_leaves_like(tree, tree, is_leaf):\n"
           "        total = function(total, leaf)\n"
           "    return total\n"),
    False: ("def tree_reduce(function, tree, is_leaf):\n"
            "    leaves = tree_leaves_like(tree, tree, is_leaf)\n"
            "    total = leaves[0]\n"
            "    for leaf in leaves[1:]:\n"
            "        total = function(total, leaf)\n"
            "    return total\n"),
}


class Trees:
    """Mixed into ``converter.Converter``."""

    def tree_handler(self, obj):
        table = {tree_util.tree_map: self.tree_map_call,
                 tree_util.tree_leaves: self.tree_leaves_call,
                 tree_util.tree_flatten: self.tree_flatten_call,
                 tree_util.tree_unflatten: self.tree_unflatten_call,
                 tree_util.tree_structure: self.tree_structure_call,
                 tree_util.tree_reduce: self.tree_reduce_call,
                 # generated code (transformed again) calls the helpers themselves
                 runtime.tree_leaves_like: self.tree_helper_call,
                 runtime.tree_rebuild: self.tree_helper_call,
                 runtime.tree_def: self.tree_helper_call}
        for unsupported in (tree_util.tree_all, tree_util.tree_transpose, tree_util.all_leaves,
                            tree_util.treedef_children, tree_util.treedef_tuple):
            table[unsupported] = self.tree_refusal
        try:
            return table.get(obj)
        except TypeError:
            return None

    def tree_refusal(self, scope, node, target):
        name = ir.ast_text(node.func)
        raise self.error(f"{name}() is not supported inside a transformed function", node,
                         "call it outside and pass the result in, or use tree_map, "
                         "tree_leaves, tree_flatten/tree_unflatten, tree_structure or "
                         "tree_reduce", scope)

    # --- the calls ------------------------------------------------------------

    def _tree_arguments(self, scope, node, names, required):
        """{parameter: gast node} for a tree_util call (Python's binding)."""
        label = names[0] if names[0] != "f" else "tree_map"
        if any(isinstance(a, gast.Starred) for a in node.args) or \
                any(k.arg is None for k in node.keywords):
            raise self.error(f"*args or **kwargs in a call to {label} are not supported",
                             node, "pass the arguments one by one", scope)
        bound = dict(zip(names[1:], node.args))
        for k in node.keywords:
            if k.arg not in names[1:] or k.arg in bound:
                raise self.error(f"unexpected argument '{k.arg}' in a call to {label}",
                                 node, None, scope)
            bound[k.arg] = k.value
        missing = [p for p in required if p not in bound]
        if missing or len(node.args) > len(names) - 1:
            raise self.error(f"{label}() takes the arguments {', '.join(names[1:])}",
                             node, None, scope)
        return bound

    def tree_map_call(self, scope, node, target):
        if any(isinstance(a, gast.Starred) for a in node.args) or len(node.args) < 2:
            raise self.error("tree_map(f, tree, *rest) needs a function and a tree "
                             "(no *args)", node, "pass the trees one by one", scope)
        keywords = {k.arg: k.value for k in node.keywords}
        if set(keywords) - {"is_leaf"}:
            raise self.error(f"unexpected argument to tree_map: "
                             f"{', '.join(sorted(set(keywords) - {'is_leaf'}))}", node,
                             "tree_map(f, tree, *rest, is_leaf=None)", scope)
        f = self._tree_function(scope, node.args[0], "tree_map", "f")
        trees = [self.atom(scope, a) for a in node.args[1:]]
        is_leaf = self._is_leaf_atom(scope, keywords.get("is_leaf"))
        helper = self._helper(scope, node, "map", len(trees) - 1)
        return self.inline(helper.node, helper, None, [f] + trees + [is_leaf], {},
                           target, scope, node)

    def tree_reduce_call(self, scope, node, target):
        args = self._tree_arguments(scope, node, ["tree_reduce", "function", "tree",
                                                  "initializer", "is_leaf"],
                                    ["function", "tree"])
        function = self._tree_function(scope, args["function"], "tree_reduce", "function")
        tree = self.atom(scope, args["tree"])
        is_leaf = self._is_leaf_atom(scope, args.get("is_leaf"))
        with_initial = "initializer" in args
        helper = self._helper(scope, node, "reduce", with_initial)
        values = [function, tree] + ([self.atom(scope, args["initializer"])]
                                     if with_initial else []) + [is_leaf]
        return self.inline(helper.node, helper, None, values, {}, target, scope, node)

    def tree_leaves_call(self, scope, node, target):
        args = self._tree_arguments(scope, node, ["tree_leaves", "tree", "is_leaf"], ["tree"])
        tree = self.atom(scope, args["tree"])
        is_leaf = self._is_leaf_atom(scope, args.get("is_leaf"))
        return self.emit(P.get("tree_leaves_like"), [tree, tree, is_leaf], target=target,
                         base="leaves")

    def tree_structure_call(self, scope, node, target):
        args = self._tree_arguments(scope, node, ["tree_structure", "tree", "is_leaf"],
                                    ["tree"])
        tree = self.atom(scope, args["tree"])
        is_leaf = self._is_leaf_atom(scope, args.get("is_leaf"))
        return self.emit(P.get("tree_def"), [tree, is_leaf], target=target, base="treedef")

    def tree_flatten_call(self, scope, node, target):
        args = self._tree_arguments(scope, node, ["tree_flatten", "tree", "is_leaf"], ["tree"])
        tree = self.atom(scope, args["tree"])
        is_leaf = self._is_leaf_atom(scope, args.get("is_leaf"))
        leaves = self.emit(P.get("tree_leaves_like"), [tree, tree, is_leaf], base="leaves")
        treedef = self.emit(P.get("tree_def"), [tree, is_leaf], base="treedef")
        return self.emit(P.get("tuple"), [leaves, treedef], target=target, base="flat")

    def tree_unflatten_call(self, scope, node, target):
        args = self._tree_arguments(scope, node, ["tree_unflatten", "treedef", "leaves"],
                                    ["treedef", "leaves"])
        treedef = self.atom(scope, args["treedef"])
        leaves = self.atom(scope, args["leaves"])
        return self.emit(P.get("tree_rebuild"), [treedef, leaves, ir.const(None)],
                         target=target, base="tree")

    def tree_helper_call(self, scope, node, target):
        """``tree_leaves_like(like, tree, is_leaf)`` and the others, as
        generated code calls them: their ``is_leaf`` is a function."""
        obj = self.expr(scope, node.func).obj
        prim = P.lookup(obj)
        args = [self._is_leaf_atom(scope, a) if i == len(node.args) - 1 and
                isinstance(self.expr(scope, a), Static) else self.atom(scope, a)
                for i, a in enumerate(node.args)]
        kwargs = {k.arg: self._is_leaf_atom(scope, k.value) for k in node.keywords}
        return self.emit(prim, args, kwargs, target=target,
                         base=prim.name.split("_")[1] if prim.name != "tree_def" else "treedef")

    # --- arguments --------------------------------------------------------------

    def _tree_function(self, scope, node, label, param):
        value = self.expr(scope, node)
        if not isinstance(value, Static):
            raise self.error(f"the {param} of {label} is '{ir.ast_text(node)}', a value; "
                             "tangent_x inlines it at every leaf, so it must be a function "
                             "known when transforming", node,
                             "pass a def, a lambda or a module-level function", scope)
        return value

    def _is_leaf_atom(self, scope, node):
        """``is_leaf`` as a value generated code passes on: None, a function
        of the module, or a lambda or def of the function made real (it
        runs on the tree's nodes at run time)."""
        if node is None:
            return ir.const(None)
        value = self.expr(scope, node)
        if not isinstance(value, Static):
            if isinstance(value, gast.Constant) and value.value is None:
                return value
            raise self.error("is_leaf must be a function (or None)", node,
                             "pass a def, a lambda or a module-level function", scope)
        obj = value.obj
        if isinstance(obj, LocalFunction):
            obj = self._real_function(obj, node, scope)
        return self.value_atom(obj, "is_leaf")

    def _real_function(self, local, node, scope):
        """A nested def or lambda as a Python function, its free names
        resolved now: each must be known when transforming (a module
        global, a function), not a value computed in the function."""
        fn_node = local.node
        params = {a.id for a in fn_node.args.posonlyargs + fn_node.args.args
                  + fn_node.args.kwonlyargs}
        params |= {a.id for a in (fn_node.args.vararg, fn_node.args.kwarg) if a is not None}
        stored = {n.id for n in ir.walk(fn_node) if isinstance(n, gast.Name)
                  and isinstance(n.ctx, (gast.Store, gast.Param))}
        namespace = {}
        for n in ir.walk(fn_node):
            if not isinstance(n, gast.Name) or not isinstance(n.ctx, gast.Load) or \
                    n.id in params or n.id in stored or n.id in namespace:
                continue
            value = self.expr(local.scope, n)
            if not isinstance(value, Static) or isinstance(value.obj, LocalFunction):
                raise self.error(f"is_leaf reads '{n.id}', a value of the transformed "
                                 "function; it runs on the tree's nodes at run time, so it "
                                 "may read only module-level names", node,
                                 "define is_leaf at module level", scope)
            namespace[n.id] = value.obj
        if isinstance(fn_node, gast.Lambda):
            tree = gast.Expression(body=ir.clone(fn_node))
            code = compile(gast.gast_to_ast(gast.fix_missing_locations(tree)),
                           local.scope.parsed.filename, "eval")
            return eval(code, namespace)        # noqa: S307 - the user's own lambda
        module = gast.Module(body=[ir.clone(fn_node)], type_ignores=[])
        module.body[0].decorator_list = []
        code = compile(gast.gast_to_ast(gast.fix_missing_locations(module)),
                       local.scope.parsed.filename, "exec")
        exec(code, namespace)                   # noqa: S102 - the user's own def
        return namespace[fn_node.name]

    def _helper(self, scope, node, kind, variant):
        """The parsed loop function for one call site (its lines all map to
        the user's line)."""
        origin = scope.parsed.origin(node)
        filename = (f"<tangent_x tree_{kind} at {origin.filename}:{origin.lineno}:"
                    f"{getattr(node, 'col_offset', 0)} {variant}>")
        fn = _HELPERS.get(filename)
        if fn is None:
            source = _map_source(variant) if kind == "map" else _REDUCE_SOURCE[variant]
            linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
            namespace = {"tree_leaves_like": runtime.tree_leaves_like,
                         "tree_rebuild": runtime.tree_rebuild}
            exec(compile(source, filename, "exec"), namespace)
            fn = _HELPERS[filename] = namespace[f"tree_{kind}"]
        LINEMAPS[filename] = {k: origin for k in range(1, 12 + 2 * (variant or 0))}
        return parser.parse(fn)
