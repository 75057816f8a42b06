"""`python -m sift` is the `sift` command (the PDF child runs this way too)."""

from sift.cli.main import main

if __name__ == "__main__":
    raise SystemExit(main())
