"""One SQLite transaction, ended so that the error that matters is the one raised.

SQLite rolls a whole transaction back by itself on some errors (SQLITE_FULL always, IOERR,
BUSY and NOMEM sometimes). A ROLLBACK after that fails with "no transaction is active", a
plain SQLITE_ERROR that would hide the real cause: a full disk reported as "database error".
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator


def undo(db: sqlite3.Connection) -> None:
    """Roll back the open transaction, if SQLite has not already; never raises."""
    with contextlib.suppress(sqlite3.Error):
        if db.in_transaction:
            db.execute("ROLLBACK")


@contextlib.contextmanager
def transaction(db: sqlite3.Connection, begin: str = "BEGIN") -> Iterator[sqlite3.Connection]:
    """`begin` … COMMIT; on any error the transaction is undone and that error raised."""
    db.execute(begin)
    try:
        yield db
        db.execute("COMMIT")
    except BaseException:
        undo(db)
        raise
