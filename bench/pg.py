"""The throwaway PostgreSQL cluster of tests/support/pg.py for the scenarios that need one: a
context manager, and `NoPostgres` (with the reason) where it cannot run here, for a skipped row."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


class NoPostgres(Exception):
    pass


@contextmanager
def cluster() -> Iterator[Any]:
    """A running cluster (`tests.support.pg.Cluster`: `create()` makes a fresh database, its URL),
    stopped and removed on exit."""
    import pytest

    from tests.support.pg import start_cluster

    clusters = start_cluster()
    try:
        found = next(clusters)
    except pytest.skip.Exception as exc:
        raise NoPostgres(str(exc)) from None
    try:
        yield found
    finally:
        clusters.close()
