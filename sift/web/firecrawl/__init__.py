"""The Firecrawl API as the firecrawl-py SDK calls it: every handler on `base.FirecrawlHandler`
(sift's one error shape; an upstream failure is 500). The routes are in `sift.web.app`."""
