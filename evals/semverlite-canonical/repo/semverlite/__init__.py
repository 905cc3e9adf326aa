"""Small helpers for MAJOR.MINOR.PATCH version strings (no third-party dependencies)."""

from semverlite.core import InvalidVersion, compare, is_newer, latest, parse, sort_versions

__all__ = ["InvalidVersion", "compare", "is_newer", "latest", "parse", "sort_versions"]
