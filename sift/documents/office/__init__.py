"""Office files and e-books: the conversion child, its guard and converters, and its runner."""
