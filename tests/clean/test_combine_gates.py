"""The page gates choose sift's answer (`combine.chosen`, issue 34): the first says whether the
combination replaces trafilatura's answer at all; the next, at a lower block threshold, whether
a more inclusive answer gains more. The gates here predict constant gains (a baseline and no
trees), so each case is the decision alone, on the candidates of a real page cleaned by sift's
own clean path; the block probabilities are set so that the thresholds keep different blocks."""

from __future__ import annotations

import numpy as np
import pytest

from sift.clean import combine, gate, model
from sift.clean.dispatch import clean
from sift.clean.protocol import CleanTask

_ITEM = "<li><a href='/p/{n}'>Walking boots model {n}</a> waterproof leather, size 36 to 47</li>"
PAGE = (
    "<html><head><title>Boots</title></head><body><nav><a href='/'>Home</a></nav><main>"
    "<h1>Walking boots</h1><p>Our walking boots are made in Portugal from full-grain leather, "
    "stitched by hand and resoled for free for as long as you own them, whatever the trail."
    "</p><p>Every pair is tested on the coast path for a week before it is sold, and comes "
    "with spare laces and a tin of wax that keeps the leather supple through the winter.</p>"
    f"<ul>{''.join(_ITEM.format(n=n) for n in range(12))}</ul></main>"
    "<footer>© Boots Ltd, 1 High Street</footer></body></html>"
)


def _gate(threshold: float, gain: float) -> dict[str, object]:
    return {
        "features": list(gate.GATE_FEATURES),
        "threshold": threshold,
        "baseline": gain,
        "depth": 1,
        "trees": [],
    }


def _model(*gates: tuple[float, float]) -> model.Trees:
    spec = {"features": [], "threshold": 0.5, "baseline": 0.0, "depth": 1, "trees": []}
    return model.Trees({**spec, "gates": [_gate(t, g) for t, g in gates]})


CANDIDATES_TASK = CleanTask(
    kind="html", body=PAGE.encode(), content_type="text/html", url="http://shop.test/boots"
)


def _probability(tokens: list[str]) -> float:
    """The list items unsure (kept at 0.35, not at 0.5), the first paragraph sure, the rest
    (the second paragraph too, which trafilatura keeps) dropped."""
    if "model" in tokens and "waterproof" in tokens:
        return 0.4
    return 0.9 if "resoled" in tokens else 0.1


@pytest.fixture(scope="module")
def page() -> tuple[combine.Candidates, np.ndarray]:
    combine.TAP = []
    try:
        assert clean(CANDIDATES_TASK).error is None
        (c,) = combine.TAP
    finally:
        combine.TAP = None
    return c, np.array([_probability(t) for t in c.tokens])


def test_the_thresholds_give_three_different_answers(page) -> None:
    c, proba = page
    strict = combine.answer(c, [bool(p) for p in proba >= 0.5])
    inclusive = combine.answer(c, [bool(p) for p in proba >= 0.35])
    assert "resoled for free" in strict and "Walking boots model 7" not in strict
    assert "Walking boots model 7" in inclusive and "resoled for free" in inclusive
    assert "coast path" in c.markdown and "coast path" not in inclusive
    assert len({strict, inclusive, c.markdown}) == 3


@pytest.mark.parametrize(
    ("gains", "expected"),
    [
        ((-0.1, 0.5), "trafilatura"),  # the first gate sees no gain: the second is not asked
        ((0.0, 0.5), "trafilatura"),
        ((0.2, 0.1), "strict"),  # the inclusive answer gains less
        ((0.1, 0.2), "inclusive"),
        ((0.1, -0.3), "strict"),
    ],
)
def test_the_gates_choose_the_answer(page, gains: tuple[float, float], expected: str) -> None:
    c, proba = page
    answers = {
        "trafilatura": c.markdown,
        "strict": combine.answer(c, [bool(p) for p in proba >= 0.5]),
        "inclusive": combine.answer(c, [bool(p) for p in proba >= 0.35]),
    }
    trees = _model((0.5, gains[0]), (0.35, gains[1]))
    assert combine.chosen(trees, c, proba) == answers[expected]


def test_a_model_without_gates_answers_with_the_combination(page) -> None:
    c, proba = page
    assert combine.chosen(_model(), c, proba) == combine.answer(c, [bool(p) for p in proba >= 0.5])


def test_the_shipped_model_has_a_gate_per_threshold() -> None:
    shipped = model.shipped()
    assert [g.threshold for g in shipped.gates] == [shipped.threshold, 0.35]
