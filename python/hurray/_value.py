# SPDX-License-Identifier: Apache-2.0
"""``ByValue``: equality and hashing by value, for the immutable descriptor classes."""

__all__ = ["ByValue"]


class ByValue:
    """A mixin: instances compare equal, and hash alike, when their ``_key()`` tuples are equal.

    The class that defines ``_key`` is the family: its instances (and its
    subclasses') compare with each other; anything else gives NotImplemented.
    """

    __slots__ = ()

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "_key" in cls.__dict__:
            cls._value_family = cls

    def _key(self):
        raise NotImplementedError

    def __eq__(self, other):
        if isinstance(other, self._value_family):
            return self._key() == other._key()
        return NotImplemented

    def __ne__(self, other):
        result = self.__eq__(other)
        return result if result is NotImplemented else not result

    def __hash__(self):
        return hash((self._value_family.__name__,) + tuple(self._key()))
