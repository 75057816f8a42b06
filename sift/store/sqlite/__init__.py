"""The SQLite backend of `Store` (the default): two files in the state directory, `store.py`
the store itself (`SqliteStore`, `open_store`), one query module per table (`content`, `pdf`,
`digest`, `batch`) on the connections of `connection`, the migrations in `schema`. What both
backends decide the same way is in `store/cache.py` and `store/batch.py`. Nothing is imported
here: `sift extract`'s cached path reads `schema` alone (`store/peek.py`)."""
