# SPDX-License-Identifier: Apache-2.0
"""``hurray.StreamReader`` / ``hurray.StreamWriter``: the streaming format (ADR-035).

A stream is tensors back to back, each its descriptor followed by its
buffers, with no header and no end marker. The writer sends each tensor as
it is given; the reader yields each one as soon as its bytes have arrived,
so neither side holds the whole sequence::

    with hurray.StreamWriter(sock) as w:        # a path, an object with fileno(), or nothing
        w.write(tensor)                         # hurray.Tensor, numpy array or hurray.Composite

    for item in hurray.StreamReader(sock):      # a path, an object with fileno(), or bytes
        ...                                     # hurray.Tensor, or hurray.Composite

Both are blocking and release the GIL while they wait on their transport.
A file descriptor is duplicated, so closing the stream never closes the
caller's object. Errors: framing and truncation raise ``hurray.StreamError``,
a descriptor that does not decode or validate ``InvalidDescriptorError``, the
transport ``FileError``; messages give the stream byte offset.
"""

import io as _io
import os as _os

import numpy as _np

from . import _hurray
from ._composite import Composite, _array_wire
from ._errors import HurrayError, UnsupportedError

__all__ = ["StreamReader", "StreamWriter"]

_BYTES_LIKE = (bytes, bytearray, memoryview)


def _tensor_class():
    import hurray  # the package, imported lazily: this module is part of it

    cls = getattr(hurray, "Tensor", None)
    if cls is None:
        raise UnsupportedError("hurray.Tensor is not available in this build")
    return cls


def _fileno(obj, role):
    """The file descriptor of ``obj`` (TypeError with advice when it has none)."""
    try:
        fd = obj.fileno()
    except (_io.UnsupportedOperation, AttributeError, OSError, ValueError) as exc:
        raise TypeError(
            f"{role}: {type(obj).__name__} has no file descriptor ({exc}); pass a path, an object with a "
            "working fileno() (socket, pipe, open file) or bytes (for io.BytesIO: pass its getvalue())"
        ) from None
    if not isinstance(fd, int) or fd < 0:
        raise TypeError(f"{role}: {type(obj).__name__}.fileno() returned {fd!r}")
    timeout = getattr(obj, "gettimeout", None)
    if callable(timeout) and timeout() is not None:
        raise ValueError(
            f"{role}: the socket has a timeout ({timeout()} s), which makes it non-blocking; "
            "streams block: call settimeout(None) first"
        )
    return fd


def _align_offset(obj, fd):
    """Moves a seekable file's descriptor to the object's logical position.

    A buffered file object may have read ahead of what it handed out; the
    stream then starts where the object is, not where the descriptor is. (A
    pipe or socket cannot be rewound: bytes a Python object already buffered
    from one are not seen by the stream.)
    """
    try:
        if obj.seekable():
            _os.lseek(fd, obj.tell(), _os.SEEK_SET)
    except (AttributeError, OSError, ValueError):
        pass


def _open_source(source, max_tensor_bytes):
    if isinstance(source, memoryview) and not source.c_contiguous:
        raise TypeError("StreamReader: the memoryview is not C-contiguous; pass bytes(view)")
    if isinstance(source, _BYTES_LIKE):
        return _hurray._StreamReader.from_buffer(source)
    if isinstance(source, (str, _os.PathLike)):
        return _hurray._StreamReader.from_path(_os.fspath(source), max_tensor_bytes)
    if isinstance(source, _io.BytesIO):
        raise TypeError("StreamReader: io.BytesIO has no file descriptor; pass its getvalue() (bytes) instead")
    if hasattr(source, "fileno"):
        fd = _fileno(source, "StreamReader")
        _align_offset(source, fd)
        return _hurray._StreamReader.from_fd(fd, max_tensor_bytes)
    raise TypeError(
        f"StreamReader: expected a path, bytes or an object with fileno() (socket, pipe, open file), not "
        f"{type(source).__name__}; for an object without a file descriptor such as io.BytesIO pass its getvalue()"
    )


class StreamReader:
    """Reads a stream of tensors, yielding each as soon as its bytes have arrived.

    ``source``: a path (str or os.PathLike), an object with ``fileno()`` (a
    socket, a pipe, an open file: its descriptor is duplicated, the caller's
    stays open; a seekable file is read from its current position, while
    bytes a Python object already buffered from a pipe are not seen), or
    bytes / bytearray / memoryview (read in place: buffers
    view it, no copy). ``io.BytesIO`` is refused with TypeError: pass its
    ``getvalue()``. ``max_tensor_bytes`` bounds the memory one tensor read
    from a path or descriptor may take (StreamError beyond it).

    An iterator: ``next()`` returns a ``hurray.Tensor``, or a
    ``hurray.Composite`` (members assembled) for a composite, and raises
    StopIteration at a clean end of the stream. A stream cut exactly between
    two tensors reads as a shorter stream (the format has no end marker); a
    cut inside one raises ``hurray.StreamError``. A context manager;
    ``close()`` releases the transport, and a closed reader is exhausted.
    """

    def __init__(self, source, *, max_tensor_bytes=1 << 30):
        self._reader = _open_source(source, int(max_tensor_bytes))

    def __iter__(self):
        return self

    def __next__(self):
        item = self._reader.next()
        if item is None:
            raise StopIteration
        try:
            return _to_object(item)
        except HurrayError as exc:
            # The framing was fine (the reader can go on), but the data did
            # not validate against its descriptor: say where it was.
            error = type(exc)(f"{self._reader.name}: item {self._reader.count - 1} "
                              f"(ending at byte {self._reader.offset}): {exc}")
            error.code, error.offset = exc.code, exc.offset
            raise error from exc

    def close(self):
        """Releases the transport (its duplicated descriptor); later reads find the end."""
        self._reader.close()

    @property
    def closed(self):
        """Whether ``close()`` was called."""
        return self._reader.closed

    @property
    def offset(self):
        """Bytes of the stream consumed so far."""
        return self._reader.offset

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def __repr__(self):
        state = " (closed)" if self.closed else ""
        return f"<hurray.StreamReader {self._reader.name}, {self._reader.count} read{state}>"


def _to_object(item):
    descriptor, buffers, members = item
    if members is not None:
        return Composite._from_wire(descriptor, [_to_object(m) for m in members])
    return _tensor_class()._from_wire(descriptor, buffers)


def _open_destination(destination):
    if destination is None:
        return _hurray._StreamWriter.to_memory()
    if isinstance(destination, (str, _os.PathLike)):
        return _hurray._StreamWriter.to_path(_os.fspath(destination))
    if isinstance(destination, _io.BytesIO):
        raise TypeError("StreamWriter: io.BytesIO has no file descriptor; create StreamWriter() without a "
                        "destination and take its getvalue()")
    if hasattr(destination, "fileno"):
        fd = _fileno(destination, "StreamWriter")
        flush = getattr(destination, "flush", None)
        if callable(flush):
            flush()  # what the object buffered goes out before the stream
        return _hurray._StreamWriter.to_fd(fd)
    raise TypeError(
        f"StreamWriter: expected a path, an object with fileno() (socket, pipe, open file) or no destination, "
        f"not {type(destination).__name__}"
    )


class StreamWriter:
    """Writes a stream of tensors, sending each one as it is given.

    ``destination``: a path (created or truncated), an object with
    ``fileno()`` (a socket, a pipe, an open file: its descriptor is
    duplicated, the caller's stays open; the object is flushed first, so what
    it buffered comes before the stream), or None to build the stream in
    memory (``getvalue()``).

    ``write(item)`` takes a ``hurray.Tensor`` (every buffer, in descriptor
    order), a ``hurray.Composite`` (head then members, validated whole before
    a byte is sent) or a numpy array (a dense tensor). ``finish()`` checks
    that the stream may end (no composite waiting for members), flushes and
    closes the transport; it is idempotent, and the context manager calls it
    on exit. Writing after it raises ``hurray.StreamError``.
    """

    def __init__(self, destination=None):
        self._memory = destination is None
        self._writer = _open_destination(destination)

    def write(self, item):
        """Writes one tensor, composite or numpy array; returns None."""
        if isinstance(item, Composite):
            head, members = item._wire_tree()
            self._writer.write_composite(head, members)
            return
        if isinstance(item, (_np.ndarray, _np.generic)):
            descriptor, buffers = _array_wire(item)
            self._writer.write(descriptor, buffers)
            return
        wire = getattr(item, "_wire", None)
        if wire is None:
            raise TypeError(
                f"StreamWriter.write: expected a hurray.Tensor, hurray.Composite or numpy array, not {type(item).__name__}"
            )
        descriptor, buffers = wire()
        self._writer.write(bytes(descriptor), list(buffers))

    def finish(self):
        """Ends the stream: checks it is complete, flushes, closes the transport. Idempotent."""
        self._writer.finish()

    def getvalue(self):
        """The stream's bytes (so far) of a writer created without a destination; StreamError otherwise."""
        return self._writer.getvalue()

    @property
    def finished(self):
        """Whether the stream was finished (or closed by an exception in a ``with`` block)."""
        return self._writer.finished

    @property
    def offset(self):
        """Bytes written so far."""
        return self._writer.offset

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            self.finish()
        else:
            self._writer.close()  # release the transport; the exception is the news
        return False

    def __repr__(self):
        state = " (finished)" if self.finished else ""
        where = "memory" if self._memory else "destination"
        return f"<hurray.StreamWriter to {where}, {self._writer.count} written{state}>"
