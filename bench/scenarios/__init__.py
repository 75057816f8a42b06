"""The scenarios, in the order they run. Each module has NAME, TITLE and `run(ctx)`, which
returns rows for the table."""

from __future__ import annotations

from types import ModuleType

from bench.scenarios import (
    batch,
    cached,
    cold,
    heldout,
    idle,
    load,
    ocr,
    office,
    pdf_cached,
    pdf_cold,
    pdf_extract,
    quality,
    read,
    render,
    replicas,
    scrape,
    store_pg,
    structure,
    tokens,
    wcxb,
)

ALL: list[ModuleType] = [
    cold,
    cached,
    scrape,
    pdf_cold,
    pdf_cached,
    pdf_extract,
    ocr,
    office,
    batch,
    quality,
    wcxb,
    heldout,
    structure,
    load,
    store_pg,
    render,
    idle,
    replicas,
    tokens,
    read,
]
BY_NAME = {m.NAME: m for m in ALL}
