"""The browser path: headless Chromium in a child, every request through a guarded proxy."""
