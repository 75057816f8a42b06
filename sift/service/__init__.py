"""The service layer: what entry points call (here, the Firecrawl jobs and map)."""
