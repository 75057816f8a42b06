"""Digests: answer a question about a document, citing its pages, with or without a model.

Plain modules, testable without threads: `chunks` (page-aware chunking), `bm25` (lexical
ranking), `rank` (a document's index, cosine, fusion), `extractive` (the answer without a
model), `prompt` and `llm` (the OpenAI-compatible model). The entry point the pipeline
calls, on the event loop, is `sift.service.answer.digest`.
"""
