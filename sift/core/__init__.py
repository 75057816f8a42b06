"""What every layer shares and that imports nothing else of sift: data types, errors, config,
callers, metrics, the request struct, the reply protocol."""
