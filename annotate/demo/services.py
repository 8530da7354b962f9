"""Set up a ready-to-use demo site: a loaded response set, a finished scoring
run, a judging study with the seeded votes of simulated evaluators (so its
report has something to show), three logins and an invitation link.

Idempotent: whatever already exists is reused (same files, a finished run of
the whole set, a study of the same name, the same usernames); only the three
demo passwords change on every call, so the ones just printed always work.
For demonstrations only: the accounts have fixed, well-known usernames.
"""
from __future__ import annotations

import csv
import math
import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

import annotate.demo
from annotate.catalog import (
    UploadOptions,
    UploadSource,
    checksum_of,
    response_set_by_checksum,
    response_set_latest,
    response_set_load,
    upload_parse,
)
from annotate.models import (
    Choice,
    Invitation,
    PairStrategy,
    Participation,
    QuestionResult,
    ResponseSet,
    RunStatus,
    ScoringRun,
    Study,
)
from annotate.runs import scoring_run_create, scoring_run_execute
from annotate.studies import (
    EVALUATOR_GROUP,
    RESEARCHER_GROUP,
    ensure_role_groups,
    invitation_create,
    judging_screen,
    judgment_submit,
    participation_accept_guidelines,
    study_create,
)
from scoring._validation import check_int
from scoring.methods import get_method

DEMO_FOLDER = Path(annotate.demo.__file__).resolve().parent
DEMO_DATASET = "EIP-demo"
DEMO_STUDY = "Demo study"
INVITATION_NOTE = "demo invitation (setup_demo)"
ADMIN, RESEARCHER, EVALUATOR = "admin", "researcher", "evaluator"

#: Question columns the loader reads itself; every other column is kept as metadata.
LOADER_COLUMNS = {"question_id", "dataset", "subject", "category", "question", "options_json", "answer"}
#: Subject column candidates, in order of preference.
SUBJECT_COLUMNS = ("category", "subject")

#: Simulated evaluators: usernames ``simulated-1`` ... (never people; the report lists them by these names).
SIMULATED_PREFIX = "simulated-"
N_SIMULATED = 3
#: Each simulated evaluator sees a question's difficulty with this much Gaussian noise (in difficulty units).
SIMULATED_NOISE_SD = 0.5
#: Slope of the vote: P(a called harder) = 1 / (1 + exp(-SLOPE * (seen_a - seen_b))).
SIMULATED_SLOPE = 2.0
#: The registry method whose stored difficulty (error rate) stands in for a question without a ``level``.
ACCURACY_METHOD = "accuracy"
#: The demo's human difficulty scale (``level``): 1 = easy ... 3 = hard; an error rate in [0, 1] is mapped onto it.
LEVEL_LOW, LEVEL_HIGH = 1.0, 3.0

ERR_FOLDER_MISSING = ("data folder {path} does not exist (a relative path is read from {cwd}); give the folder's "
                      "full path, e.g. DATA=/path/to/shared/data/mmlu-pro")
ERR_FOLDER = "data folder {path} has no responses_binary.csv (expected the MMLU-Pro layout)"
ERR_N_PAIRS = "n_pairs must be an integer >= 1; got {value!r}"
ERR_PASSWORD = "password must be a non-empty string or None; got {value!r}"

Stage = Callable[[str], None]
Progress = Callable[[float, str], None]


@dataclass(frozen=True)
class DemoLogin:
    role: str
    username: str
    password: str


@dataclass(frozen=True)
class DemoSetup:
    """What :func:`demo_setup` made or found. ``*_created`` say which."""

    response_set: ResponseSet
    response_set_created: bool
    run: ScoringRun
    run_created: bool
    study: Study
    study_created: bool
    invitation: Invitation
    logins: tuple[DemoLogin, ...]
    simulated_votes: int = 0  # votes cast now by the simulated evaluators (0 when they had voted before)


def _question_columns(folder: Path) -> list[str]:
    path = folder / "questions.csv"
    if not path.is_file():
        return []
    with open(path, newline="", encoding="utf-8-sig") as handle:
        return [c.strip() for c in next(csv.reader(handle), [])]


def _load(folder: Path, dataset: str, name: str, stage: Stage) -> tuple[ResponseSet, bool]:
    header = _question_columns(folder)
    subject = next((c for c in SUBJECT_COLUMNS if c in header), None)
    keep = [c for c in header if c and c not in LOADER_COLUMNS]
    parsed = upload_parse(source=UploadSource(folder=folder),
                          options=UploadOptions(dataset=dataset, subject_column=subject, keep_columns=tuple(keep)))
    existing = response_set_by_checksum(checksum=checksum_of(parsed))
    if existing is not None:
        return existing, False
    stage(f"loading {folder} as {name!r} (dataset {dataset!r}) ...")
    new_version = response_set_latest(name=name) is not None
    return response_set_load(parsed=parsed, name=name, new_version=new_version), True


def _whole_set_run(response_set: ResponseSet) -> ScoringRun | None:
    """The latest finished run of every model and dataset of the set."""
    for run in ScoringRun.objects.filter(response_set=response_set, status=RunStatus.DONE).order_by("-pk"):
        if run.params.get("model_ids") is None and run.params.get("dataset_ids") is None:
            return run
    return None


def _login(username: str, password: str, *, staff: bool = False, group: str | None = None) -> AbstractBaseUser:
    User = get_user_model()
    user, _ = User.objects.get_or_create(username=username)
    user.is_staff = user.is_superuser = staff
    user.is_active = True
    user.set_password(password)
    user.save()
    if group is not None:
        user.groups.add(*[g for g in ensure_role_groups() if g.name == group])
    return user


@transaction.atomic
def _logins_and_invitation(study: Study, password: str | None) -> tuple[tuple[DemoLogin, ...], Invitation]:
    def fresh() -> str:
        return password if password is not None else secrets.token_urlsafe(12)

    logins = (
        DemoLogin("admin (staff + superuser)", ADMIN, fresh()),
        DemoLogin("researcher", RESEARCHER, fresh()),
        DemoLogin("evaluator", EVALUATOR, fresh()),
    )
    admin = _login(ADMIN, logins[0].password, staff=True)
    researcher = _login(RESEARCHER, logins[1].password, group=RESEARCHER_GROUP)
    study.members.add(researcher)  # researchers see only studies they own or were added to
    evaluator = _login(EVALUATOR, logins[2].password, group=EVALUATOR_GROUP)
    Participation.objects.get_or_create(study=study, user=evaluator)
    invitation = (
        Invitation.objects.filter(study=study, note=INVITATION_NOTE, revoked_at__isnull=True).first()
        or invitation_create(study=study, note=INVITATION_NOTE, created_by=admin)
    )
    return logins, invitation


def _human_difficulty(run: ScoringRun, question_ids: set[int]) -> dict[int, float]:
    """The difficulty simulated evaluators perceive, on the demo's 1-3 scale: the question's ``level`` metadata
    (the demo's human difficulty 1/2/3) when it has one, else ``1 + 2 * error rate`` in the run (the accuracy
    method's stored difficulty column, 1 - mean credit: higher = harder), else the middle of the scale (2)."""
    from annotate.models import Question

    column = get_method(ACCURACY_METHOD).difficulty_column
    levels = {pk: meta.get("level") if isinstance(meta, dict) else None
              for pk, meta in Question.objects.filter(pk__in=question_ids).values_list("pk", "metadata")}
    scores = dict(QuestionResult.objects.filter(run=run, question_id__in=question_ids)
                  .values_list("question_id", "scores"))
    seen = {}
    for pk in question_ids:
        level, error_rate = _finite(levels.get(pk)), _finite((scores.get(pk) or {}).get(column))
        if level is not None:
            seen[pk] = level
        elif error_rate is not None:
            seen[pk] = LEVEL_LOW + (LEVEL_HIGH - LEVEL_LOW) * error_rate
        else:
            seen[pk] = (LEVEL_LOW + LEVEL_HIGH) / 2
    return seen


def _finite(value: object) -> float | None:
    """``value`` as a finite float (a number or a numeric string), else None."""
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def _simulated_votes(study: Study, run: ScoringRun, seed: int) -> int:
    """Let ``N_SIMULATED`` simulated evaluators judge every pair of the demo
    study once, through the judging services (as a person's votes would be
    stored), with seeded Bradley-Terry votes on :func:`_human_difficulty`.
    Does nothing when they have voted already. Returns the votes cast.

    Every time stored is the moment it happened: the simulated evaluators
    join, accept the guidelines and vote now, one after the other, a program's
    milliseconds apart. Nothing is dated back or invented, so the demo's
    pages show when ``setup_demo`` ran (a program's speed is not a person's:
    the study monitor flags no simulated evaluator as a speeder)."""
    if Participation.objects.filter(study=study, user__username__startswith=SIMULATED_PREFIX,
                                    judgments__isnull=False).exists():
        return 0
    rng = np.random.default_rng(seed)
    truth = _human_difficulty(run, set(study.pairs.values_list("question_a_id", flat=True))
                              | set(study.pairs.values_list("question_b_id", flat=True)))
    n_votes = 0
    for k in range(1, N_SIMULATED + 1):
        user = _login(f"{SIMULATED_PREFIX}{k}", secrets.token_urlsafe(24), group=EVALUATOR_GROUP)
        user.set_unusable_password()  # nobody logs in as a simulation
        user.save(update_fields=["password"])
        participation, _ = Participation.objects.update_or_create(
            study=study, user=user, defaults={"is_simulated": True})
        participation_accept_guidelines(participation=participation)
        seen = {pk: value + rng.normal(0.0, SIMULATED_NOISE_SD) for pk, value in sorted(truth.items())}
        while (screen := judging_screen(participation=participation)) is not None:
            a, b = screen.pair.question_a_id, screen.pair.question_b_id
            p_a = 1.0 / (1.0 + math.exp(-SIMULATED_SLOPE * (seen[a] - seen[b])))
            # one draw per (seed, evaluator, pair): the same votes whatever order and sides the pairs come in
            harder = a if np.random.default_rng([seed, k, screen.pair.position]).random() < p_a else b
            judgment_submit(participation=participation, pair_id=screen.pair.pk, left_question_id=screen.left.pk,
                            choice=Choice.LEFT if harder == screen.left.pk else Choice.RIGHT)
            n_votes += 1
    return n_votes


def demo_setup(
    *,
    folder: Path | str | None = None,
    dataset: str | None = None,
    name: str | None = None,
    password: str | None = None,
    n_pairs: int = 70,
    seed: int = 1,
    params: Mapping | None = None,
    stage: Stage | None = None,
    progress: Progress | None = None,
) -> DemoSetup:
    """Load, score, create a study and logins; reuse whatever exists.

    Parameters
    ----------
    folder : path-like, optional
        A folder in the MMLU-Pro layout (``responses_binary.csv``,
        ``questions.csv``, ``models.csv``); default the built-in demo
        (``annotate/demo``). The subject column is ``category`` (else
        ``subject``); every other extra question column (``level``,
        ``mmlu_level``, ``src``, ...) is kept as question metadata.
    dataset : str, optional
        Dataset name; default "EIP-demo" for the built-in demo, else the
        folder name.
    name : str, optional
        Response set name; default the dataset name. Files already loaded
        (same SHA-256) are reused; changed files under an existing name are
        loaded as its next version.
    password : str, optional
        Password of all three demo logins; default a fresh random one each
        (``secrets.token_urlsafe(12)``). Reset on every call.
    n_pairs, seed : int, default 70 and 1
        The demo study: ``n_pairs`` uniform same-subject pairs, sampler seed
        ``seed`` (paper section 5: 70 pairs). ``N_SIMULATED`` (3) simulated
        evaluators, ``simulated-1`` ..., judge every pair once with votes
        seeded by ``seed``: each perceives a question's difficulty (its
        ``level`` 1-3, else ``1 + 2 *`` its error rate in the run, the
        registry's accuracy difficulty column) with Gaussian noise of SD
        ``SIMULATED_NOISE_SD`` and calls the left one harder with probability
        ``1 / (1 + exp(-SIMULATED_SLOPE * (left - right)))``. They are never
        people and cannot log in.
    params : mapping, optional
        Scoring parameters (see :func:`annotate.runs.services.scoring.scoring_run_create`).
    stage : callable (str) -> None, optional
        Told what long step starts next (loading, scoring).
    progress : callable (fraction, label) -> None, optional
        Passed to :func:`annotate.runs.services.scoring.scoring_run_execute`.

    Returns
    -------
    DemoSetup

    Raises
    ------
    ValueError
        On a bad argument, a missing folder or one without ``responses_binary.csv``, a study
        that cannot be sampled; ``annotate.catalog.loaders.base.LoadError`` when the
        files cannot be loaded. A failed scoring run is stored as failed and
        its exception re-raised.
    """
    folder = Path(folder) if folder is not None else DEMO_FOLDER
    if not folder.is_dir():
        raise ValueError(ERR_FOLDER_MISSING.format(path=folder, cwd=Path.cwd()))
    if not (folder / "responses_binary.csv").is_file():
        raise ValueError(ERR_FOLDER.format(path=folder))
    check_int(n_pairs, name="n_pairs", low=1, message=ERR_N_PAIRS)
    if password is not None and (not isinstance(password, str) or not password):
        raise ValueError(ERR_PASSWORD.format(value=password))
    stage = stage or (lambda text: None)
    dataset = dataset or (DEMO_DATASET if folder.resolve() == DEMO_FOLDER else folder.resolve().name)
    response_set, loaded = _load(folder, dataset, name or dataset, stage)

    run, run_created = _whole_set_run(response_set), False
    if run is None:
        stage(f"scoring {response_set} ...")
        run = scoring_run_execute(run=scoring_run_create(response_set=response_set, params=params), progress=progress)
        run_created = True

    study, study_created = Study.objects.filter(name=DEMO_STUDY).first(), False
    if study is None:
        study = study_create(
            name=DEMO_STUDY, run=run, datasets=list(run.datasets_used.all()), n_pairs=n_pairs, seed=seed,
            strategy=PairStrategy.UNIFORM,
        )
        study_created = True
    logins, invitation = _logins_and_invitation(study, password)
    stage("simulated evaluators voting ...")
    votes = _simulated_votes(study, run, seed)
    return DemoSetup(response_set, loaded, run, run_created, study, study_created, invitation, logins, votes)
