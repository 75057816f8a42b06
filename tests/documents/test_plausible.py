"""The plausibility check: real text of any language passes, garbage of every kind is named."""

from __future__ import annotations

import random

import pytest
from pypdf.generic import ArrayObject, DictionaryObject, NameObject, NumberObject

from sift.documents.pdf import plausible
from sift.documents.pdf.pypdf_engine import unmapped

JAPANESE = "".join(
    [
        "すべての人間は、生まれながらにして自由であり、",
        "かつ、尊厳と権利とについて平等である。",
        "ＵＮＥＳＣＯ と ASCII の text も混ざる。カタカナ、ひらがな、漢字。",
    ]
)
KOREAN = "".join(
    ["모든 인간은 태어날 때부터 자유로우며 ", "그 존엄과 권리에 있어 동등하다. Seoul 2024. "]
)
CHINESE = "".join(["人人生而自由，在尊严和权利上一律平等。", "他们赋有理性和良心。"])
PERSIAN = (
    "تمام افراد بشر آزاد به دنیا می‌آیند و از لحاظ حیثیت و حقوق با هم برابرند. همه دارای "
    "عقل و وجدان هستند و باید در برابر یکدیگر با روح برادری رفتار کنند. این متن از اعلامیه "
    "جهانی حقوق بشر است و برای آزمایش به کار می‌رود. "
)
ARABIC = (
    "يولد جميع الناس أحرارا متساوين في الكرامة والحقوق. وقد وهبوا عقلا وضميرا وعليهم أن "
    "يعامل بعضهم بعضا بروح الإخاء. هذا هو النص الذي كان في ذلك الكتاب من الناس إلى كل من "
    "قال النبي محمد ﷺ كلاما، وكان رسول الله ﷺ يقول. "
)
HEBREW = "כל בני האדם נולדו בני חורין ושווים בערכם ובזכויותיהם. כולם חוננו בתבונה ובמצפון. "
GOOD = {
    "english": "The quick brown fox jumps over the lazy dog. " * 20,
    "german": "Über die Brücke gehen Fußgänger mit großer Geduld, während Öl fließt. " * 10,
    "russian": "Все люди рождаются свободными и равными в своем достоинстве и правах. " * 10,
    "japanese": JAPANESE * 4,
    "korean": KOREAN * 5,
    "chinese": CHINESE * 5,
    "math": "Let α, β ∈ ℝ and f(x) = ∑ aₖ xᵏ with ε < δ; then ‖f‖ ≤ π · e for all x ∈ [0, 1]. " * 8,
    "bullets": ("\uf0b7 item with a Wingdings bullet in private use\n" * 3) + "plain words " * 200,
    "short": "Fig. 3",
    "persian": PERSIAN * 4,
    "arabic": ARABIC * 4,  # with a few ligatures (ﷺ) from the presentation-form block
    "hebrew": HEBREW * 5,
    "variables": "Let x and y be reals, and let a be fixed; if x < y then f is a map. " * 10,
    "blank": " \n\t ",
}


@pytest.mark.parametrize("name", sorted(GOOD))
def test_real_text_passes(name: str) -> None:
    assert plausible.check(GOOD[name]) is None


def test_glyph_ids_as_control_characters() -> None:
    garbage = "".join(chr(c) for c in [1, 2, 3, 4, 5, 5, 6, 7, 32, 8, 9, 10, 5, 11, 32] * 10)
    assert plausible.check(garbage) == plausible.CONTROL


def test_replacement_characters() -> None:
    assert plausible.check("text \ufffd\ufffd\ufffd and \ufffd more " * 5) == plausible.REPLACEMENT


def test_private_use_glyphs() -> None:
    assert plausible.check("".join(chr(0xE000 + i) for i in range(40))) == plausible.PRIVATE_USE


def test_cids_read_as_code_points_scatter_over_scripts() -> None:
    """A CJK font without a Unicode map: CIDs 1–8000 read as code points."""
    rng = random.Random(1)
    garbage = "".join(chr(rng.randrange(0x100, 0x1F00)) for _ in range(600))
    assert plausible.check(garbage) in (plausible.SCRIPT_MIX, plausible.CONTROL)
    letters = "".join(ch for ch in garbage if ch.isalpha())
    assert plausible.check(letters) == plausible.SCRIPT_MIX


def _font(**entries: object) -> DictionaryObject:
    d = DictionaryObject()
    for k, v in entries.items():
        d[NameObject("/" + k)] = v
    return d


def test_font_verdicts() -> None:
    identity = _font(Subtype=NameObject("/Type0"), Encoding=NameObject("/Identity-H"))
    assert unmapped(identity)
    mapped = _font(
        Subtype=NameObject("/Type0"), Encoding=NameObject("/Identity-H"), ToUnicode=NameObject("/x")
    )
    assert not unmapped(mapped)
    assert not unmapped(_font(Subtype=NameObject("/Type0"), Encoding=NameObject("/UniGB-UCS2-H")))
    assert not unmapped(_font(Subtype=NameObject("/Type1"), BaseFont=NameObject("/Helvetica")))
    assert not unmapped(
        _font(Subtype=NameObject("/TrueType"), Encoding=NameObject("/WinAnsiEncoding"))
    )
    odd = ArrayObject([NumberObject(1), *(NameObject(f"/g{i}") for i in range(20))])
    assert unmapped(_font(Subtype=NameObject("/Type3"), Encoding=_font(Differences=odd)))
    named = ArrayObject(
        [NumberObject(65), NameObject("/A"), NameObject("/B"), NameObject("/uni4E2D")]
    )
    assert not unmapped(_font(Subtype=NameObject("/Type1"), Encoding=_font(Differences=named)))


def _shaped(text: str) -> str:
    """Each Arabic-script letter as its isolated presentation form, where it has one."""
    import unicodedata

    forms = {}
    for cp in range(0xFE70, 0xFEFF):
        d = unicodedata.decomposition(chr(cp)).split()
        if len(d) == 2 and d[0] == "<isolated>":
            forms[chr(int(d[1], 16))] = chr(cp)
    return "".join(forms.get(ch, ch) for ch in text)


@pytest.mark.parametrize("text", [PERSIAN * 3, ARABIC * 3])
def test_right_to_left_damage(text: str) -> None:
    assert plausible.check(_shaped(text)) == plausible.PRESENTATION
    assert plausible.check(text[::-1]) == plausible.REVERSED  # written left to right
    reversed_words = " ".join(w[::-1] for w in text.split())  # words reversed, order kept
    assert plausible.check(reversed_words) == plausible.REVERSED
    assert plausible.check(" ".join(text.replace(" ", ""))) == plausible.ISOLATED


def test_letters_one_by_one_in_any_alphabet() -> None:
    assert plausible.check(" ".join("the quick brown fox jumps over " * 5)) == plausible.ISOLATED
    assert plausible.check(" ".join(CHINESE * 3)) is None  # a CJK character is a word


def test_badness_ranks_two_readings_of_a_page() -> None:
    good, shaped = PERSIAN * 3, _shaped(PERSIAN * 3)
    assert plausible.badness(good) < 1 <= plausible.badness(shaped)
    assert plausible.badness(good, plausible.UNMAPPED_FONT) >= 1  # the engine's own verdict
    assert plausible.badness("x\ufffd" * 50) > plausible.badness("xy\ufffd" * 50) > 1


def test_clean_strips_control_characters() -> None:
    raw = "a\x00b\x07c\td\r\ne\rf\x0cg\x1b\x85h\ud800"
    assert plausible.clean(raw) == "abc\td\ne\nf\ngh"
    assert plausible.clean("\x01\x02 \x03", garbled=True) == "\ufffd\ufffd \ufffd"


def test_plain_ascii_pages_get_the_same_verdicts_the_short_way() -> None:
    # pages of printable ASCII skip the regular expressions; the controls among ASCII do not
    assert plausible.clean("a\rb\r\nc\x0cd\x01e\x7f") == "a\nb\nc\nde"
    assert plausible.clean("tabs\tand\nnewlines stay\n") == "tabs\tand\nnewlines stay\n"
    words = "the quick brown fox jumps over the lazy dog " * 10
    assert plausible.check(words) is None
    assert plausible.check(words + "\x01\x02\x03" * 20) == plausible.CONTROL
    assert plausible.check(words + "\x0b" * 60) == plausible.CONTROL


def test_plain_ascii_letters_one_by_one_are_still_found() -> None:
    # the short way counts single characters at C speed; a run of them must not slip past it
    assert plausible.check(" ".join("abcdefghijklmnopqrstuvwxyz")) == plausible.ISOLATED
    assert plausible.check("a b c d e f g h i j k l m n o p q r s t u") == plausible.ISOLATED
    assert plausible.check("a b c d e f g h i j k l m n o p q r") is None  # under MIN_LETTERS
    assert plausible.check("word a b c d e f g h i j k l m n o p q r s t u v") == plausible.ISOLATED
