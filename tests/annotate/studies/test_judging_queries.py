"""The queries of one answer (the POST of a judgment and the GET of the next
judging page) are pinned, for a uniform and an adaptive study, with and
without stopping rules, so that the judging path cannot silently grow.

The figures count every query the test client's requests make: the session,
the signed-in user, the participation (read with its study and the study's
stopping rules), the writes, and the savepoints Django puts around a single
insert inside the test's transaction. No timing is asserted here: the
benchmark ``python -m bench judging`` times the same round trip against a
trivial Django POST + redirect + GET on the same server.

Cast: ``ada`` judges.
"""
from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotate.studies.services.stopping import StoppingInput, stopping_rules_set
from tests.annotate.factories import make_catalog, make_study
from tests.annotate.judging_forms import form_data
from tests.annotate.studies import test_judging_adaptive as adaptive_helpers, test_judging_scale as uniform_helpers

pytestmark = pytest.mark.django_db

#: Queries of one answer in a uniform study: session, user, participation; the pair read with the evaluator's
#: judgment and assignment of it and their row of counts (what the answer leaves of it needs no query:
#: ``uniform_state_after_answer``); then in one transaction (a savepoint inside the test's): the judgment insert, the
#: vote count, the walk to their next pair, the assignment insert (a conflict is skipped, not raised: no savepoint
#: of its own) and the cursor, the answer's release. On PostgreSQL the vote count travels in the judgment insert's
#: statement and the cursor in the assignment insert's (annotate/core/prepared.py, ``PreparedInsert.insert(then=...)``):
#: two queries fewer.
MERGED_ON_POSTGRESQL = 2 if connection.vendor == "postgresql" else 0
UNIFORM_POST = 11 - MERGED_ON_POSTGRESQL
#: ... and of the judging page that follows: session, user, participation (with the visitor's role groups, for the
#: navigation), the open assignment with its pair and questions and the row of counts in one query.
UNIFORM_GET = 4
#: An adaptive study's answer: the pair read with the evaluator's judgment and assignment of it, then, before the
#: answer's transaction, the reads of the choice made ahead of it in one statement (the tally of the study's
#: evaluators, the judgments stored since the process last read them, the pool's signature, the attention checks,
#: the pairs in flight and the evaluator's shown pairs, annotate/studies/services/adaptive_reads.py; the pool itself
#: is read when new to the process or changed); then in one transaction (a savepoint inside the test's): the
#: judgment insert, the vote count, the next position, the new pair's insert (a conflict is skipped, not raised: no
#: savepoint of its own), the assignment's insert, the answer's release. The cursor does not move (so only the vote
#: count travels with an insert on PostgreSQL).
ADAPTIVE_POST = 12 - MERGED_ON_POSTGRESQL // 2
#: ... and of the judging page that follows: as a uniform study's, the open assignment carrying the adaptive row of
#: counts.
ADAPTIVE_GET = 4
#: A study with stopping rules reads them again after the judgment (another request may have fired one) and,
#: for a judgment budget, counts the study's votes and judgments; its answer commits before that check, and the
#: next assignment after it (the same savepoints, in two transactions outside a test), after reading the
#: evaluator's row of counts anew (the check may have fired a rule).
RULES_EXTRA_POST = 4


def answer_queries(study, *, ready, on_screen, judge_url) -> tuple[int, int]:
    """Queries of the POST of ``ada``'s third answer and of the GET that follows."""
    _participation, client = ready(study, "ada")
    for _ in range(2):
        pair_id, left_id = on_screen(client, study)
        assert client.post(judge_url(study), form_data(client, study, pair_id, left_id, "left")).status_code == 302
    pair_id, left_id = on_screen(client, study)
    data = form_data(client, study, pair_id, left_id, "right")  # the tokens, computed before counting
    with CaptureQueriesContext(connection) as post:
        assert client.post(judge_url(study), data).status_code == 302
    with CaptureQueriesContext(connection) as get:
        assert client.get(judge_url(study)).status_code == 200
    return len(post.captured_queries), len(get.captured_queries)


def uniform_answer(study) -> tuple[int, int]:
    return answer_queries(study, ready=uniform_helpers.ready_client, on_screen=uniform_helpers.on_screen,
                          judge_url=uniform_helpers.judge_url)


def adaptive_answer(study) -> tuple[int, int]:
    return answer_queries(study, ready=adaptive_helpers.ready_client, on_screen=adaptive_helpers.on_screen,
                          judge_url=adaptive_helpers.judge_url)


def test_a_uniform_answer_takes_a_fixed_number_of_queries():
    study = make_study(make_catalog(subjects=("Mathematics",), per_subject=13), n_pairs=70, seed=9)
    assert uniform_answer(study) == (UNIFORM_POST, UNIFORM_GET)


def test_an_adaptive_answer_takes_a_fixed_number_of_queries():
    study = adaptive_helpers.adaptive_study(make_catalog(subjects=("Mathematics",), per_subject=12),
                                            per_evaluator=10)
    assert adaptive_answer(study) == (ADAPTIVE_POST, ADAPTIVE_GET)


def test_stopping_rules_add_their_reads_to_the_post_only():
    study = make_study(make_catalog(subjects=("Mathematics",), per_subject=13), n_pairs=70, seed=9)
    stopping_rules_set(study=study, values=StoppingInput(max_judgments=1000))
    assert uniform_answer(study) == (UNIFORM_POST + RULES_EXTRA_POST, UNIFORM_GET)


def test_the_walks_statement_has_few_enough_parameters_for_psycopg_to_keep_it_parsed():
    from annotate.studies.selectors.studies import _ORDER_CHUNK_PAIRS

    #: psycopg parses a statement of at most this many parameters once and reuses it (``MAX_CACHED_STATEMENT_PARAMS``
    #: in psycopg/_queries.py); a longer one is parsed anew at each call.
    psycopg_cached_params = 50
    assert len(_ORDER_CHUNK_PAIRS._compile("default").slots) <= psycopg_cached_params
