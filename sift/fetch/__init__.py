"""Fetching the web: pure helpers of what a fetch reads (robots.txt, sitemaps, crawl scope)."""
