"""Shared cast for the evaluator-flow browser tests (issue 14): a study whose
questions carry LaTeX (real MMLU-Pro questions: Wang et al., 2024,
TIGER-AI-Lab/MMLU-Pro, Apache-2.0, by ``question_id``), keyboard helpers and
a way to hand a Django session to the browser."""
from __future__ import annotations

from django.test import Client
from playwright.sync_api import Page

from annotate.models import Question, Study
from annotate.studies.selectors.judging_tokens import PAIR, QUESTION, judging_token_value
from tests.annotate.factories import make_catalog, make_study

LATEX_QUESTIONS = [
    (  # 9235: delimited math, options too
        "How much work is required to turn an electric dipole $180^{\\circ}$ in a uniform electric field of "
        "magnitude $E=46.0 \\mathrm{~N} / \\mathrm{C}$ if the dipole moment has a magnitude of "
        "$p=3.02 \\times$ $10^{-25} \\mathrm{C} \\cdot \\mathrm{m}$ and the initial angle is $64^{\\circ} ?$\n",
        ["$2.05 \\times 10^{-23} \\mathrm{~J}$", "$7.32 \\times 10^{-23} \\mathrm{~J}$",
         "$2.44 \\times 10^{-23} \\mathrm{~J}$", "$5.50 \\times 10^{-23} \\mathrm{~J}$"],
    ),
    (  # 3861: raw LaTeX without delimiters
        "When 10.0 g of silicon dust, Si, is exploded with 100.0 g of oxygen, O_2, forming silicon dioxide, SiO_2, "
        "how many grams of O_2 remain uncombined? The reaction equation is Si + O_2 \\rightarrow SiO_2 .",
        ["100 g", "88.5 g", "82.0 g", "92.5 g"],
    ),
    (  # 3544
        "An electron confined to a metallic nanoparticle is modelled as a particle in a one-dimensional box of "
        "length $L$. If the electron is in the state $n=1$, calculate the probability of finding it in the "
        "following regions: $0 \\leq x \\leq \\frac{1}{2} L$.",
        ["$\\frac{1}{4}$", "$\\frac{7}{8}$", "$\\frac{1}{8}$", "$\\frac{3}{4}$"],
    ),
    (  # 3647: display math, then (ours) a code block and a long tail that scrolls inside the box
        "Evaluate the series\n$$\nS=\\sum_{n=0}^{\\infty} \\frac{1}{3^n}\n$$\n\n"
        "A student checks it with:\n\n```\ns = sum(1 / 3**n for n in range(60))\n```\n\n"
        + "\n\n".join(f"Note {k}: read the whole question before you judge it." for k in range(1, 41)),
        ["2 / 3", "1 / 2", "1 / 3", "3"],
    ),
]


def latex_study(*, n_pairs: int = 3, name: str = "Physics pairs") -> Study:
    """One subject, four questions with math (six possible pairs)."""
    catalog = make_catalog(subjects=("Physics",), per_subject=4)
    for question, (text, options) in zip(Question.objects.filter(dataset=catalog.dataset).order_by("pk"),
                                          LATEX_QUESTIONS, strict=True):
        question.text, question.options = text, options
        question.save(update_fields=["text", "options"])
    return make_study(catalog, n_pairs=n_pairs, seed=7, name=name)


def log_in_as(page: Page, base_url: str, user) -> None:
    """Give the browser a session of ``user`` (no login form: the form has its own test)."""
    client = Client()
    client.force_login(user)
    page.context.add_cookies([{"name": "sessionid", "value": client.cookies["sessionid"].value, "url": base_url}])


FOCUS_RING = """() => {
  const el = document.activeElement;
  if (!el || el === document.body) return null;
  const style = getComputedStyle(el);
  return {id: el.id, tag: el.tagName, name: el.getAttribute('name'), value: el.getAttribute('value'),
          outline: style.outlineStyle, width: parseFloat(style.outlineWidth), visible: el.matches(':focus-visible')};
}"""


def focused(page: Page) -> dict | None:
    return page.evaluate(FOCUS_RING)


def tab_to(page: Page, matches, *, limit: int = 40) -> dict:
    """Press Tab until the focused element satisfies ``matches(info)``; every
    element on the way must show a focus ring (a 2px+ outline, :focus-visible)."""
    for _ in range(limit):
        page.keyboard.press("Tab")
        info = focused(page)
        if info is None:
            continue
        assert info["visible"] and info["outline"] != "none" and info["width"] >= 2, f"no visible focus: {info}"
        if matches(info):
            return info
    raise AssertionError(f"Tab never reached the element ({limit} presses)")


def math_done(page: Page) -> None:
    page.wait_for_selector("html[data-math=done]", state="attached")


def id_on_screen(page: Page, participation, field: str = "pair") -> int | None:
    """The database id behind the judging form's ``pair`` (or ``left``) token, as
    ``participation``'s evaluator sees it."""
    token = page.locator(f"input[name={field}]").get_attribute("value")
    return judging_token_value(participation=participation, token=token, kind=PAIR if field == "pair" else QUESTION)
