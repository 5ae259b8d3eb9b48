"""Checks on values: ``assert`` and ``if ...: raise`` (mixed into
``converter.Converter``), and f-strings.

A check stays in the primal code with Python's meaning -- the same
exception, the same message -- and contributes nothing to derivatives:
it becomes one call to ``runtime.check(ok, error, template, *parts)``.
An f-string message is kept as a ``str.format`` template of its text and
the values of its fields, formatted only when the check fails (the
fields' values are computed before the test, so they must not fail when
the check passes).  ``raise`` is understood where it guards the code: as
the whole branch of an ``if`` (``if bad: raise E(...)``, ``else: raise``,
``elif`` chains), or unconditionally in straight-line code.
"""
import sys

import gast

from ..core import ir, primitives as P
from .names import always_returns
from .scope import Static


def template_of(node):
    """(a ``str.format`` template, the field expressions) of an f-string
    (``gast.JoinedStr``); nested fields of a format spec come after their
    field, as ``str.format`` numbers them."""
    text, fields = [], []
    for part in node.values:
        if isinstance(part, gast.Constant):
            text.append(str(part.value).replace("{", "{{").replace("}", "}}"))
            continue
        field = "{"
        fields.append(part.value)
        if part.conversion not in (-1, None):
            field += "!" + chr(part.conversion)
        if part.format_spec is not None:
            spec, inner = template_of(part.format_spec)
            field += ":" + spec
            fields += inner
        text.append(field + "}")
    return "".join(text), fields


def raises_only(stmts):
    """The ``raise`` statement that is all of ``stmts``, or None."""
    if len(stmts) == 1 and isinstance(stmts[0], gast.Raise):
        return stmts[0]
    return None


class Checks:
    """Mixed into ``converter.Converter``."""

    def message_parts(self, scope, args):
        """(template atom, part atoms) for an exception's arguments: one
        f-string or string is a template; anything else is passed as it is
        (template None)."""
        if len(args) == 1 and isinstance(args[0], gast.JoinedStr):
            template, fields = template_of(args[0])
            return ir.const(template), [self.atom(scope, f) for f in fields]
        if len(args) == 1 and isinstance(args[0], gast.Constant) \
                and isinstance(args[0].value, str):
            return ir.const(args[0].value.replace("{", "{{").replace("}", "}}")), []
        return ir.const(None), [self.atom(scope, a) for a in args]

    def emit_check(self, ok, error, template, parts):
        self.eqns.append(ir.Eqn([], P.get("check"), [ok, error, template] + parts,
                                origin=self.origin))

    def stmt_Assert(self, scope, stmt):
        if not __debug__ or sys.flags.optimize:
            return                       # python -O: asserts are not run
        ok = self.atom(scope, stmt.test)
        args = [] if stmt.msg is None else [stmt.msg]
        template, parts = self.message_parts(scope, args)
        self.emit_check(ok, self.value_atom(AssertionError, "AssertionError"), template, parts)

    def exception(self, scope, stmt):
        """(exception class atom, template, parts) of ``raise E(...)``."""
        exc = stmt.exc
        if stmt.cause is not None and not (isinstance(stmt.cause, gast.Constant)
                                           and stmt.cause.value is None):
            raise self.error("`raise ... from ...` is not supported", stmt,
                             "raise the exception without `from`", scope)
        if exc is None:
            raise self.error("a bare `raise` (re-raise) is not supported", stmt,
                             "raise an exception: raise ValueError(...)", scope)
        call = exc if isinstance(exc, gast.Call) else None
        cls = self.expr(scope, call.func if call else exc)
        obj = getattr(cls, "obj", None)
        if not (isinstance(cls, Static) and isinstance(obj, type)
                and issubclass(obj, BaseException)):
            raise self.error(f"'{ir.ast_text(exc)}' is not an exception class", stmt,
                             "raise ValueError(...) or another exception class", scope)
        if call is not None and (call.keywords or any(isinstance(a, gast.Starred)
                                                      for a in call.args)):
            raise self.error("keyword or starred arguments to an exception are not "
                             "supported", stmt, "pass the message positionally", scope)
        template, parts = self.message_parts(scope, call.args if call else [])
        return self.value_atom(obj, obj.__name__), template, parts

    def stmt_Raise(self, scope, stmt):
        """A ``raise`` in straight-line code: it always fails when reached."""
        if self._branch_scopes:
            raise self.error(
                "`raise` inside a branch or loop is supported only as the whole branch "
                "of an `if` (if bad: raise ValueError(...))", stmt,
                "move the other statements of the branch out of it", scope)
        error, template, parts = self.exception(scope, stmt)
        self.emit_check(ir.const(False), error, template, parts)

    def raising_if(self, scope, stmt, pred, live_after):
        """``if bad: raise E(...)`` (else: ...), and ``if ok: ... else: raise``:
        a check, then the branch that goes on.  Returns (True, what the
        branch returns) if ``stmt`` was one, else (False, None)."""
        for raising, rest, fails_if in ((stmt.body, stmt.orelse, True),
                                        (stmt.orelse, stmt.body, False)):
            raise_stmt = raises_only(raising)
            if raise_stmt is None:
                continue
            self.origin = scope.parsed.origin(raise_stmt)
            error, template, parts = self.exception(scope, raise_stmt)
            ok = self.emit(P.get("not_"), [pred], base="ok") if fails_if else pred
            self.emit_check(ok, error, template, parts)
            if not rest:
                return True, None
            result = self.block(scope, rest, live_after)
            return True, (result if always_returns(rest) else None)
        return False, None

    def expr_JoinedStr(self, scope, node, target):
        """An f-string used as a value (``print(f"loss {loss}")``)."""
        template, fields = template_of(node)
        parts = [self.atom(scope, f) for f in fields]
        return self.emit(P.get("formatted"), [ir.const(template)] + parts, target=target,
                         base="text")
