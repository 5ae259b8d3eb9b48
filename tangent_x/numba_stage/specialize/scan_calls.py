"""``lax.scan``'s runtime helpers evaluated on abstract values (see
``registry``): a scan's length and per-step slices, its outputs pushed on
tapes and stacked, its stacked cotangent read step by step (``Steps``)."""
import ast

from ... import runtime
from .registry import handles, is_zero, opened, runtime_helper
from .values import Const, Dyn, Expr, Stale, Steps, Tape, Zero, av_leaves, children, \
    is_container, rebuild


@handles(runtime.scan_length)
def _scan_length(s, args, kwargs):
    """Steps of a scan: ``length`` if given, else ``len`` of the first leaf."""
    length = args[1] if len(args) > 1 else kwargs.get("length", Const(None))
    if isinstance(length, Const) and length.value is not None:
        return Const(int(length.value))
    if not isinstance(length, Const):
        return Expr(ast.Call(func=ast.Name("int", ast.Load()), args=[s.render(length)],
                             keywords=[]))
    first = av_leaves(opened(args[0]))[0]
    if isinstance(first, Const) and first.value is not None:
        return Const(len(first.value))
    return Expr(ast.Call(func=ast.Name("len", ast.Load()), args=[s.render(first)],
                         keywords=[]))


@handles(runtime.scan_slice)
def _scan_slice(s, args, kwargs):
    """Step ``k`` of a scan's inputs, leaf by leaf (None stays None)."""
    xs, k = opened(args[0]), args[1]

    def take(x):
        if is_container(x):
            return rebuild(x, [take(c) for c in children(x)])
        if isinstance(x, Const) and x.value is None:
            return x
        return s.materialize(Expr(ast.Subscript(value=s.render(x), slice=s.render(k, "k"),
                                                ctx=ast.Load())), "x")
    return take(xs)


@handles(runtime.appended)
def _appended_to_tape(s, args, kwargs):
    """``appended`` on a list a compiled loop fills (a scan's outputs): a
    push, where the statement rebinds the list's one name (``xs =
    appended(xs, y)``: the old list is not read again), and also where it
    is another name (see below)."""
    items, item = opened(args[0]), args[1]
    if isinstance(items, list):
        return items + [s.materialize(item, "item")]
    if isinstance(items, Tape) and s.append_in_place:
        s.tape_push(items, s.materialize(item, "item"))
        return items
    if isinstance(items, Tape):
        # ``new = appended(old, y)`` (the gradient's forward pass, under an
        # if): the item goes in place too, and every name that held the
        # list before is stale from here (a later read of one is refused;
        # the gradient reads the list's versions by their lengths,
        # ``Tapes.version_length``)
        # (Each loop around must rebind the old name, as the python stage's
        # ``xs_2 = appended(xs_1, y) ... xs_1 = xs_2`` does, or bind it
        # afresh each turn (a scan inside a loop: ``ys = []; ys_1 = ys``):
        # a name a loop does not assign would start the next turn as the
        # grown list.)
        if s.emitting and any(s.append_source not in carried.names and
                              s.append_source not in carried.assigned for carried in s.loops):
            s.fail_list_versions(items)
        leaves = {leaf.name for leaf in av_leaves(items.template) if isinstance(leaf, Dyn)}
        for name, value in list(s.env.items()):
            if _holds_list(value, leaves):
                s.env[name] = Stale(items)
        s.tape_push(items, s.materialize(item, "item"))
        return items
    return NotImplemented


def _holds_list(value, leaves):
    """Whether ``value`` holds (is, or has in it) the lists ``leaves``."""
    if isinstance(value, Tape):
        value = value.template
    if is_container(value):
        return any(_holds_list(c, leaves) for c in children(value))
    return isinstance(value, Dyn) and value.name in leaves


@handles(runtime.stack_steps)
def _stack_steps(s, args, kwargs):
    """A scan's stacked outputs: each leaf's list stacked along a new axis
    (``numba_runtime.stack_items``); outputs that are None stay None."""
    items = opened(args[0])
    reverse = args[1] if len(args) > 1 else kwargs.get("reverse", Const(False))
    if not isinstance(reverse, Const):
        return NotImplemented
    if isinstance(items, list) and all(isinstance(i, Const) and i.value is None
                                       for i in items):
        return Const(None)
    if isinstance(items, list) and items:
        # a loop unrolled (a static length): stack the items leaf by leaf
        items = items[::-1] if reverse.value else items
        first = items[0]

        def stack_known(parts):
            if is_container(parts[0]):
                return rebuild(parts[0], [stack_known([children(p)[k] for p in parts])
                                          for k in range(len(children(parts[0])))])
            if isinstance(parts[0], Const) and parts[0].value is None:
                return parts[0]
            elts = [s.render(s.materialize(p, "item")) for p in parts]
            return s.materialize(Expr(ast.Call(
                func=runtime_helper(s, "array"), args=[ast.Tuple(elts=elts, ctx=ast.Load())],
                keywords=[])), "stacked")
        return stack_known(items) if first is not None else NotImplemented
    if not isinstance(items, Tape):
        return NotImplemented
    helper = runtime_helper(s, "stack_items")

    def stack(template):
        if is_container(template):
            return rebuild(template, [stack(c) for c in children(template)])
        if isinstance(template, Const):
            return template
        size = s.sizes.get(template.name)
        n = ast.Name(size, ast.Load()) if size else \
            ast.Call(func=ast.Name("len", ast.Load()), args=[ast.Name(template.name,
                                                                      ast.Load())],
                     keywords=[])
        return s.materialize(Expr(ast.Call(
            func=helper, args=[ast.Name(template.name, ast.Load()), n,
                               ast.Constant(bool(reverse.value))], keywords=[])), "stacked")
    return stack(items.template)


@handles(runtime.unstack_steps)
def _unstack_steps(s, args, kwargs):
    """The per-step slices of a scan's stacked cotangent, kept whole
    (``Steps``): a loop takes its items from the end and drops them."""
    g, items = opened(args[0]), opened(args[1])
    reverse = args[2] if len(args) > 2 else kwargs.get("reverse", Const(False))
    if not isinstance(reverse, Const):
        return NotImplemented
    if isinstance(g, Const) and g.value is None:
        n = Const(0)            # items of None: no count needed
    elif isinstance(items, list):
        n = Const(len(items))
    elif isinstance(items, Tape):
        lists = [t for t in av_leaves(items.template) if isinstance(t, Dyn)]
        if lists:
            size = s.sizes.get(lists[0].name)
            n = s.materialize(Expr(ast.Name(size, ast.Load()) if size else ast.Call(
                func=ast.Name("len", ast.Load()), args=[ast.Name(lists[0].name, ast.Load())],
                keywords=[])), "n")
        else:
            return NotImplemented
    else:
        return NotImplemented
    return Steps(g, n, n, Const(bool(reverse.value)))


@handles(runtime.scan_unslice)
def _scan_unslice(s, args, kwargs):
    """Cotangent of ``scan_slice``, leaf by leaf: ``unindex(x, k, g)``."""
    xs, k, g = opened(args[0]), args[1], opened(args[2])

    def put(x, g):
        if isinstance(x, Const) and x.value is None:
            return x
        if is_container(x):
            gs = children(g) if is_container(g) else [g] * len(children(x))
            return rebuild(x, [put(a, b) for a, b in zip(children(x), gs)])
        if is_zero(g):
            return Zero(x)
        return s.materialize(Expr(ast.Call(func=s.global_name(runtime.unindex, "unindex"),
                                           args=[s.render(x), s.render(k, "k"), s.render(g)],
                                           keywords=[])), "unsliced")
    return put(xs, g)
