"""The HTTP surface: Tornado handlers, one module per endpoint family."""
