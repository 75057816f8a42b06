"""The façade the web side and the CLI call: `Services` (the running actors and typed calls
into them), the one pipeline, envelopes, digests on the loop, batch targets."""
