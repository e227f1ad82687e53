"""Optional dependencies: imported on first use, with the extra that installs them named.

The core ``jaxlab`` install carries only what every kernel family needs. Packages one family
alone needs (librosa for ``jaxlab.audio``, rlax/distrax for ``jaxlab.rl``, causal-learn and
networkx for ``jaxlab.causal``, matplotlib for plots) come with an extra, e.g.
``pip install 'jaxlab[audio]'``. A module binds such a package with :func:`lazy_import`, so
it imports without the extra and fails only when a function that needs the package runs:

    librosa = lazy_import("librosa", extra="audio")   # module level: nothing imported yet
    librosa.filters.mel(...)                           # first use: imports, or raises

:func:`import_optional` is the same at a call site (``from a.b import c`` becomes
``import_optional("a.b", extra=...).c``).
"""

from __future__ import annotations

import importlib
import types
from typing import Any


class MissingExtraError(ImportError):
    """An optional package is not installed; the message names the extra that installs it."""


def _is_missing(error: ModuleNotFoundError, name: str) -> bool:
    """Whether ``error`` is about ``name`` itself or one of its parent packages."""
    missing = error.name or ""
    return missing == name or name.startswith(missing + ".")


def import_optional(name: str, extra: str) -> types.ModuleType:
    """Imports module ``name``, or raises naming ``pip install 'jaxlab[<extra>]'``.

    Args:
      name: a dotted module name, e.g. ``"causallearn.search.ConstraintBased.PC"``.
      extra: the jaxlab extra that installs it (``"audio"``, ``"causal"``, ``"rl"``, ...).

    Raises:
      MissingExtraError: the module (or a parent package) is not installed. A missing
        dependency of an installed package re-raises unchanged.

    >>> import_optional("math", extra="core").sqrt(4.0)
    2.0
    """
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as error:
        if not _is_missing(error, name):
            raise
        raise MissingExtraError(
            f"{name.split('.')[0]} is not installed; install jaxlab[{extra}] "
            f"(pip install 'jaxlab[{extra}]')"
        ) from error


class _LazyModule(types.ModuleType):
    """A stand-in module that imports the real one on its first attribute access."""

    def __init__(self, name: str, extra: str):
        super().__init__(name)
        self.__dict__["_jaxlab_extra"] = extra

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("__") and attr.endswith("__"):
            raise AttributeError(attr)  # introspection (doctest, copy, pickle) stays lazy
        module = import_optional(self.__name__, self.__dict__["_jaxlab_extra"])
        return getattr(module, attr)

    def __repr__(self) -> str:
        return f"<lazy module {self.__name__!r} (jaxlab[{self.__dict__['_jaxlab_extra']}])>"


def lazy_import(name: str, extra: str) -> types.ModuleType:
    """A module object for ``name`` that imports it on first attribute access.

    The import (or the :class:`MissingExtraError` naming ``jaxlab[<extra>]``) happens when a
    function reads an attribute, not when the binding module is imported. Use it for
    ``import x`` / ``import x as y`` lines; annotations stay strings under
    ``from __future__ import annotations``.

    >>> math = lazy_import("math", extra="core")
    >>> math.floor(2.5)
    2
    """
    return _LazyModule(name, extra)
