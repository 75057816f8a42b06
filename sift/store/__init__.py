"""State behind one typed interface (`protocol.Store`), owned by the StoreActor: the SQLite
backend (`sqlite`), its queries in plain classes by table, the schema's migrations."""
