"""Structured extraction: a document in, JSON out, checked against the caller's JSON schema.

Firecrawl's `json` format and its `extract` call ask a model for data (a `prompt`, a JSON
`schema`, or both). sift asks the configured OpenAI-compatible model (`[digest] endpoint`)
and validates the answer with `jsonschema` (any draft the schema names; 2020-12 otherwise).
An answer that is not JSON or breaks the schema is asked for once more with the reason; a
second failure is a 422 that says what is wrong. No model configured is a 400 that says so:
an extractive digest can quote passages, but it cannot fill a schema.
"""

from __future__ import annotations

import json
import re
from typing import Any

import jsonschema

from sift.core.config import DigestConfig
from sift.core.errors import BadRequest, Unprocessable, UpstreamError
from sift.digest import llm
from sift.digest.chunks import estimate_tokens

NO_MODEL = (
    "structured extraction (the `json` format, `extract`) needs a model: set `[digest] "
    "endpoint` (and `model`) in sift's config to an OpenAI-compatible chat endpoint"
)
SYSTEM = (
    "You extract data from one document. Answer with one JSON value and nothing else: no "
    "prose, no code fences. Use only what the document says; use null where it is silent."
)
_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.DOTALL)
MAX_ANSWER_TOKENS = 4096


def check_request(cfg: DigestConfig, prompt: Any, schema: Any) -> None:
    """Refuse up front what cannot work: no model, nothing asked, a schema that is not one."""
    if not cfg.endpoint:
        raise BadRequest(NO_MODEL)
    if prompt is not None and not isinstance(prompt, str):
        raise BadRequest("invalid request: `prompt` must be a string")
    if not prompt and schema is None:
        raise BadRequest("invalid request: give a `prompt`, a JSON `schema`, or both")
    if schema is not None:
        if not isinstance(schema, dict):
            raise BadRequest("invalid request: `schema` must be a JSON schema object")
        try:
            jsonschema.validators.validator_for(schema).check_schema(schema)
        except jsonschema.SchemaError as exc:
            why = f"invalid request: `schema` is not a valid JSON schema: {exc.message}"
            raise BadRequest(why) from None


def _decode(text: str) -> Any:
    m = _FENCE.match(text.strip())
    return json.loads(m.group(1) if m else text)


def _problem(value: Any, schema: dict[str, Any] | None) -> str | None:
    """Why `value` breaks `schema` (one line), or None."""
    if schema is None:
        return None
    validator = jsonschema.validators.validator_for(schema)(schema)
    error = jsonschema.exceptions.best_match(validator.iter_errors(value))
    if error is None:
        return None
    where = "/".join(str(p) for p in error.absolute_path) or "the top level"
    return f"at {where}: {error.message}"[:300]


def _user(document: str, prompt: str | None, schema: dict[str, Any] | None, room: int) -> str:
    ask = [f"Instructions: {prompt}"] if prompt else []
    if schema is not None:
        ask.append("The answer must be valid against this JSON schema:\n" + json.dumps(schema))
    tail = "\n\n".join(ask)
    keep = max(1000, 4 * (room - estimate_tokens(tail) - estimate_tokens(SYSTEM) - 100))
    return f"Document:\n{document[:keep]}\n\n{tail}"


async def extract(
    cfg: DigestConfig, document: str, prompt: str | None, schema: dict[str, Any] | None
) -> Any:
    """The data the model finds in `document`, valid against `schema` when one is given.

    Raises:
        BadRequest: no model is configured.
        UpstreamError: the model endpoint failed.
        Unprocessable: twice, the answer was not JSON or did not match the schema.
    """
    if not cfg.endpoint:
        raise BadRequest(NO_MODEL)
    user = _user(document, prompt, schema, cfg.max_input_tokens)
    why = ""
    for _ in range(2):
        try:
            done = await llm.chat(
                cfg.endpoint,
                cfg.model,
                SYSTEM,
                user + why,
                api_key_env=cfg.api_key_env,
                timeout=cfg.timeout,
                max_tokens=MAX_ANSWER_TOKENS,
            )
        except llm.ModelError as exc:
            raise UpstreamError(f"model: {exc}") from None
        try:
            value = _decode(done.text)
        except ValueError:
            problem: str | None = "the answer is not JSON"
        else:
            problem = _problem(value, schema)
            if problem is None:
                return value
            problem = "the answer does not match the schema " + problem
        why = f"\n\nYour previous answer was refused: {problem}. Answer again with JSON only."
    raise Unprocessable(f"the model's answer could not be used: {problem}")
