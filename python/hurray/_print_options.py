# SPDX-License-Identifier: Apache-2.0
"""How sparse tensors print: ``hurray.set_print_options`` / ``get_print_options`` / ``print_options``.

    repr(t)        # hurray.Tensor(layout='csr', shape=(3, 3), nnz=4, dtype=float32)
    with hurray.print_options(sparse_display="content"):
        repr(t)    # ... dtype=float32, values=[1. 2. 3. 4.], col_indices=[0 2 1 0], row_ptr=[0 2 3 4])

The setting lives in a ``contextvars.ContextVar``: each thread and asyncio
task sees its own, starting from "metadata".
"""

import contextvars as _contextvars

_CHOICES = ("metadata", "content")
_sparse_display = _contextvars.ContextVar("hurray.print_options.sparse_display", default="metadata")

# The component arrays shown in "content" mode, per layout, in print order.
_COMPONENTS = {
    "coo": ("indices", "values"),
    "csr": ("values", "col_indices", "row_ptr"),
    "csc": ("values", "row_indices", "col_ptr"),
}


def _checked(sparse_display):
    if not isinstance(sparse_display, str):
        raise TypeError(f"sparse_display must be a str, not {type(sparse_display).__name__}")
    if sparse_display not in _CHOICES:
        raise ValueError(f"sparse_display must be 'metadata' or 'content', not {sparse_display!r}")
    return sparse_display


def set_print_options(*, sparse_display=None):
    """Sets how COO, CSR and CSC tensors print, for the current context (thread / asyncio task).

    ``sparse_display="metadata"`` (the default) prints the layout, shape, nnz
    and dtype; ``"content"`` adds the component arrays (COO: indices, values;
    CSR: values, col_indices, row_ptr; CSC: values, row_indices, col_ptr),
    formatted by NumPy. ``None`` leaves the setting as it is. ValueError for
    another string, TypeError for a non-string.
    """
    if sparse_display is not None:
        _sparse_display.set(_checked(sparse_display))


def get_print_options():
    """The current print options as a new dict: ``{"sparse_display": "metadata" or "content"}``."""
    return {"sparse_display": _sparse_display.get()}


class PrintOptionsCtx:
    """A context manager applying print options inside a ``with`` block and restoring the
    previous ones when it exits, exception or not. Made by ``hurray.print_options(...)``.
    The value is checked when it is made (ValueError / TypeError)."""

    def __init__(self, *, sparse_display=None):
        self._sparse_display = None if sparse_display is None else _checked(sparse_display)
        self._tokens = []

    def __enter__(self):
        """Applies the options; returns None."""
        if self._sparse_display is not None:
            self._tokens.append(_sparse_display.set(self._sparse_display))
        else:
            self._tokens.append(None)

    def __exit__(self, exc_type, exc, tb):
        """Restores the options in force before ``__enter__``; never swallows an exception."""
        token = self._tokens.pop() if self._tokens else None
        if token is not None:
            _sparse_display.reset(token)
        return False

    def __repr__(self):
        return f"hurray.print_options(sparse_display={self._sparse_display!r})"


def print_options(*, sparse_display=None):
    """A context manager for scoped print options: ``with hurray.print_options(sparse_display="content"): ...``.

    Takes the keywords of ``set_print_options``; the previous options come back
    when the block exits, also on an exception.
    """
    return PrintOptionsCtx(sparse_display=sparse_display)


def _sparse_repr(tensor):
    """The repr (and str) of a COO, CSR or CSC tensor under the current print options."""
    name = tensor.layout.name
    head = (f"hurray.Tensor(layout='{name}', shape={tensor.shape!r}, nnz={tensor.nnz}, "
            f"dtype={tensor.dtype.name}")
    if tensor.quantization is not None:
        head += f", quantization='{tensor.quantization.scheme}'"
    if _sparse_display.get() != "content":
        return head + ")"
    try:
        parts = [f"{part}={getattr(tensor, part)}" for part in _COMPONENTS[name]]
    except Exception:  # noqa: BLE001 - an unprintable component falls back on the metadata form
        return head + ")"
    return head + ", " + ", ".join(parts) + ")"
