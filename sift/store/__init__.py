"""State in SQLite: one connection owned by the StoreActor; queries live in plain classes."""
