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


def test_writable_arrays_of_a_url_are_private_copies(served):
    base, _ = served
    with hurray.open(f"{base}/ok/m.hrry", writable=True) as f:
        a = f.get_tensor("b")
        assert a.flags.writeable
        a[0] = 99
        np.testing.assert_array_equal(f.get_tensor("b"), [1, -2, 3])  # the downloaded bytes are untouched


def test_the_safetensors_drop_ins_take_a_url(served):
    base, directory = served
    url = f"{base}/ok/m.hrry"
    local = hurray.numpy.load_file(directory / "m.hrry")
    remote = hurray.numpy.load_file(url)
    assert sorted(remote) == sorted(local)
    for name, array in local.items():
        np.testing.assert_array_equal(remote[name], array)
    with hurray.safe_open(url, framework="np") as f:
        assert sorted(f.keys()) == sorted(local)
        np.testing.assert_array_equal(f.get_tensor("w"), local["w"])
    try:
        import torch  # noqa: F401
    except ImportError:
        return  # torch is optional at run time (python3-torch); the numpy half ran
    from hurray import torch as hurray_torch
    tensors = hurray_torch.load_file(url)
    for name, array in local.items():
        np.testing.assert_array_equal(tensors[name].numpy(), array)
    tensors["b"][0] = 7  # writable, private
    with hurray.safe_open(url, framework="pt") as f:
        assert f.get_tensor("b").tolist() == [1, -2, 3]


def test_a_file_replaced_on_the_server_is_an_error(served):
    base, _ = served
    with pytest.raises(hurray.FileError, match="changed on the server"):
        f = hurray.open_url(f"{base}/etag-change/m.hrry")  # its second request sees the change
        for name in f.keys():
            f.get_tensor(name)


SIGV4 = {"access_key_id": "AKIDHURRAYTEST", "secret_access_key": "hurray+test/secret/K7MDENG",
         "region": "eu-west-3"}  # tests/http/fault_server.py SIGV4_KEYS


def test_s3_urls_are_signed_with_aws_credentials(served, monkeypatch):
    base, directory = served
    for var in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_REGION",
                "AWS_DEFAULT_REGION", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3", "HURRAY_S3_ADDRESSING"):
        monkeypatch.delenv(var, raising=False)
    local = hurray.load(directory / "m.hrry")
    # The "sigv4" mode verifies AWS Signature Version 4; the bucket of the
    # s3:// URL is the mode (path-style on a custom endpoint).
    with hurray.open_url("s3://sigv4/m.hrry", aws=SIGV4, endpoint=base) as f:
        np.testing.assert_array_equal(f.get_tensor("w"), np.asarray(local["w"]))
    # From the environment, as the AWS SDKs read it: hurray.load and hurray.open too.
    monkeypatch.setenv("AWS_ENDPOINT_URL", base)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", SIGV4["access_key_id"])
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SIGV4["secret_access_key"])
    monkeypatch.setenv("AWS_REGION", SIGV4["region"])
    remote = hurray.load("s3://sigv4/m.hrry")
    assert sorted(remote) == sorted(local)
    np.testing.assert_array_equal(np.asarray(remote["b"]), [1, -2, 3])
    # A wrong secret: the server's 403 and its code, never the secret.
    wrong = dict(SIGV4, secret_access_key="not-the-secret-at-all")
    with pytest.raises(hurray.FileError) as e:
        hurray.open_url("s3://sigv4/m.hrry", aws=wrong, endpoint=base)
    assert "403" in str(e.value) and "SignatureDoesNotMatch" in str(e.value)
    assert "not-the-secret-at-all" not in str(e.value) and SIGV4["secret_access_key"] not in str(e.value)
    with pytest.raises(hurray.InvalidArgumentError):
        hurray.open_url("s3://sigv4/m.hrry", aws={"access_key": "x"}, endpoint=base)


def test_ctrl_c_interrupts_a_transfer_with_keyboard_interrupt(served):
    base, _ = served
    import os
    import signal
    import time
    # The "stall" mode sends headers, then nothing for 30 s; the child waits in the
    # transfer (GIL released) until SIGINT.
    code = ("import sys, time, hurray\n"
            "print('started', flush=True)\n"
            "t0 = time.monotonic()\n"
            "try:\n"
            "    hurray.open_url(sys.argv[1], timeout=60)\n"
            "    print('opened')\n"
            "except KeyboardInterrupt:\n"
            "    print('KeyboardInterrupt %.1f' % (time.monotonic() - t0), flush=True)\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    child = subprocess.Popen([sys.executable, "-c", code, f"{base}/stall/m.hrry"], stdout=subprocess.PIPE,
                             text=True, env=env)
    try:
        assert child.stdout.readline().strip() == "started"
        time.sleep(1.0)
        child.send_signal(signal.SIGINT)
        out, _ = child.communicate(timeout=10)
    finally:
        child.kill()
    assert out.startswith("KeyboardInterrupt"), out
    assert float(out.split()[1]) < 5.0, out  # not the 30 s stall nor the 60 s timeout
