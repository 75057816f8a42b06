"""What config values are made of: sizes ("5MB", "64MiB"), durations ("20s", "24h") and the
base of every section (unknown keys refused). Apart from `config.py`, which holds the sections."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import msgspec

if TYPE_CHECKING:  # to the type checker they are the plain numbers they become
    Size = int
    Duration = float
else:

    class Size(int):
        """A byte count; decoded from "5MB", "64MiB", "512KiB" or a plain integer."""

    class Duration(float):
        """Seconds; decoded from "20s", "250ms", "24h", "7d" or a plain number."""


_SIZE_UNITS = {"": 1, "b": 1, "kb": 1000, "mb": 1000**2, "gb": 1000**3}
_SIZE_UNITS |= {"kib": 1024, "mib": 1024**2, "gib": 1024**3}
_DURATION_UNITS = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_size(value: str | int) -> int:
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return int(value)
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*", str(value))
    if not m or m.group(2).lower() not in _SIZE_UNITS:
        raise ValueError(f'not a size: {value!r} (write e.g. "5MB" or "64MiB")')
    return int(float(m.group(1)) * _SIZE_UNITS[m.group(2).lower()])


def parse_duration(value: str | float) -> float:
    if isinstance(value, int | float) and not isinstance(value, bool) and value >= 0:
        return float(value)
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*", str(value))
    if not m:
        raise ValueError(f'not a duration: {value!r} (write e.g. "20s" or "24h")')
    return float(m.group(1)) * _DURATION_UNITS[m.group(2) or "s"]


class _Section(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    pass
