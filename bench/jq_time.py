"""How long typical jq programs take on documents at the fetch cap (`[fetch] max_body`, 5 MB),
as the clean worker runs them (`clean_json`: the JSON parsed, the program run, the output
printed): the figures `JQ_TIME` (sift/clean/data.py) is chosen from.

    python -m bench.jq_time      # one line per document and program: best of two, seconds
"""

from __future__ import annotations

import json
import random
import time

from sift.clean.data import clean_json
from sift.core.errors import SiftError

CAP = 5_000_000
PROGRAMS = [
    ".",
    ".items | length",
    ".items[] | select(.x > 3)",
    ".items | map(.a)",
    ".items | group_by(.group) | map({g: .[0].group, n: length})",
    ".items | sort_by(.a) | .[0:10]",
    ".items | unique_by(.x) | length",
    '.items | map(select(.tags | index("t3"))) | length',
    "[..|numbers] | add",
    "[.. | strings] | length",
    "[paths] | length",
    "tostream | select(length == 2) | .[1]",
]


def records(rng: random.Random, n: int) -> list[dict[str, object]]:
    return [
        {
            "id": i,
            "x": rng.randint(0, 9),
            "a": rng.random(),
            "name": f"item-{i}",
            "group": f"g{rng.randint(0, 50)}",
            "tags": [f"t{rng.randint(0, 20)}" for _ in range(3)],
            "nested": {"b": rng.randint(0, 1000), "c": [rng.random(), rng.random()]},
        }
        for i in range(n)
    ]


def under_cap(make: object) -> bytes:
    """The largest document `make(n)` (n items) that stays under the cap."""
    assert callable(make)
    n = 40_000
    while len(body := json.dumps({"items": make(n)}).encode()) > CAP:
        n = int(n * 0.97)
    return body


def main() -> None:
    rng = random.Random(7)
    deep = [{"level": {"more": {"list": [{"k": j, "v": "x" * 20} for j in range(40)]}}}]
    documents = {
        "records": under_cap(lambda n: records(rng, n)),
        "nested": under_cap(lambda n: deep * (n // 12)),
    }
    for name, body in documents.items():
        print(f"{name}: {len(body) / 1e6:.2f} MB")
        for program in PROGRAMS:
            took, out = [], ""
            for _ in range(2):
                started = time.perf_counter()
                try:
                    out = f"{len(clean_json(body, 'application/json', program, CAP).text):,} out"
                except SiftError as exc:
                    out = exc.message
                took.append(time.perf_counter() - started)
            print(f"  {min(took):5.2f} s  {program}  ({out})")


if __name__ == "__main__":
    main()
