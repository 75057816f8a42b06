"""Helpers the tests share: servers, fakes, generated documents, polling. No test module
imports another; what two tests need lives here."""
