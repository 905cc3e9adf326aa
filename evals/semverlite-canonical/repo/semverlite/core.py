"""Parsing and ordering of MAJOR.MINOR.PATCH versions, e.g. to pick the newest release tag."""

import functools
import re

_VERSION = re.compile(r"^v?(\d+)\.(\d+)\.(\d+)$")


class InvalidVersion(ValueError):
    """Raised for a string that is not MAJOR.MINOR.PATCH (an optional leading "v" is allowed)."""


def parse(text):
    """Returns the three parts of a version string, e.g. "v1.4.2" -> ("1", "4", "2")."""
    match = _VERSION.match(text.strip())
    if match is None:
        raise InvalidVersion(f"not a MAJOR.MINOR.PATCH version: {text!r}")
    return match.groups()


def compare(a, b):
    """-1 when a is older than b, 0 when they are the same version, 1 when a is newer."""
    left, right = parse(a), parse(b)
    if left < right:
        return -1
    if left > right:
        return 1
    return 0


def is_newer(candidate, current):
    """True when candidate is a later release than current."""
    return compare(candidate, current) > 0


def sort_versions(versions):
    """The versions from oldest to newest; the strings are returned as given."""
    return sorted(versions, key=functools.cmp_to_key(compare))


def latest(versions):
    """The newest version of a non-empty list."""
    if not versions:
        raise ValueError("latest() of an empty list")
    return sort_versions(versions)[-1]
