# SPDX-License-Identifier: Apache-2.0
"""hurray.open_url (and hurray.open and hurray.load of a URL): an HRRYFILE
read over HTTP with range requests, served by the fault-injecting server of the C++ tests
(tests/http/fault_server.py, on 127.0.0.1): the same tensors and metadata as
the local file, errors that name the URL without its secrets."""

import pathlib
import subprocess
import sys

import numpy as np
import pytest

import hurray

REPO = pathlib.Path(__file__).resolve().parents[2]
FAULT_SERVER = REPO / "tests" / "http" / "fault_server.py"


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """(base URL, directory): a directory of files served over HTTP."""
    try:
        hurray.open_url("http://127.0.0.1:9/none.hrry", timeout=0.1)
    except hurray.UnsupportedError as e:
        pytest.skip(f"this module has no HTTP support: {e}")
    except hurray.FileError:
        pass
    directory = tmp_path_factory.mktemp("www")
    tensors = {
        "w": np.arange(64 * 32, dtype=np.float32).reshape(64, 32),
        "b": np.array([1, -2, 3], dtype=np.int64),
    }
    hurray.save(directory / "m.hrry", tensors, kv={"general.name": "remote"})
    server = subprocess.Popen([sys.executable, str(FAULT_SERVER), str(directory)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        port = int(server.stdout.readline().strip())
        yield f"http://127.0.0.1:{port}", directory
    finally:
        server.terminate()
        server.wait(timeout=10)


def test_a_url_reads_as_the_local_file(served):
    base, directory = served
    local = hurray.open(directory / "m.hrry")
    with hurray.open_url(f"{base}/ok/m.hrry") as remote:
        assert remote.keys() == local.keys()
        assert remote.metadata() == local.metadata()
        for name in local.keys():
            np.testing.assert_array_equal(remote.get_tensor(name), local.get_tensor(name))
    # hurray.open takes a URL too.
    with hurray.open(f"{base}/ok/m.hrry") as f:
        np.testing.assert_array_equal(f.get_tensor("b"), [1, -2, 3])


def test_load_of_a_url_gives_the_tensors_of_the_local_file(served):
    base, directory = served
    local = hurray.load(directory / "m.hrry")
    remote = hurray.load(f"{base}/ok/m.hrry")
    assert sorted(remote) == sorted(local)
    for name, t in local.items():
        np.testing.assert_array_equal(np.asarray(remote[name]), np.asarray(t))
    only_b = hurray.load(f"{base}/ok/m.hrry", names=["b"])
    assert list(only_b) == ["b"]
    np.testing.assert_array_equal(np.asarray(only_b["b"]), [1, -2, 3])


def test_extra_headers_and_a_timeout_are_accepted(served):
    base, _ = served
    f = hurray.open_url(f"{base}/ok/m.hrry", headers=["X-Test: 1"], timeout=5)
    assert sorted(f.keys()) == ["b", "w"]
    with pytest.raises(hurray.InvalidArgumentError):
        hurray.open_url(f"{base}/ok/m.hrry", headers=["not a header"])
    with pytest.raises(hurray.InvalidArgumentError):
        hurray.open_url(f"{base}/ok/m.hrry", timeout=-1)


def test_errors_name_the_url_without_its_secrets(served):
    base, _ = served
    secret = f"{base.replace('http://', 'http://user:pw@')}/ok/missing.hrry?X-Amz-Signature=s3cret"
    with pytest.raises(hurray.FileError) as e:
        hurray.open_url(secret, timeout=5)
    assert f"{base}/ok/missing.hrry" in str(e.value)
    assert "s3cret" not in str(e.value) and "pw@" not in str(e.value)
    assert e.value.file == f"{base}/ok/missing.hrry"
    with pytest.raises(ValueError):
        hurray.open(f"{base}/ok/m.hrry", writable=True)


def test_a_file_replaced_on_the_server_is_an_error(served):
    base, _ = served
    with pytest.raises(hurray.FileError, match="changed on the server"):
        f = hurray.open_url(f"{base}/etag-change/m.hrry")  # its second request sees the change
        for name in f.keys():
            f.get_tensor(name)
