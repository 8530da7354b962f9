"""The id lookups of a load: question_keys_table (every question of some datasets, by key) and
the key -> id lookup the load runs on it, checked against a plain dict lookup."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from annotate.catalog.selectors.catalog import question_keys_table
from annotate.catalog.services.loading import ERR_KEY_MISSING, ERR_KEY_REPEATED, _ids
from annotate.models import Dataset, Question

ON = ["dataset", "external_id"]
ODD = ["", " q1", "q1 ", "Q1", "q1", "nan", "NaN", "None", "null", "0", "00", "1.0", "é", "e\u0301", "𝔁",
       "tab\there", "line\nbreak", "comma,quote\"", "x" * 300]


def _table(keys: list[tuple[str, str]], first_id: int = 101) -> pd.DataFrame:
    return pd.DataFrame({"dataset": [d for d, _ in keys], "external_id": [q for _, q in keys],
                         "id": range(first_id, first_id + len(keys))})


def _slow(frame: pd.DataFrame, table: pd.DataFrame) -> list[int]:
    ids = {(d, q): i for d, q, i in zip(table["dataset"], table["external_id"], table["id"])}
    return [ids[(d, q)] for d, q in zip(frame["dataset"], frame["external_id"])]


def test_each_key_gets_its_rows_id_when_keys_repeat_and_come_in_another_order():
    table = _table([("A", "1"), ("A", "2"), ("B", "1"), ("B", "2")])  # ids 101..104
    frame = pd.DataFrame({"dataset": ["B", "A", "B", "A", "A", "B"], "external_id": ["2", "1", "2", "2", "1", "1"]})
    assert _ids(frame, table, ON).tolist() == [104, 101, 104, 102, 101, 103]


def test_unusual_strings_match_exactly_and_only_themselves():
    keys = [(d, q) for d in ("A", "a", "A ") for q in ODD]
    table = _table(keys)
    rng = np.random.default_rng(5)
    frame = pd.DataFrame([keys[i] for i in rng.integers(0, len(keys), size=500)], columns=ON)
    got = _ids(frame, table, ON)
    assert got.dtype == np.int64
    assert got.tolist() == _slow(frame, table)


def test_a_key_whose_parts_shift_between_columns_is_another_key():
    table = _table([("ab", "c"), ("a", "bc")])  # ids 101, 102
    frame = pd.DataFrame({"dataset": ["a", "ab"], "external_id": ["bc", "c"]})
    assert _ids(frame, table, ON).tolist() == [102, 101]


def test_object_and_string_columns_compare_by_value():
    table = _table([("A", "1"), ("A", "2")]).astype({"dataset": object, "external_id": object})
    frame = pd.DataFrame({"dataset": pd.array(["A", "A"], dtype="string"),
                          "external_id": pd.array(["2", "1"], dtype="string")})
    assert _ids(frame, table, ON).tolist() == [102, 101]


def test_a_single_key_column():
    table = pd.DataFrame({"model": ["m-1", "M-1", "m-2"], "id": [7, 8, 9]})
    frame = pd.DataFrame({"model": ["m-2", "M-1", "m-1", "m-2"]})
    assert _ids(frame, table, ["model"]).tolist() == [9, 8, 7, 9]


def test_a_missing_key_is_refused_naming_the_first_one():
    table = _table([("A", "1"), ("A", "2")])
    frame = pd.DataFrame({"dataset": ["A", "A", "A"], "external_id": ["1", "q1 ", "3"]})
    with pytest.raises(ValueError) as caught:
        _ids(frame, table, ON)
    assert str(caught.value) == ERR_KEY_MISSING.format(key=["A", "q1 "])


def test_a_key_stored_twice_is_refused():
    table = _table([("A", "1"), ("A", "2"), ("A", "1")])
    frame = pd.DataFrame({"dataset": ["A"], "external_id": ["2"]})
    with pytest.raises(ValueError) as caught:
        _ids(frame, table, ON)
    assert str(caught.value) == ERR_KEY_REPEATED.format(key=["A", "1"])


def test_no_keys_give_no_ids():
    table = _table([("A", "1")])
    assert _ids(pd.DataFrame({"dataset": [], "external_id": []}), table, ON).tolist() == []


@pytest.mark.django_db
def test_question_keys_table_holds_every_question_of_the_datasets_asked_for_and_no_other():
    first, second, other = (Dataset.objects.create(name=n) for n in ("first", "second", "other"))
    made = {}
    for dataset, external_ids in ((second, ["b", "a"]), (first, ["z", " a", "a"]), (other, ["a"])):
        for external_id in external_ids:
            made[(dataset.name, external_id)] = Question.objects.create(dataset=dataset, external_id=external_id).pk
    table = question_keys_table(dataset_ids=[first.pk, second.pk])
    assert list(table.columns) == ["id", "dataset", "external_id"]
    assert table["id"].dtype == np.int64
    got = sorted(zip(table["dataset"], table["external_id"], table["id"].tolist()))
    assert got == sorted((d, q, pk) for (d, q), pk in made.items() if d != "other")


def _stamp_per_table() -> tuple[tuple[int, int], ...]:
    """The catalog stamp the obvious way: one aggregate query per table."""
    from django.db.models import Count, Max

    from annotate.models import LanguageModel, ResponseSet, Subject
    out = []
    for model in (Dataset, Subject, Question, LanguageModel, ResponseSet):
        numbers = model.objects.aggregate(n=Count("id"), top=Max("id"))
        out.append((int(numbers["n"]), int(numbers["top"] or 0)))
    return tuple(out)


@pytest.mark.django_db
def test_the_catalog_stamp_counts_and_tops_each_table_as_one_query_per_table_does():
    from annotate.catalog.selectors.catalog import catalog_stamp
    from annotate.models import LanguageModel, Subject
    empty = catalog_stamp()
    assert empty == _stamp_per_table()
    dataset = Dataset.objects.create(name="d")
    Subject.objects.create(name="s")
    questions = [Question.objects.create(dataset=dataset, external_id=str(k)) for k in range(3)]
    LanguageModel.objects.create(name="m")
    filled = catalog_stamp()
    assert filled == _stamp_per_table()
    questions[1].delete()  # a count and its highest id move apart
    assert catalog_stamp() == _stamp_per_table() != filled != empty
