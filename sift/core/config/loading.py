"""Loading: one TOML file (or `$SIFT_CONFIG`, or none: the defaults) decoded into the schema.

Sizes and durations as `core/units.py` reads them. A bad key or value stops start-up naming it
(`$.section.key`).
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any

import msgspec

from sift.core.config.checks import ConfigError, check
from sift.core.config.sections import Config
from sift.core.units import Duration, Size, parse_duration, parse_size


def _dec_hook(type_: type, obj: Any) -> Any:
    if type_ is Size:
        return Size(parse_size(obj))
    if type_ is Duration:
        return Duration(parse_duration(obj))
    raise NotImplementedError


def loads(text: str) -> Config:
    """Decode TOML text into a Config, or raise ConfigError naming the bad key."""
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"config: not valid TOML: {exc}") from None
    return from_dict(raw)


def from_dict(raw: dict[str, Any]) -> Config:
    try:
        cfg = msgspec.convert(raw, Config, dec_hook=_dec_hook)
    except msgspec.ValidationError as exc:
        raise ConfigError(f"config: {exc}") from None
    plain: Config = _plain(cfg)
    check(plain)
    return plain


def _plain(value: Any) -> Any:
    """Sizes and durations as plain int/float, so they encode anywhere (msgspec, JSON)."""
    if isinstance(value, msgspec.Struct):
        changes = {f: _plain(getattr(value, f)) for f in value.__struct_fields__}
        return msgspec.structs.replace(value, **changes)
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, Size):
        return int(value)
    if isinstance(value, Duration):
        return float(value)
    return value


def load(path: str | os.PathLike[str] | None = None) -> Config:
    """The config from `path`, else `$SIFT_CONFIG`, else the embedded defaults."""
    path = path or os.environ.get("SIFT_CONFIG") or None
    if path is None:
        return Config()
    try:
        text = Path(path).read_text()
    except OSError as exc:
        raise ConfigError(f"config: cannot read {path}: {exc.strerror}") from None
    return loads(text)
