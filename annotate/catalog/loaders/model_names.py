"""Guess a language model's family, access and size from its name.

Used only when a models file leaves these blank (or there is no models file);
the loaders then list the guessed fields in ``metadata["inferred"]`` so that
nobody mistakes a guess for a fact.

The rules are a short, ordered table of name patterns (first match wins):
known proprietary API families (GPT, Claude, Gemini, ...) are ``proprietary``,
known families with downloadable weights (Llama, Mistral, Mixtral, Qwen, Yi,
Phi, DeepSeek, Gemma, Jamba, ...) are ``open_weight``, anything else is
``unknown`` with the leading name token as its family. The parameter count is
read from a ``<number>B`` token (``Llama-2-13b-hf`` -> 13.0); a
mixture-of-experts token such as ``8x7B`` gives no count (the total is not
8 x 7) but is kept as ``parameters_label``.

This module never touches the database.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from annotate.catalog.loaders.names import clean_name

OPEN_WEIGHT = "open_weight"
PROPRIETARY = "proprietary"
UNKNOWN = "unknown"

# (pattern on the normalised name, family, access); first match wins, so
# special cases come before their family's general rule.
_FAMILIES: tuple[tuple[str, str, str], ...] = (
    (r"^gpt-?oss", "GPT-OSS", OPEN_WEIGHT),
    (r"^gpt-?j\b", "GPT-J", OPEN_WEIGHT),
    (r"^gpt-?neo", "GPT-Neo", OPEN_WEIGHT),
    (r"^gpt-?2\b", "GPT-2", OPEN_WEIGHT),
    (r"^(chat)?gpt", "GPT", PROPRIETARY),
    (r"^o[1-9](-|$)", "GPT", PROPRIETARY),
    (r"^claude", "Claude", PROPRIETARY),
    (r"^gemini", "Gemini", PROPRIETARY),
    (r"^(palm|bard)", "PaLM", PROPRIETARY),
    (r"^grok", "Grok", PROPRIETARY),
    (r"^reka", "Reka", PROPRIETARY),
    # Mistral Large/Medium were API models when first released.
    (r"^mistral-(medium|large|small-latest)", "Mistral", PROPRIETARY),
    (r"^qwen-?(max|plus|turbo)", "Qwen", PROPRIETARY),
    (r"^yi-(large|medium|spark|lightning)", "Yi", PROPRIETARY),
    (r"^command(-light|-nightly)?$", "Command", PROPRIETARY),
    (r"^(code-?)?llama", "Llama", OPEN_WEIGHT),
    (r"^mixtral", "Mixtral", OPEN_WEIGHT),
    (r"^mathstral", "Mathstral", OPEN_WEIGHT),
    (r"^codestral", "Codestral", OPEN_WEIGHT),
    (r"^mistral", "Mistral", OPEN_WEIGHT),
    (r"^qwen", "Qwen", OPEN_WEIGHT),
    (r"^yi-", "Yi", OPEN_WEIGHT),
    (r"^phi-?\d", "Phi", OPEN_WEIGHT),
    (r"^deepseek", "DeepSeek", OPEN_WEIGHT),
    (r"^gemma", "Gemma", OPEN_WEIGHT),
    (r"^jamba", "Jamba", OPEN_WEIGHT),
    (r"^(c4ai-)?command-r", "Command R", OPEN_WEIGHT),
    (r"^falcon", "Falcon", OPEN_WEIGHT),
    (r"^olmo", "OLMo", OPEN_WEIGHT),
    (r"^internlm", "InternLM", OPEN_WEIGHT),
    (r"^baichuan", "Baichuan", OPEN_WEIGHT),
    (r"^(chat)?glm", "GLM", OPEN_WEIGHT),
    (r"^starcoder", "StarCoder", OPEN_WEIGHT),
    (r"^vicuna", "Vicuna", OPEN_WEIGHT),
    (r"^zephyr", "Zephyr", OPEN_WEIGHT),
    (r"^solar", "SOLAR", OPEN_WEIGHT),
    (r"^dbrx", "DBRX", OPEN_WEIGHT),
    (r"^granite", "Granite", OPEN_WEIGHT),
    (r"^nemotron", "Nemotron", OPEN_WEIGHT),
    (r"^smollm", "SmolLM", OPEN_WEIGHT),
    (r"^pythia", "Pythia", OPEN_WEIGHT),
    (r"^bloom", "BLOOM", OPEN_WEIGHT),
)
_COMPILED = tuple((re.compile(p), family, access) for p, family, access in _FAMILIES)
# Organisation prefixes that come before the family token ("Meta-Llama-3-8B",
# "meta-llama/Llama-3-8B", "mistralai/Mistral-7B-v0.1").
# The prefix is stripped only when a name follows it ("Qwen-1.5-72B" keeps "Qwen").
_ORG_PREFIX = re.compile(
    r"^(meta|microsoft|google|mistralai|qwen|01-ai|ai21|cohere|tiiuae)[-_](?=[a-z])", re.IGNORECASE
)
_SIZE = re.compile(r"(?<![\dx.])(\d+(?:\.\d+)?)\s*b(?![a-z])", re.IGNORECASE)
_MOE = re.compile(r"(?<![\d.])(\d+)x(\d+(?:\.\d+)?)b(?![a-z])", re.IGNORECASE)
_LEADING_TOKEN = re.compile(r"[A-Za-z]+")


@dataclass(frozen=True)
class ModelNameGuess:
    """What a model's name suggests; every field is a guess.

    Attributes
    ----------
    family : str
        Canonical family name ("Llama", "GPT", ...); for an unrecognised name,
        its leading alphabetic token as written; "" when the name has none.
    access : str
        "open_weight", "proprietary" or "unknown" (unrecognised family).
    parameters_b : float or None
        Parameter count in billions read from a ``<number>B`` token; None when
        the name has none or only a mixture-of-experts token.
    parameters_label : str or None
        A mixture-of-experts size token as written ("8x7B"), else None.
    """

    family: str
    access: str
    parameters_b: float | None
    parameters_label: str | None


def infer_from_model_name(name: str) -> ModelNameGuess:
    """Guess family, access and parameter count from a model name.

    Parameters
    ----------
    name : str
        The model name as it appears in a response file, e.g.
        ``"Meta-Llama-3_1-70B-Instruct"`` or ``"gpt-4o(2024-05)"``. An
        organisation prefix (``"meta-llama/"``, ``"Meta-"``) is ignored.

    Returns
    -------
    ModelNameGuess

    Raises
    ------
    ValueError
        If ``name`` is not a non-blank string.

    Examples
    --------
    >>> infer_from_model_name("Llama-2-13b-hf")
    ModelNameGuess(family='Llama', access='open_weight', parameters_b=13.0, parameters_label=None)
    >>> infer_from_model_name("gemini-1.5-pro-002").access
    'proprietary'
    """
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"name must be a non-blank string, got {name!r}")
    base = str(clean_name(name)).rsplit("/", 1)[-1]  # NFC, no zero-width or no-break spaces
    base = _ORG_PREFIX.sub("", base)
    key = base.lower().replace("_", "-")
    family, access = "", UNKNOWN
    for pattern, known_family, known_access in _COMPILED:
        if pattern.search(key):
            family, access = known_family, known_access
            break
    else:
        token = _LEADING_TOKEN.search(base)
        family = token.group(0) if token else ""
    moe = _MOE.search(base)
    size = None if moe else _SIZE.search(base)
    return ModelNameGuess(
        family=family,
        access=access,
        parameters_b=float(size.group(1)) if size else None,
        parameters_label=moe.group(0) if moe else None,
    )
