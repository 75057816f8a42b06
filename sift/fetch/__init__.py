"""Fetching a URL safely: the guard, one pycurl multi driven step by step, one transfer."""
