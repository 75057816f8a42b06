"""A Firecrawl job's `webhook` as its start reads it: parsed, and refused up front when the
guard refuses its URL (nothing is connected to), before the job exists."""

from __future__ import annotations

from typing import Any

from sift.batch import webhook
from sift.batch.webhook import Hook


async def asked(svc: Any, body: dict[str, Any]) -> Hook | None:
    """The request's webhook, checked; None without one. 400 when malformed or its name does
    not resolve, 403 when the guard refuses it."""
    hook = webhook.parse(body.get("webhook"))
    if hook is not None:
        await svc.webhooks.check(hook)
    return hook
