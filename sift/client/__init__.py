"""An HTTP client of a running sift: server and token discovery, requests."""
