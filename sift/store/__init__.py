"""State behind one typed interface (`protocol.Store`), owned by the StoreActor: two backends
laid out alike (`sqlite/`, `postgres/`), what both decide the same way (`cache`, `batch`), and
which one runs (`backend`)."""
