"""sift: a self-hosted web-fetch service for AI agents."""

__version__ = "0.1.0"
