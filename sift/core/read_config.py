"""The config of `POST /v1/read` (`[read]`): how many sources one read takes, and its budget
when the caller names none. A section of `Config` (`core/config.py`)."""

from __future__ import annotations

import msgspec


class ReadConfig(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    max_urls: int = 10  # sources in one read (its `urls`)
    # the answer's budget in o200k_base tokens when the request gives no `max_tokens`: about
    # what an agent's tool result holds before the client cuts it
    max_tokens: int = 8_000
