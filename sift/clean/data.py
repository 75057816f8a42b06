"""JSON and plain text: pretty-printed JSON, a `jq` program applied, text as it came.

jq programs are checked by `validate_jq` in the web handler before anything is fetched, so a
typo costs a 400 and no upstream request; a program that would read the environment, files,
modules or other inputs is refused there too (`sift.clean.jqcheck`). Running one happens in the
clean worker, because a jq program can loop forever or build a huge value; the worker's
deadline (`JQ_TIME` at most) and memory limit contain that (422, and the worker is replaced),
and `OUTPUT_CAP` stops one that merely answers too much.
"""

from __future__ import annotations

import json
from typing import Any

import jq

from sift.clean import jqcheck, kinds
from sift.clean.protocol import CleanResult
from sift.core.errors import BadRequest, Unprocessable

OUTPUT_CAP = 20_000_000  # characters of jq output
# Seconds a jq program may run (with `[clean] deadline` and its request's deadline: the
# smallest wins). On a 5 MB document, parsing and printing included, on a loaded 2-core
# machine (`python -m bench.jq_time`): selects, maps, group_by, sort_by 0.4–1.4 s; walks of
# the whole tree (`..`, `paths`) 1–3.6 s; `tostream` over every leaf, the slowest, 6–9 s.
JQ_TIME = 10.0
PROGRAM_CAP = 4096  # characters of a jq program
_DETAIL_CAP = 300


def _detail(exc: BaseException) -> str:
    """jq's message on one line, without its "jq: error" prefixes."""
    text = " ".join(str(exc).split())
    for prefix in ("jq: error:", "jq: error"):
        if text.startswith(prefix):
            text = text[len(prefix) :].strip()
    return text[:_DETAIL_CAP]


def validate_jq(program: str) -> None:
    """Raise BadRequest("invalid jq: …") unless `program` compiles and uses only the document.

    Takes well under 1 ms.
    """
    if len(program) > PROGRAM_CAP:
        raise BadRequest(f"invalid jq: program longer than {PROGRAM_CAP} characters")
    unreadable: jqcheck.Unreadable | None = None
    try:
        jqcheck.check(program)
    except jqcheck.Unreadable as exc:  # jq's own message is better, unless jq compiles it
        unreadable = exc
    except jqcheck.Refused as exc:
        raise _not_allowed(exc) from None
    try:
        jq.compile(program)
    except ValueError as exc:
        raise BadRequest(f"invalid jq: {_detail(exc)}") from None
    if unreadable is not None:
        raise _not_allowed(unreadable)


def _not_allowed(refused: jqcheck.Refused) -> BadRequest:
    return BadRequest(
        f"invalid jq: {refused} is not allowed (sift's jq reads the fetched document only: "
        "no environment, files, modules or other inputs)"
    )


def jq_over_time(seconds: float) -> Unprocessable:
    """The 422 of a jq program stopped at its time bound."""
    return Unprocessable(f"jq program over its time bound (stopped after {seconds:g} s)")


def jq_out_of_time_waiting() -> Unprocessable:
    """The 422 of a jq program whose request ran out of time while it waited for a worker:
    a retry would wait and time out again, so it is answered as one that ran."""
    return Unprocessable(
        "jq program over its time bound (its request's deadline passed while it waited "
        "for a clean worker)"
    )


def pretty(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False)


def clean_json(body: bytes, content_type: str, program: str | None, input_cap: int) -> CleanResult:
    """Pretty-printed JSON, or the output of `program` (one pretty JSON value per line group).

    Without a program a body that is not valid JSON (or is over `input_cap`) is returned as
    text: a server that mislabels its response should not cost the agent its content.

    Raises:
        BadRequest: `program` does not compile.
        Unprocessable: with a program, the body is not valid JSON, is over `input_cap`, jq
            fails on it, or its output is over OUTPUT_CAP.
    """
    if program is not None:
        validate_jq(program)
    if len(body) > input_cap:
        if program is not None:
            cap_mb = input_cap / 1_000_000
            raise Unprocessable(f"response too large for jq (over {cap_mb:g} MB)")
        return clean_text(body, content_type, input_cap)
    text = kinds.decode(body, content_type)
    try:
        value = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as exc:
        if program is None:
            return CleanResult(title="", text=text)
        if isinstance(exc, RecursionError):
            raise Unprocessable("response JSON is nested too deeply for jq") from None
        raise Unprocessable(f"response is not valid JSON: {_detail(exc)}") from None
    if program is None:
        return CleanResult(title="", text=pretty(value))
    return CleanResult(title="", text=run_jq(program, value))


# The jq library runs `halt_error` as `halt` (no output, no error); jq itself ends with the
# error there: defined as `error`, it fails as the jq command line does (with its message).
_HALT_ERROR = "def halt_error: error(.); def halt_error($code): error(.); "


def run_jq(program: str, value: Any) -> str:
    """Every output of `program` on `value`, pretty-printed, joined by newlines."""
    parts: list[str] = []
    size = 0
    try:
        for out in jq.compile(_HALT_ERROR + program).input_value(value):
            part = pretty(out)
            size += len(part) + 1
            if size > OUTPUT_CAP:
                raise Unprocessable(f"jq output too large (over {OUTPUT_CAP:,} characters)")
            parts.append(part)
    except ValueError as exc:
        raise Unprocessable(f"jq failed: {_detail(exc)}") from None
    return "\n".join(parts)


def clean_text(body: bytes, content_type: str, input_cap: int) -> CleanResult:
    """Text as it came (decoded, line ends normalised), cut at `input_cap` bytes."""
    text = kinds.decode(body[:input_cap], content_type)
    return CleanResult(title="", text=text.replace("\r\n", "\n"))
