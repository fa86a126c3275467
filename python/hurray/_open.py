# SPDX-License-Identifier: Apache-2.0
"""One opener for a local path or a URL, shared by hurray.numpy, hurray.torch and
safe_open (the safetensors drop-ins)."""
import os

from . import _hurray

URL_SCHEMES = ("http://", "https://", "s3://")


def is_url(filename):
    """Whether ``filename`` is an ``http://``, ``https://`` or ``s3://`` URL string."""
    return isinstance(filename, str) and filename.lower().startswith(URL_SCHEMES)


def open_file(filename, writable=False):
    """``_hurray.open`` of a path, ``_hurray.open_url`` of a URL (range requests; an
    ``s3://`` URL takes the AWS environment's endpoint and credentials). ``writable``:
    arrays that may be written, never reaching the file (a local file is mapped
    copy-on-write; a URL's arrays are private copies of the downloaded bytes)."""
    if is_url(filename):
        return _hurray.open_url(filename, writable=writable)
    return _hurray.open(os.fspath(filename), writable=writable)
