# SPDX-License-Identifier: Apache-2.0
"""Devices: ``hurray.Device(kind, device_id=0, memory_class="standard")`` and ``hurray.device.cpu``.

    t.device == hurray.device.cpu
    hurray.Device("cuda", 1).kind        # "cuda"

``kind``: cpu, cuda, rocm, metal, vulkan, webgpu, hexagon, level_zero,
opencl. ``memory_class``: standard, host_pinned, unified, peer. The device
index is runtime metadata (DLPack's device_id); it is not stored in files.
"""

from ._errors import InvalidDescriptorError

__all__ = ["Device", "cpu", "KINDS", "MEMORY_CLASSES"]

KINDS = ("cpu", "cuda", "rocm", "metal", "vulkan", "webgpu", "hexagon", "level_zero", "opencl")
MEMORY_CLASSES = ("standard", "host_pinned", "unified", "peer")


class Device:
    """Where a tensor's buffers live: a kind, an index and a memory class. Immutable and hashable."""

    __slots__ = ("kind", "device_id", "memory_class")
    # The fields, for type checkers (set once, in __init__, through object.__setattr__).
    kind: str
    device_id: int
    memory_class: str

    def __init__(self, kind, device_id=0, memory_class="standard"):
        if kind not in KINDS and not (isinstance(kind, str) and kind.startswith("private_")):
            raise InvalidDescriptorError(f"unknown device kind {kind!r}; accepted: {', '.join(KINDS)}")
        if memory_class not in MEMORY_CLASSES and not (
                isinstance(memory_class, str) and memory_class.startswith("private_")):
            raise InvalidDescriptorError(
                f"unknown memory_class {memory_class!r}; accepted: {', '.join(MEMORY_CLASSES)}")
        if not isinstance(device_id, int) or isinstance(device_id, bool) or device_id < 0:
            raise InvalidDescriptorError(f"device_id must be a non-negative int, got {device_id!r}")
        object.__setattr__(self, "kind", kind)
        object.__setattr__(self, "device_id", device_id)
        object.__setattr__(self, "memory_class", memory_class)

    def __setattr__(self, key, value):
        raise AttributeError("hurray.Device is immutable")

    @property
    def index(self):
        """The device index (same as ``device_id``)."""
        return self.device_id

    def __eq__(self, other):
        if isinstance(other, Device):
            return (self.kind, self.device_id, self.memory_class) == (other.kind, other.device_id, other.memory_class)
        return NotImplemented

    def __ne__(self, other):
        result = self.__eq__(other)
        return result if result is NotImplemented else not result

    def __hash__(self):
        return hash(("hurray.Device", self.kind, self.device_id, self.memory_class))

    def __repr__(self):
        return f"hurray.Device(kind='{self.kind}', device_id={self.device_id}, memory_class='{self.memory_class}')"

    def __str__(self):
        return self.kind if self.device_id == 0 else f"{self.kind}:{self.device_id}"

    def __reduce__(self):
        return (Device, (self.kind, self.device_id, self.memory_class))


cpu = Device("cpu")


def _make_device(kind, device_id, memory_class):
    if kind == "cpu" and device_id == 0 and memory_class == "standard":
        return cpu
    return Device(kind, device_id, memory_class)
