"""The `sift` command (`main`), by job: `fetch` (fetch and extract in-process), `batch`."""

EXIT_ERROR = 1
EXIT_USAGE = 2
