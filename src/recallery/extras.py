"""Optional parts of recallery: a part used without its extra is one line saying what to install.

The extras are declared in ``pyproject.toml``: ``server`` (the command line, the REST server,
the Python SDK client and chat models) and ``postgres`` (the PostgreSQL store). recallery is not
on PyPI yet, so the line says how to install an extra from a clone (``pip install ".[server]"``);
``pip install "recallery[server]"`` would not resolve.
"""

from __future__ import annotations

import importlib.util

from recallery.errors import MissingExtra

__all__ = ["install_command", "require"]


def install_command(extra: str) -> str:
    """How to install ``extra``, as it works today: from a clone (not on PyPI yet)."""
    return f'pip install ".[{extra}]" in a clone of recallery (it is not on PyPI yet)'


def require(*modules: str, extra: str, what: str) -> None:
    """Raise :class:`MissingExtra` unless every top-level module in ``modules`` is installed.

    Nothing is imported: the caller imports the modules next, and an installed module that
    fails to import still raises its own error.
    """
    for module in modules:
        if importlib.util.find_spec(module) is None:
            raise MissingExtra(
                f"{what} needs the {extra} extra: {install_command(extra)}",
                extra=extra,
                module=module,
            )
