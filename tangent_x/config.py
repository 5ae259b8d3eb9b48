"""Global configuration flags, in the style of ``jax.config``.

    import tangent_x as tx
    tx.config.update("threefry_partitionable", False)   # JAX's older stream
    tx.config.threefry_partitionable                     # -> False

Options are declared in one place (``_OPTIONS`` below, or ``config.define``
from another module) with a default, a validator and a docstring, so that a
typo in ``update`` is an error instead of a silently ignored setting.  The
``jax_`` prefix that JAX uses is accepted too, so ported code such as
``config.update("jax_threefry_partitionable", False)`` works unchanged.
"""
from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any, Callable, Iterator

__all__ = ["config", "Config"]


def _check_bool(name: str, value: Any) -> bool:
    # numpy bools are fine; ints are not (JAX rejects update("x", 1) as well).
    if value is True or value is False or type(value).__name__ == "bool_":
        return bool(value)
    raise TypeError(f"config option {name!r} expects a bool, got {value!r}")


@dataclass
class _Option:
    name: str
    default: Any
    validate: Callable[[str, Any], Any]
    doc: str


class Config:
    """Holds tangent_x's global options.

    Read an option as an attribute (``config.threefry_partitionable``) or
    with :meth:`read`; change it with :meth:`update`, or temporarily with the
    :meth:`override` context manager.  Unknown names raise ``AttributeError``
    naming the known options, as JAX does.
    """

    def __init__(self) -> None:
        object.__setattr__(self, "_options", {})
        object.__setattr__(self, "_values", {})

    # -- declaring options -------------------------------------------------
    def define(self, name: str, default: Any, doc: str = "",
               validate: Callable[[str, Any], Any] | None = None) -> None:
        """Declare a new option (used by tangent_x's own modules)."""
        if name in self._options:
            raise ValueError(f"config option {name!r} is already defined")
        if validate is None:
            validate = _check_bool if isinstance(default, bool) else (lambda n, v: v)
        self._options[name] = _Option(name, default, validate, doc)
        self._values[name] = validate(name, default)

    # -- reading and writing -------------------------------------------------
    def _canonical(self, name: str) -> str:
        if not isinstance(name, str):
            raise TypeError(f"config option names are strings, got {name!r}")
        if name in self._options:
            return name
        if name.startswith("jax_") and name[4:] in self._options:
            return name[4:]
        known = ", ".join(sorted(self._options))
        raise AttributeError(
            f"Unrecognized config option: {name!r} (known options: {known})")

    def update(self, name: str, value: Any) -> None:
        """Set option ``name`` to ``value`` (validated)."""
        key = self._canonical(name)
        self._values[key] = self._options[key].validate(key, value)

    def read(self, name: str) -> Any:
        """Current value of option ``name``."""
        return self._values[self._canonical(name)]

    @contextlib.contextmanager
    def override(self, name: str, value: Any) -> Iterator[None]:
        """Temporarily set an option: ``with config.override(name, v): ...``."""
        key = self._canonical(name)
        old = self._values[key]
        self.update(key, value)
        try:
            yield
        finally:
            self._values[key] = old

    def options(self) -> dict:
        """A snapshot ``{name: value}`` of every option."""
        return dict(self._values)

    def describe(self, name: str) -> str:
        """The docstring of option ``name``."""
        return self._options[self._canonical(name)].doc

    def __getattr__(self, name: str) -> Any:
        # Only called for names not found normally, i.e. option names.
        if name.startswith("__"):
            raise AttributeError(name)
        return self.read(name)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(
            f"use config.update({name!r}, value) to change a config option")

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self._options))

    def __repr__(self) -> str:
        items = ", ".join(f"{k}={v!r}" for k, v in sorted(self._values.items()))
        return f"Config({items})"


config = Config()

config.define(
    "threefry_partitionable", True,
    "Which Threefry stream tangent_x.random produces. True (JAX's default "
    "since 0.5.0) derives each output word from its own counter, so bits "
    "do not depend on how an array is laid out; False reproduces JAX's older "
    "stream (jax_threefry_partitionable=False).")

config.define(
    "enable_x64", False,
    "JAX's jax_enable_x64 as far as tangent_x.random is concerned: with False "
    "(JAX's default) integer seeds are reduced to their low 32 bits and "
    "dtype=None / Python scalars mean float32 and int32; with True seeds keep "
    "64 bits and the defaults are float64 and int64. Explicit float64/int64 "
    "dtypes are honoured either way (NumPy has no 32-bit-only mode).")
