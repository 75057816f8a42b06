"""`clean(task)`: one entry point that picks the cleaner for a task's kind.

It runs inside the clean worker process; tests and the benchmark call it directly. Expected
failures come back as `CleanResult.error` rather than exceptions, so that the worker loop
stays trivial and the parent turns them back into the same SiftError.
"""

from __future__ import annotations

from sift.clean.data import clean_json, clean_text
from sift.clean.html import clean_html
from sift.clean.protocol import CleanResult, CleanTask, error_result
from sift.clean.view import clean_view
from sift.core.errors import BadRequest, SiftError, Unprocessable


def clean(task: CleanTask) -> CleanResult:
    """The cleaned document for `task`, or a CleanResult carrying an expected error.

    A jq program is honoured for JSON only; other kinds with `jq` set are a 400.
    """
    try:
        if task.jq is not None and task.kind != "json":
            raise BadRequest(f"`jq` needs a JSON response; this one is {task.kind}")
        if task.kind == "html":
            if task.whole_page or task.include_tags or task.exclude_tags or task.want_html:
                return clean_view(task)
            return clean_html(task.body, task.content_type, task.url, task.input_cap)
        if task.kind == "json":
            return clean_json(task.body, task.content_type, task.jq, task.input_cap)
        if task.kind == "text":
            return clean_text(task.body, task.content_type, task.input_cap)
        raise SiftError(f"internal error: no cleaner for kind {task.kind!r}")
    except SiftError as exc:
        return error_result(exc)
    except MemoryError:
        return error_result(Unprocessable("cleaning ran out of memory"))
