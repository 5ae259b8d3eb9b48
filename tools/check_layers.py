"""Check tangent_x's layering: imports go downwards only, with no cycle.

Every module of the package belongs to one layer (by its folder).  An
import, at the top of a module or inside a function, may name a module of
its own layer or of a lower one, never of a higher one; and the imports
among modules, function-local ones included, form no cycle.  A
function-local import of a tangent_x module is allowed only with a reason
on its line or in the comment right above: ``# local import: <why>`` (an optional dependency, a heavy
import, a cycle the layering cannot express).

    python tools/check_layers.py [--verbose]

It also holds modules and classes to a size one can read: no module over
700 lines, no class over 400.

prints the counts and every violation, and exits 1 when there is one.
CI runs it.
"""
import ast
import os
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
PACKAGE = "tangent_x"

# Lowest first.  A module's layer is the first entry its name starts with.
LAYERS = [
    ("bottom", ["version", "errors", "config", "cachedir", "tree_nodes", "tree_paths", "tree_util", "tree", "runtime", "lax",
                "random", "nn", "numpy", "parallel", "distributed"]),
    ("core", ["core"]),
    ("canonical", ["canonical"]),
    ("analysis", ["analysis"]),
    ("rules", ["rules"]),
    ("transforms", ["transforms"]),
    ("python_stage", ["python_stage"]),
    ("numba_stage", ["numba_stage", "cuda_stage"]),     # the backends
    ("api", ["api"]),
    ("top", ["", "__main__", "cli", "test_util"]),
]
REASON = "# local import:"
MAX_MODULE_LINES = 700
MAX_CLASS_LINES = 400


def oversized(path, where):
    """Problems of size: the module's lines, each class's lines."""
    text = open(path, encoding="utf-8").read()
    problems = []
    lines = text.count("\n") + (not text.endswith("\n"))
    if lines > MAX_MODULE_LINES:
        problems.append(f"{where}: {lines} lines (at most {MAX_MODULE_LINES}); split it by job")
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.ClassDef):
            size = node.end_lineno - node.lineno + 1
            if size > MAX_CLASS_LINES:
                problems.append(f"{where}:{node.lineno}: class {node.name} has {size} lines "
                                f"(at most {MAX_CLASS_LINES})")
    return problems


def modules(root):
    """{module name: (path, is package)} for every module of the package."""
    found = {}
    for folder, dirs, files in os.walk(os.path.join(root, PACKAGE)):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        for f in files:
            if f.endswith(".py"):
                path = os.path.join(folder, f)
                name = os.path.relpath(path, root)[:-3].replace(os.sep, ".")
                package = name.endswith(".__init__")
                found[name[:-9] if package else name] = (path, package)
    return found


def layer_of(module):
    rest = module[len(PACKAGE) + 1:] if module != PACKAGE else ""
    head = rest.split(".")[0]
    for rank, (_, heads) in enumerate(LAYERS):
        if head in heads:
            return rank
    raise SystemExit(f"check_layers: {module} belongs to no layer; add it to LAYERS")


def imports(module, path, package, known):
    """(target module, line, function-local, line text) of each internal import."""
    text = open(path, encoding="utf-8").read()
    lines = text.splitlines()
    out = []

    def resolve(node):
        if isinstance(node, ast.Import):
            return [a.name for a in node.names]
        if node.level:
            base = module.split(".") if package else module.split(".")[:-1]
            base = base[:len(base) - node.level + 1]
            target = ".".join(base + ([node.module] if node.module else []))
        else:
            target = node.module or ""
        return [target + "." + a.name if target + "." + a.name in known else target
                for a in node.names]

    def visit(node, local):
        for child in ast.iter_child_nodes(node):
            inner = local or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                ast.Lambda))
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                for target in resolve(child):
                    while target and target not in known:
                        target = target.rpartition(".")[0]
                    if target and target != module and target.startswith(PACKAGE):
                        # the reason sits on the import's lines or in the
                        # comment lines right above it
                        first = child.lineno - 1
                        while first > 0 and lines[first - 1].strip().startswith("#"):
                            first -= 1
                        span = "\n".join(lines[first:child.end_lineno])
                        out.append((target, child.lineno, local, span))
            visit(child, inner)

    visit(ast.parse(text), False)
    return out


def cycles(graph):
    """Strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on, found, counter = {}, {}, [], set(), [], [0]
    sys.setrecursionlimit(10000)

    def strong(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            strong(v)
    return found


def main(argv):
    verbose = "--verbose" in argv
    known = modules(ROOT)
    graph, problems, local_count, reasoned = {}, [], 0, 0
    for module, (path, package) in sorted(known.items()):
        rank = layer_of(module)
        where = os.path.relpath(path, ROOT)
        problems += oversized(path, where)
        for target, line, local, span in imports(module, path, package, known):
            # a package's __init__ importing its own submodules is the package itself
            if module == PACKAGE or target.startswith(module + "."):
                continue
            graph.setdefault(module, set()).add(target)
            if local:
                local_count += 1
                if REASON in span:
                    reasoned += 1
                else:
                    problems.append(f"{where}:{line}: function-local import of {target} "
                                    f"without '{REASON} <why>'")
            if layer_of(target) > rank:
                problems.append(f"{where}:{line}: {module} ({LAYERS[rank][0]}) imports "
                                f"{target} ({LAYERS[layer_of(target)][0]}), a higher layer")
    for component in cycles(graph):
        problems.append("import cycle: " + " -> ".join(component))
    print(f"{len(known)} modules, {sum(len(t) for t in graph.values())} internal import "
          f"edges, {local_count} function-local ({reasoned} with a reason), "
          f"{len(problems)} problems")
    for p in problems if verbose or len(problems) < 60 else problems[:60]:
        print("  " + p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
