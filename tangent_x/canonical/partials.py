"""``functools.partial`` objects under every transform, as in JAX:
``vmap(partial(predict, params))(batch)``, ``grad(partial(loss, scale=2.0))``.

A partial is transformed as the one-line function it stands for::

    def predict(x, *, scale=scale_bound):
        return predict_function(params_bound, x, scale=scale)

whose parameters are those the partial leaves (``inspect.signature`` of the
partial: a keyword it binds becomes keyword-only with the bound value as
default, as Python's own partial does), and whose bound values are globals
of that function.  So every transform treats them as it treats any value
the code reads from outside: never differentiated (``argnums`` count the
parameters the partial leaves), shared by vmap (in_axes apply to the
call's own arguments), passed to compiled code at every call by jit (a
bound array changed in place is seen).  The source is registered with
linecache, so the parser reads it like a file's.
"""
import inspect
import linecache
import weakref

from ..errors import TransformError

_WRAPPERS = weakref.WeakKeyDictionary()     # partial -> its function


def as_function(p):
    """The one-line function standing for the partial ``p`` (made once)."""
    try:
        return _WRAPPERS[p]
    except (KeyError, TypeError):
        pass
    fn = _make(p)
    try:
        _WRAPPERS[p] = fn
    except TypeError:           # a partial subclass without weak references
        pass
    return fn


def _make(p):
    target = p.func
    name = getattr(target, "__name__", "partial")
    name = name if name.isidentifier() and not name.startswith("<") else "partial_function"
    try:
        signature = inspect.signature(p)
    except (TypeError, ValueError) as exc:
        raise TransformError(f"the parameters of functools.partial({name}, ...) cannot be "
                             f"read ({exc})", hint="transform a def or lambda that calls it") \
            from None
    namespace = {"partial_target": target}
    params, kwonly, call = [], [], []
    for k, value in enumerate(p.args):
        bound = f"{_safe(name)}_arg{k}"
        namespace[bound] = value
        call.append(bound)
    for param in signature.parameters.values():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            raise TransformError(
                f"functools.partial({name}, ...) leaves a parameter "
                f"{'*' if param.kind == param.VAR_POSITIONAL else '**'}{param.name}; "
                "tangent_x transforms functions of named parameters",
                hint="transform a def or lambda with named parameters that calls it")
        text = param.name
        if param.default is not param.empty:
            default = f"{param.name}_bound"
            namespace[default] = param.default
            text = f"{param.name}={default}"
        if param.kind == param.KEYWORD_ONLY:
            kwonly.append(text)
            call.append(f"{param.name}={param.name}")
        else:
            params.append(text)
            call.append(param.name)
    parts = params + (["*"] + kwonly if kwonly else [])
    source = (f"def {name}({', '.join(parts)}):\n"
              f"    return partial_target({', '.join(call)})\n")
    filename = f"<tangent_x partial of {name} {id(p)}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    exec(compile(source, filename, "exec"), namespace)
    fn = namespace[name]
    fn.__wrapped_partial__ = p
    return fn


def _safe(name):
    return name if name.isidentifier() else "partial"
