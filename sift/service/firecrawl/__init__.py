"""Firecrawl's API on sift's pipeline and batch workers: a scraped document in Firecrawl's
shape and a scrape or crawl target (`scrape`), a site's URLs (`site_map`), an extract job's
target (`extract`). The fetch path itself never imports this package."""
