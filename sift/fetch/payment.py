"""A site that asks to be paid: an upstream `402` carrying a price — Cloudflare pay-per-crawl's
`crawler-price` (`USD 0.01`) or x402's `PAYMENT-REQUIRED` (base64 JSON, its `accepts`) — is a
refusal, not a page. sift never pays: the answer names the price in a structured field
(`payment_required`) and carries no text of the body; nothing of it is cleaned or cached.

It refuses as the guard and robots.txt refuse (DESIGN §2: 403 `blocked: …` on sift's routes,
400 on Firecrawl's, 422 for a batch target), with `upstream_status` 402. The header values are
the site's: each is cut to a short run of printable ASCII before it reaches an answer.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Mapping
from typing import Any

from sift.core.errors import Blocked

_FIELD_CAP = 64
_UNSAFE = re.compile(r"[^\x21-\x7e ]+")  # printable ASCII and spaces only: one line, no markup


class PaymentRequired(Blocked):
    """The site asked for payment (402) and named a price; `payment_required` says what."""

    outcome = "payment_required"

    def __init__(self, host: str, payment: dict[str, str]) -> None:
        price = " ".join(v for v in (payment.get("price"), payment.get("currency")) if v)
        what = f"{payment['scheme']}: {price}" if price else payment["scheme"]
        super().__init__(f"{host} asks to be paid to be read (HTTP 402, {what}); sift never pays")
        self.upstream_status = 402
        self.payment_required = payment

    def to_body(self) -> dict[str, object]:
        return {**super().to_body(), "payment_required": self.payment_required}


def refusal(status: int, headers: Mapping[str, str], host: str) -> PaymentRequired | None:
    """The refusal of a `402` that names a price (headers by lowercase name), else None: a 402
    without one is an upstream error like any other."""
    if status != 402:
        return None
    if "crawler-price" in headers:
        return PaymentRequired(host, _crawler_price(headers["crawler-price"]))
    if "payment-required" in headers:
        return PaymentRequired(host, _x402(headers["payment-required"]))
    return None


def _clean(value: Any) -> str:
    return " ".join(_UNSAFE.sub(" ", str(value)).split())[:_FIELD_CAP]


def _crawler_price(value: str) -> dict[str, str]:
    """Cloudflare pay-per-crawl: `crawler-price: USD 0.01`."""
    currency, _, price = value.strip().partition(" ")
    if not price:
        currency, price = "", currency
    return {"price": _clean(price), "currency": _clean(currency), "scheme": "pay-per-crawl"}


def _x402(value: str) -> dict[str, str]:
    """x402: `PAYMENT-REQUIRED` is base64 JSON whose `accepts` lists the ways to pay; the
    first is named (its amount in the asset's smallest unit, as x402 writes it)."""
    out = {"price": "", "currency": "", "scheme": "x402"}
    try:
        data = json.loads(base64.b64decode(value.strip(), validate=False))
        offer = data["accepts"][0]
    except (ValueError, binascii.Error, KeyError, IndexError, TypeError):
        return out
    if not isinstance(offer, dict):
        return out
    extra = offer.get("extra")
    extra = extra if isinstance(extra, dict) else {}
    out["price"] = _clean(offer.get("amount") or offer.get("maxAmountRequired") or "")
    out["currency"] = _clean(extra.get("name") or offer.get("asset") or "")
    if offer.get("network"):
        out["network"] = _clean(offer["network"])
    return out
