"""``annotate/report_schema.json`` documents the report: real reports must
validate against it (a small validator for the JSON Schema keywords the file
uses), and the validator itself must catch a broken report."""
from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from annotate.models import Question
from annotate.reports.services import study_alignment_report
from tests.annotate.reports.test_report import build_study

pytestmark = pytest.mark.django_db

SCHEMA = json.loads((Path(__file__).resolve().parents[3] / "annotate" / "report_schema.json").read_text())
TYPES = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
}
KNOWN = {"$schema", "$id", "$defs", "$ref", "title", "description", "type", "enum", "properties", "required",
         "additionalProperties", "items", "minItems", "maxItems", "allOf", "anyOf"}


def errors(value, schema, path="$") -> list[str]:
    """Violations of ``schema`` by ``value`` (empty = valid)."""
    unknown = set(schema) - KNOWN
    assert not unknown, f"validator does not know {unknown} at {path}"
    if "$ref" in schema:
        target = SCHEMA
        for part in schema["$ref"].removeprefix("#/").split("/"):
            target = target[part]
        return errors(value, target, path)
    out = []
    for sub in schema.get("allOf", []):
        out += errors(value, sub, path)
    if "anyOf" in schema and all(errors(value, sub, path) for sub in schema["anyOf"]):
        out.append(f"{path}: matches none of anyOf")
    if "type" in schema:
        types = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        if not any(TYPES[t](value) for t in types):
            return [*out, f"{path}: {value!r} is not of type {types}"]
    if "enum" in schema and value not in schema["enum"]:
        out.append(f"{path}: {value!r} not in {schema['enum']}")
    if isinstance(value, dict):
        props = schema.get("properties", {})
        out += [f"{path}: missing {k!r}" for k in schema.get("required", []) if k not in value]
        extra = schema.get("additionalProperties", True)
        for k, v in value.items():
            if k in props:
                out += errors(v, props[k], f"{path}.{k}")
            elif extra is False:
                out.append(f"{path}: unexpected key {k!r}")
            elif isinstance(extra, dict):
                out += errors(v, extra, f"{path}.{k}")
    if isinstance(value, list):
        if "minItems" in schema and len(value) < schema["minItems"]:
            out.append(f"{path}: fewer than {schema['minItems']} items")
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            out.append(f"{path}: more than {schema['maxItems']} items")
        for i, v in enumerate(value):
            out += errors(v, schema.get("items", {}), f"{path}[{i}]")
    return out


def test_a_report_with_undefined_values_validates():
    study, _ = build_study()
    report = json.loads(json.dumps(study_alignment_report(study=study, n_boot=50)))
    assert errors(report, SCHEMA) == []


def test_a_report_with_a_label_and_a_tie_rule_of_none_validates():
    study, _ = build_study()
    for k, q in enumerate(Question.objects.filter(pk__in=study.pairs.values("question_a"))):
        q.metadata = {"level": 1 + k % 3}
        q.save()
    report = json.loads(json.dumps(study_alignment_report(study=study, n_boot=50, tie_rule="none")))
    assert report["labels"]["key"] == "level"
    assert errors(report, SCHEMA) == []


def test_the_validator_catches_a_broken_report():
    study, _ = build_study()
    report = json.loads(json.dumps(study_alignment_report(study=study, n_boot=20)))
    broken = copy.deepcopy(report)
    broken["pairs"][0]["consensus"]["votes_a"] = "three"
    del broken["irr"]["fleiss_kappa"]["scope"]
    broken["params"]["surprise"] = 1
    found = errors(broken, SCHEMA)
    assert "$.pairs[0].consensus.votes_a: 'three' is not of type ['integer']" in found
    assert "$.irr.fleiss_kappa: missing 'scope'" in found
    assert "$.params: unexpected key 'surprise'" in found
