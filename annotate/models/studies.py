"""The human side: studies of question pairs, evaluators and their judgments.

A study fixes its pairs when it is created (from one scoring run); every
evaluator judges the same pairs, in their own order. Answers are final: one
judgment per evaluator and pair, never edited, so the table itself is the
audit trail.
"""
from __future__ import annotations

import secrets

from django.conf import settings
from django.db import models
from django.db.models import F, Q
from django.db.models.functions import Greatest, Least

from annotate.models.catalog import Dataset, Question, Subject
from annotate.models.scoring import ScoringRun

#: The judging page's skip button, as it reads; the guidelines and notices quote it from here.
SKIP_BUTTON_LABEL = "Skip \u2014 not qualified"

#: What the default guidelines said before they quoted :data:`SKIP_BUTTON_LABEL` and left how to come back to
#: the page (which says it from the study's resume setting); studies that still hold it are given the new default.
OLD_DEFAULT_GUIDELINES = """\
You will see two questions from the same subject, side by side.
Decide which of the two is harder to answer correctly for a well-prepared
student of the subject, and press the matching button.

- Judge the question, not how long it is or how it is worded.
- You do not need to solve the questions; a careful reading is enough.
- If you do not know the subject well enough to judge, press "Skip - not
  qualified". A skip is not a vote; the pair goes to other evaluators.
- Your answers are final: once you submit a pair you cannot change it.
  Take your time before you press a button.
- You can stop at any time and come back later with the same browser: you
  will continue where you left off.
"""

DEFAULT_GUIDELINES = f"""\
You will see two questions from the same subject, side by side.
Decide which of the two is harder to answer correctly for a well-prepared
student of the subject, and press the matching button.

- Judge the question, not how long it is or how it is worded.
- You do not need to solve the questions; a careful reading is enough.
- If you do not know the subject well enough to judge, press "{SKIP_BUTTON_LABEL}".
  A skip is not a vote (and not an answer towards a completion code); the pair
  goes to other evaluators.
- Your answers are final: once you submit a pair you cannot change it.
  Take your time before you press a button.
- You can stop at any time; how to come back is said below.
"""

# One line per paragraph or point: Markdown keeps line breaks of the text (as
# the data files' questions need), so the text is not wrapped here.
DEFAULT_CONSENT = (
    "This is a research study on how hard exam questions are for people. You will compare pairs of questions "
    "and say which one is harder; you do not answer them.\n"
    "\n"
    "- Taking part is voluntary. You can stop at any time without giving a reason.\n"
    "- We do not ask for your name or email. You join under a random pseudonym; we record your field of study, "
    "education level, your answers and how long each one took.\n"
    "- Your answers are used, without anything that identifies you, in research publications and shared data "
    "sets.\n"
)


#: Longest guidelines or consent text (Markdown a participant reads before judging), in characters.
STUDY_TEXT_MAX = 20_000


def new_participation_seed() -> int:
    return secrets.randbits(62)


def new_invitation_token() -> str:
    return secrets.token_urlsafe(32)


class PairStrategy(models.TextChoices):
    UNIFORM = "uniform", "uniform random same-subject pairs"
    STRATIFIED_GAP = "stratified_gap", "stratified by EIP difficulty gap"
    METHODS_DISAGREE = "methods_disagree", "pairs where EIP and baselines disagree first"
    ADAPTIVE = "adaptive", "adaptive: each next pair chosen from the judgments so far"


#: Defaults of an adaptive study (:data:`PairStrategy.ADAPTIVE`): comparisons
#: every question gets before the informative choice takes over, and the share
#: of pairs drawn at random (keeps the design unbiased).
DEFAULT_ADAPTIVE_MIN_COMPARISONS = 5
DEFAULT_ADAPTIVE_RANDOM_SHARE = 0.1


#: Default speeder threshold: an evaluator whose median seconds per vote is
#: below this is flagged on the manage page (a careful reading of two exam
#: questions takes far longer; the paper's evaluators took about a minute).
DEFAULT_SPEEDER_SECONDS = 5.0
#: Prolific's query parameter names, the preset of a study's platform ids.
PROLIFIC_PARTICIPANT_PARAM = "PROLIFIC_PID"
PROLIFIC_STUDY_PARAM = "STUDY_ID"
PROLIFIC_SESSION_PARAM = "SESSION_ID"


#: Default completion rules: a participant earns the completion code with at
#: least one answered (non-skip) pair and every attention check they were shown
#: answered and passed; no minimum time.
DEFAULT_COMPLETION_MIN_VOTES = 1
DEFAULT_COMPLETION_MIN_CHECK_SHARE = 1.0
DEFAULT_COMPLETION_MIN_SECONDS = 0.0


class ResumeByParticipantId(models.TextChoices):
    """Whether a crowd platform's participant id signs its evaluator in again.

    ``on`` (the default) lets a participant continue in any browser (a lost
    cookie, another device), at the price that anyone who knows their id and
    has the study's link continues as them. ``same_browser`` continues only in
    the browser that joined (a long-lived browser key, kept across logouts);
    ``off`` never signs anyone in by id: a second join with a known id from an
    unrecognised browser is refused.
    """

    OFF = "off", "off"
    ON = "on", "on, in any browser"
    SAME_BROWSER = "same_browser", "on, in the same browser only"


class StudyStatus(models.TextChoices):
    DRAFT = "draft", "draft (not launched)"
    OPEN = "open", "open"
    CLOSED = "closed", "closed"


class StudyOrigin(models.TextChoices):
    """Where a study's judgments come from."""

    JUDGED = "judged", "judged on this site"
    DERIVED = "derived", "derived from a human response set"
    IMPORTED = "imported", "imported from elsewhere"


class OnboardingQuestion(models.TextChoices):
    """The background questions a study may ask its evaluators before the guidelines."""

    FIELD_OF_STUDY = "field_of_study", "Field of study"
    EDUCATION_LEVEL = "education_level", "Education level"
    QUALIFIED_SUBJECTS = "qualified_subjects", "Subjects they feel qualified to judge"


def default_onboarding_questions() -> list[str]:
    return list(OnboardingQuestion.values)


class Study(models.Model):
    """A set of same-subject question pairs to be judged blind.

    The pairs are fixed when the study is created, except in an adaptive
    study (:data:`PairStrategy.ADAPTIVE`): there the study holds a pool of
    questions (:class:`AdaptivePoolQuestion`) and each evaluator's next pair
    is chosen when it is served; ``n_pairs`` is then the number of regular
    pairs each evaluator judges.
    """

    name = models.CharField(max_length=200, unique=True)
    scoring_run = models.ForeignKey(ScoringRun, on_delete=models.PROTECT, related_name="studies")
    datasets = models.ManyToManyField(Dataset, related_name="studies")
    subjects = models.ManyToManyField(Subject, related_name="studies")
    strategy = models.CharField(max_length=20, choices=PairStrategy.choices, default=PairStrategy.UNIFORM)
    seed = models.BigIntegerField()
    n_pairs = models.PositiveIntegerField()
    include_unkept = models.BooleanField(
        default=False, help_text="Also pair questions every model solved (or failed)"
    )
    include_low_coverage = models.BooleanField(
        default=False, help_text="Also pair questions observed by fewer models than the run's min_models"
    )
    target_judgments_per_pair = models.PositiveIntegerField(
        default=20,
        help_text="Votes (not skips) after which the pair is no longer offered to new evaluators",
    )
    adaptive_min_comparisons = models.PositiveIntegerField(
        default=DEFAULT_ADAPTIVE_MIN_COMPARISONS,
        help_text="Adaptive study: comparisons every question gets before informative pairs take over",
    )
    adaptive_random_share = models.FloatField(
        default=DEFAULT_ADAPTIVE_RANDOM_SHARE,
        help_text="Adaptive study: share (0 to 1) of the pairs drawn at random among the unseen ones",
    )
    pairs_per_subject = models.PositiveIntegerField(
        null=True, blank=True,
        help_text="When set, this many pairs are drawn in each subject (n_pairs = this x the number of subjects)",
    )
    guidelines = models.TextField(default=DEFAULT_GUIDELINES, help_text="Markdown")
    onboarding_questions = models.JSONField(
        default=default_onboarding_questions, blank=True,
        help_text="Which OnboardingQuestion values the onboarding page asks, in order",
    )
    speeder_seconds = models.FloatField(
        default=DEFAULT_SPEEDER_SECONDS,
        help_text="Flag an evaluator whose median seconds per vote is below this",
    )
    attention_check_share = models.FloatField(
        default=0.0,
        help_text="Share (0 to 0.5) of the served pairs that are attention checks with a known answer",
    )
    participant_param = models.CharField(
        max_length=64, default=PROLIFIC_PARTICIPANT_PARAM, blank=True,
        help_text="Invitation URL query parameter carrying the crowd platform's participant id",
    )
    study_param = models.CharField(
        max_length=64, default=PROLIFIC_STUDY_PARAM, blank=True,
        help_text="Query parameter carrying the platform's study id",
    )
    session_param = models.CharField(
        max_length=64, default=PROLIFIC_SESSION_PARAM, blank=True,
        help_text="Query parameter carrying the platform's session id",
    )
    completion_code = models.CharField(
        max_length=100, blank=True, help_text="Shown on the done page (e.g. the Prolific completion code)"
    )
    completion_url = models.URLField(
        max_length=500, blank=True, help_text="The done page sends the evaluator here (e.g. Prolific's completion link)"
    )
    completion_min_votes = models.PositiveIntegerField(
        default=DEFAULT_COMPLETION_MIN_VOTES,
        help_text="Answered (non-skip) pairs a participant needs to earn the completion code",
    )
    completion_min_check_share = models.FloatField(
        default=DEFAULT_COMPLETION_MIN_CHECK_SHARE,
        help_text="Share (0 to 1) of the attention checks shown to a participant that they must answer and pass "
                  "to earn the code (1: every one; a skip is not a pass)",
    )
    completion_min_seconds = models.FloatField(
        default=DEFAULT_COMPLETION_MIN_SECONDS,
        help_text="Server seconds on pairs (votes and skips, summed) a participant needs to earn the code",
    )
    screened_out_url = models.URLField(
        max_length=500, blank=True,
        help_text="Offered to a participant who did not earn the code (the platform's return or screened-out link)",
    )
    resume_by_participant_id = models.CharField(
        max_length=20, choices=ResumeByParticipantId.choices, default=ResumeByParticipantId.ON,
        help_text="Whether a known crowd participant id continues its participation",
    )
    consent_text = models.TextField(
        default=DEFAULT_CONSENT, help_text="Shown to evaluators before they join; they agree or decline"
    )
    status = models.CharField(max_length=10, choices=StudyStatus.choices, default=StudyStatus.OPEN)
    origin = models.CharField(
        max_length=10, choices=StudyOrigin.choices, default=StudyOrigin.JUDGED,
        help_text="Judged on this site, derived from people's answers, or imported",
    )
    import_sha256 = models.CharField(
        max_length=64, blank=True, db_index=True,
        help_text="An imported study: SHA-256 of the imported bytes (the same bytes are not imported twice)",
    )
    derived_from = models.ForeignKey(
        "annotate.ResponseSet", on_delete=models.PROTECT, null=True, blank=True, related_name="derived_studies",
        help_text="The human response set whose answers gave a derived study's judgments",
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True,
        help_text="The study's owner: sees and changes it, as do its members and staff",
    )
    members = models.ManyToManyField(
        settings.AUTH_USER_MODEL, blank=True, related_name="member_studies",
        help_text="Researchers added to the study: they see and change it as its owner does",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    closed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        verbose_name_plural = "studies"
        constraints = [
            models.CheckConstraint(condition=Q(n_pairs__gte=1), name="study_n_pairs_positive"),
            models.CheckConstraint(
                condition=Q(target_judgments_per_pair__gte=1), name="study_target_judgments_positive"
            ),
            models.CheckConstraint(condition=Q(speeder_seconds__gte=0), name="study_speeder_seconds_non_negative"),
            models.CheckConstraint(
                condition=Q(attention_check_share__gte=0) & Q(attention_check_share__lte=0.5),
                name="study_attention_check_share_range",
            ),
            models.CheckConstraint(
                condition=Q(adaptive_random_share__gte=0) & Q(adaptive_random_share__lte=1),
                name="study_adaptive_random_share_range",
            ),
            models.CheckConstraint(
                condition=Q(completion_min_check_share__gte=0) & Q(completion_min_check_share__lte=1),
                name="study_completion_check_share_range",
            ),
            models.CheckConstraint(
                condition=Q(completion_min_seconds__gte=0), name="study_completion_seconds_non_negative"
            ),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def is_adaptive(self) -> bool:
        return self.strategy == PairStrategy.ADAPTIVE


class AdaptivePoolQuestion(models.Model):
    """A question an adaptive study may pair: an eligible question of its
    datasets and subjects, fixed when the study is created. Two questions are
    paired only within one ``block`` (the same subject and the same connected
    component of the run's model-question graph)."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="pool")
    question = models.ForeignKey(Question, on_delete=models.PROTECT, related_name="+")
    block = models.BigIntegerField(help_text="Questions are paired only within a block (subject and graph component)")

    class Meta:
        ordering = ["study_id", "question_id"]
        constraints = [
            models.UniqueConstraint(fields=["study", "question"], name="adaptive_pool_unique_question"),
        ]

    def __str__(self) -> str:
        return f"q{self.question_id} in the pool of study {self.study_id}"


class Pair(models.Model):
    """Two questions of one subject. An unordered pair is stored once per study
    (a unique constraint on the smaller and larger id); which question is
    ``question_a`` is drawn at random when the study is created (the paper's
    "randomly ordered question pairs"), so statistics over "a harder / b
    harder" labels, such as Cohen's kappa, are not skewed by id order."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="pairs")
    position = models.PositiveIntegerField(help_text="Order in which the sampler returned it")
    question_a = models.ForeignKey(Question, on_delete=models.PROTECT, related_name="+")
    question_b = models.ForeignKey(Question, on_delete=models.PROTECT, related_name="+")
    stratum = models.IntegerField(
        null=True, blank=True, help_text="Gap stratum or number of disagreeing baselines (strategy-specific)"
    )
    attention_check = models.BooleanField(
        default=False, help_text="A pair whose answer is known; served blind, left out of agreement statistics"
    )
    expected_harder = models.ForeignKey(
        Question, on_delete=models.PROTECT, related_name="+", null=True, blank=True,
        help_text="For an attention check: the question an attentive evaluator calls harder",
    )
    n_votes = models.PositiveIntegerField(
        default=0, help_text="Votes (not skips) recorded on the pair; kept by the judging service"
    )

    class Meta:
        ordering = ["study_id", "position"]
        indexes = [
            models.Index(fields=["study", "n_votes"], name="pair_study_votes"),
            # The few attention checks of a study, read at every adaptive choice and judging page, without a scan of
            # its pairs.
            models.Index(fields=["study", "position"], condition=Q(attention_check=True), name="pair_study_checks"),
        ]
        constraints = [
            models.UniqueConstraint(
                "study", Least("question_a", "question_b"), Greatest("question_a", "question_b"),
                name="pair_unique_unordered_per_study",
            ),
            models.UniqueConstraint(fields=["study", "position"], name="pair_position_unique_per_study"),
            models.CheckConstraint(condition=~Q(question_a=F("question_b")), name="pair_two_questions"),
            models.CheckConstraint(
                condition=(
                    Q(attention_check=False, expected_harder__isnull=True)
                    | Q(attention_check=True, expected_harder=F("question_a"))
                    | Q(attention_check=True, expected_harder=F("question_b"))
                ),
                name="pair_attention_check_expected_answer",
            ),
        ]

    def __str__(self) -> str:
        return f"pair {self.position} of study {self.study_id}: q{self.question_a_id} vs q{self.question_b_id}"


class FieldOfStudy(models.TextChoices):
    COMPUTER_SCIENCE = "computer_science", "Computer Science"
    MATHEMATICS = "mathematics", "Mathematics"
    ENGINEERING = "engineering", "Engineering"
    NATURAL_SCIENCES = "natural_sciences", "Natural Sciences"
    SOCIAL_SCIENCES = "social_sciences", "Social Sciences"
    HUMANITIES = "humanities", "Humanities"
    ARTS = "arts", "Arts"
    OTHER = "other", "Other"
    PREFER_NOT_TO_SAY = "prefer_not_to_say", "Prefer not to say"


class EducationLevel(models.TextChoices):
    SECONDARY_STUDENT = "secondary_student", "Secondary (high) school student"
    SECONDARY = "secondary", "Secondary (high) school diploma"
    VOCATIONAL = "vocational", "Vocational qualification"
    ASSOCIATE = "associate", "Associate"
    BACHELOR_STUDENT = "bachelor_student", "Bachelor's student"
    BACHELOR = "bachelor", "Bachelor's degree"
    MASTER_STUDENT = "master_student", "Master's student"
    MASTER = "master", "Master's degree"
    PHD_STUDENT = "phd_student", "PhD student"
    PHD = "phd", "PhD"
    PREFER_NOT_TO_SAY = "prefer_not_to_say", "Prefer not to say"


class Invitation(models.Model):
    """A revocable link that lets people join a study as pseudonymous evaluators."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="invitations")
    token = models.CharField(max_length=64, unique=True, default=new_invitation_token)
    note = models.CharField(max_length=200, blank=True, help_text="Who the link was sent to")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        state = "revoked" if self.revoked_at else "active"
        return f"invitation {self.pk} to {self.study} ({state})"


class ConsentDecline(models.Model):
    """Someone opened an invitation and declined the consent text. Nothing
    else is stored: no account, no participation, no browser details."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="consent_declines")
    invitation = models.ForeignKey(
        Invitation, on_delete=models.SET_NULL, null=True, blank=True, related_name="consent_declines"
    )
    declined_at = models.DateTimeField(auto_now_add=True)
    browser_key = models.CharField(
        max_length=64, blank=True,
        help_text="Keyed hash of the declining browser's random key: one decline per browser and study",
    )
    participant_key = models.CharField(
        max_length=64, blank=True,
        help_text="Keyed hash of the crowd participant id, if any: one decline per participant id and study",
    )

    class Meta:
        ordering = ["study_id", "declined_at"]
        constraints = [
            models.UniqueConstraint(fields=["study", "browser_key"], condition=~Q(browser_key=""),
                                    name="consent_decline_once_per_browser"),
            models.UniqueConstraint(fields=["study", "participant_key"], condition=~Q(participant_key=""),
                                    name="consent_decline_once_per_participant"),
        ]

    def __str__(self) -> str:
        return f"consent declined for {self.study}"


class Participation(models.Model):
    """One evaluator in one study: their profile, progress markers and the seed
    that fixes their pair order and left/right placement."""

    study = models.ForeignKey(Study, on_delete=models.PROTECT, related_name="participations")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="participations")
    invitation = models.ForeignKey(
        Invitation, on_delete=models.SET_NULL, null=True, blank=True, related_name="participations"
    )
    seed = models.BigIntegerField(default=new_participation_seed)
    order_cursor = models.PositiveIntegerField(
        default=0, help_text="Place reached in the evaluator's pair order (the order is a permutation from the seed)"
    )
    consented_at = models.DateTimeField(
        null=True, blank=True, help_text="When they agreed to the consent text (empty: joined another way)"
    )
    field_of_study = models.CharField(max_length=30, choices=FieldOfStudy.choices, blank=True)
    education_level = models.CharField(max_length=30, choices=EducationLevel.choices, blank=True)
    qualified_subjects = models.ManyToManyField(Subject, blank=True, related_name="+")
    onboarded_at = models.DateTimeField(null=True, blank=True)
    guidelines_accepted_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    platform_participant_id = models.CharField(
        max_length=128, blank=True, help_text="Crowd platform participant id (e.g. PROLIFIC_PID) from the join URL"
    )
    is_simulated = models.BooleanField(
        default=False,
        help_text="Votes made by a simulation (such as the demo's seeded evaluators), not by a person",
    )
    group = models.CharField(
        max_length=100, blank=True,
        help_text="The evaluator's group in an imported study (e.g. crowd, experts, LLM judge); blank = none",
    )
    platform_study_id = models.CharField(max_length=128, blank=True, help_text="Crowd platform study id")
    platform_session_id = models.CharField(max_length=128, blank=True, help_text="Crowd platform session id")
    browser_key_hash = models.CharField(
        max_length=64, blank=True,
        help_text="Keyed hash of the joining browser's key (resume by participant id in the same browser only)",
    )
    excluded_at = models.DateTimeField(
        null=True, blank=True, help_text="Left out of every statistic of the report since then (judgments kept)"
    )
    excluded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    exclusion_reason = models.CharField(max_length=500, blank=True)

    class Meta:
        ordering = ["study_id", "created_at"]
        constraints = [
            models.UniqueConstraint(fields=["study", "user"], name="participation_unique_per_study"),
            models.UniqueConstraint(
                fields=["study", "platform_participant_id"], condition=~Q(platform_participant_id=""),
                name="participation_unique_platform_id_per_study",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.user} in {self.study}"


class ExclusionAction(models.TextChoices):
    EXCLUDE = "exclude", "excluded"
    RESTORE = "restore", "included again"


class ExclusionEvent(models.Model):
    """The audit trail of excluding an evaluator from analyses and including
    them again: who did it, when and why. Never edited; the participation's
    ``excluded_*`` fields hold the current state."""

    participation = models.ForeignKey(Participation, on_delete=models.CASCADE, related_name="exclusion_events")
    action = models.CharField(max_length=10, choices=ExclusionAction.choices)
    reason = models.CharField(max_length=500, blank=True)
    by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    at = models.DateTimeField()

    class Meta:
        ordering = ["participation_id", "at", "id"]

    def __str__(self) -> str:
        return f"participation {self.participation_id} {self.get_action_display()} at {self.at:%Y-%m-%d %H:%M}"


class Assignment(models.Model):
    """A pair served to an evaluator: when it was first shown and which question
    was on the left. Once assigned, a pair stays on that evaluator's screen
    until they judge or skip it, even if the study's target is reached."""

    participation = models.ForeignKey(Participation, on_delete=models.PROTECT, related_name="assignments")
    pair = models.ForeignKey(Pair, on_delete=models.PROTECT, related_name="assignments")
    left_question = models.ForeignKey(Question, on_delete=models.PROTECT, related_name="+")
    shown_at = models.DateTimeField()

    class Meta:
        ordering = ["participation_id", "shown_at"]
        constraints = [
            models.UniqueConstraint(fields=["participation", "pair"], name="assignment_unique_per_evaluator"),
        ]

    def __str__(self) -> str:
        return f"pair {self.pair_id} shown to participation {self.participation_id}"


class Choice(models.TextChoices):
    LEFT = "left", "left is harder"
    RIGHT = "right", "right is harder"
    SKIP = "skip", "skip - not qualified"


class Judgment(models.Model):
    """An evaluator's final answer on a pair. ``choice`` is what they pressed,
    ``left_question`` what was displayed on the left, ``harder_question`` the
    resulting verdict (NULL for a skip). Never edited."""

    participation = models.ForeignKey(Participation, on_delete=models.PROTECT, related_name="judgments")
    pair = models.ForeignKey(Pair, on_delete=models.PROTECT, related_name="judgments")
    choice = models.CharField(max_length=10, choices=Choice.choices)
    left_question = models.ForeignKey(Question, on_delete=models.PROTECT, related_name="+")
    harder_question = models.ForeignKey(Question, on_delete=models.PROTECT, related_name="+", null=True, blank=True)
    shown_at = models.DateTimeField()
    submitted_at = models.DateTimeField()
    seconds = models.FloatField(help_text="Server time from first display to submission")
    client_seconds = models.FloatField(null=True, blank=True, help_text="Time on the page as the browser measured it")

    class Meta:
        ordering = ["participation_id", "submitted_at"]
        constraints = [
            models.UniqueConstraint(fields=["participation", "pair"], name="judgment_unique_per_evaluator_pair"),
            models.CheckConstraint(
                condition=(
                    Q(choice=Choice.LEFT, harder_question=F("left_question"))
                    | (Q(choice=Choice.RIGHT, harder_question__isnull=False) & ~Q(harder_question=F("left_question")))
                    | Q(choice=Choice.SKIP, harder_question__isnull=True)
                ),
                name="judgment_harder_matches_choice",
            ),
            models.CheckConstraint(condition=Q(seconds__gte=0), name="judgment_seconds_non_negative"),
        ]

    def __str__(self) -> str:
        return f"{self.participation_id} on pair {self.pair_id}: {self.choice}"
