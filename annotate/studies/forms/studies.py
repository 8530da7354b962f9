"""The study creation and edit page's form, and the parameters of its live
counts: parsing and field checks only (the service checks the rest)."""
from __future__ import annotations

import secrets

from django import forms
from django.contrib.auth.models import AbstractBaseUser

from annotate.core import (
    SECONDS_MAX,
    IdsModelMultipleChoiceField,
    ShortEchoChoiceField,
    ShortEchoMultipleChoiceField,
    column_field,
)
from annotate.models import OnboardingQuestion, PairStrategy, ResponseSet, ScoringRun, Study
from annotate.models.studies import (
    DEFAULT_ADAPTIVE_MIN_COMPARISONS,
    DEFAULT_ADAPTIVE_RANDOM_SHARE,
    DEFAULT_CONSENT,
    DEFAULT_GUIDELINES,
    DEFAULT_SPEEDER_SECONDS,
    PROLIFIC_PARTICIPANT_PARAM,
    PROLIFIC_SESSION_PARAM,
    PROLIFIC_STUDY_PARAM,
    STUDY_TEXT_MAX,
)
from annotate.reports import response_sets_human_queryset
from annotate.studies.selectors.studies import study_related
from annotate.studies.selectors.study_scope import (
    datasets_of_finished_runs,
    researchers_except,
    scoring_runs_finished,
    subjects_of_datasets,
)

PAIRS_TOTAL = "total"
PAIRS_PER_SUBJECT = "per_subject"
ERR_PAIRS_REQUIRED = "Say how many pairs."
ERR_ADAPTIVE_PER_SUBJECT = "An adaptive study counts the pairs each evaluator judges: choose \u201cin all\u201d."
#: The strategy field's help on the creation page: what the designs have in common and where they differ.
STRATEGY_HELP = ("The first three draw every pair once, when the study is created; the adaptive design chooses "
                 "each evaluator's next pair while they judge.")
#: One sentence on the creation page, above the adaptive design's own settings: what the adaptive strategy does.
ADAPTIVE_HELP = (
    "Adaptive: no pairs are drawn in advance; each evaluator's next pair is chosen when it is served, from the "
    "same-subject questions of the pool, first so that every question gets its minimum number of comparisons, "
    "then among questions whose current human difficulty estimates are close and uncertain (with a random "
    "share), and the number of pairs is then the number each evaluator judges."
)
#: The fields that only the adaptive design reads; with any other design they are checked but not kept.
ADAPTIVE_FIELDS = ("adaptive_min_comparisons", "adaptive_random_share")
SEED_BITS = 31
#: An adaptive-only field holding a value that is not accepted while another design is chosen.
ERR_ADAPTIVE_UNUSED = ("{label}: the value is not accepted; the chosen design does not use it, but it must be "
                       "valid or blank")
#: The crowd-platform fields, named as ``study_quality_settings_update``'s arguments and the Study's fields.
CROWD_FIELDS = ("speeder_seconds", "participant_param", "study_param", "session_param", "completion_code",
                "completion_url")


class RunChoiceField(forms.ModelChoiceField):
    """A finished run, labelled by its response set."""

    def label_from_instance(self, obj: ScoringRun) -> str:
        finished = obj.finished_at.strftime("%Y-%m-%d %H:%M") if obj.finished_at else "?"
        return f"{obj.response_set.name} · run {obj.pk} (finished {finished})"


class StudyForm(forms.Form):
    """Every setting of a study; the creation page and the edit page (until the first judgment)."""

    #: Service arguments carried by another field (:func:`annotate.core.form_add_service_error`).
    service_names = {"pairs_per_subject": "n_pairs"}
    #: What the adaptive design does, shown above its own settings.
    adaptive_help = ADAPTIVE_HELP

    name = forms.CharField(max_length=200, label="Study name", help_text="Shown to evaluators.")
    run = RunChoiceField(queryset=ScoringRun.objects.none(), label="Response set and scoring run",
                         empty_label="Choose a finished run…")
    datasets = IdsModelMultipleChoiceField(queryset=None, widget=forms.CheckboxSelectMultiple, label="Datasets")
    subjects = IdsModelMultipleChoiceField(
        queryset=None, widget=forms.CheckboxSelectMultiple, required=False, label="Subjects",
        help_text="None ticked = every subject of the chosen datasets.",
    )
    include_unkept = forms.BooleanField(
        required=False, label="Also pair questions every model solved (or every model failed)")
    include_low_coverage = forms.BooleanField(
        required=False, label="Also pair questions answered by fewer models than the run's minimum")
    pairs_mode = ShortEchoChoiceField(
        choices=[(PAIRS_TOTAL, "in all"), (PAIRS_PER_SUBJECT, "per subject")], initial=PAIRS_TOTAL,
        widget=forms.RadioSelect, label="Count pairs")
    n_pairs = column_field(Study, "n_pairs", min_value=1, initial=70, label="Number of pairs",
                           help_text="The paper used 70 pairs in all.")
    strategy = ShortEchoChoiceField(choices=PairStrategy.choices, initial=PairStrategy.UNIFORM,
                                    label="Sampling strategy", help_text=STRATEGY_HELP)
    adaptive_min_comparisons = column_field(
        Study, "adaptive_min_comparisons", min_value=0, initial=DEFAULT_ADAPTIVE_MIN_COMPARISONS, required=False,
        label="Minimum comparisons per question (adaptive design only)",
        help_text=f"Votes every question gets before informative pairs take over (blank: "
                  f"{DEFAULT_ADAPTIVE_MIN_COMPARISONS}). About 10 per question usually suffice for a reliable scale.")
    adaptive_random_share = forms.FloatField(
        min_value=0.0, max_value=1.0, initial=DEFAULT_ADAPTIVE_RANDOM_SHARE, required=False,
        label="Random share (adaptive design only)",
        help_text=f"0 to 1: share of pairs drawn at random among those the evaluator has not seen, which keeps "
                  f"the design unbiased (blank: {DEFAULT_ADAPTIVE_RANDOM_SHARE:g}).")
    target_judgments_per_pair = column_field(
        Study, "target_judgments_per_pair", min_value=1, initial=20, label="Judgments wanted per pair",
        help_text="Votes (not skips) after which a pair is no longer offered to new evaluators.")
    attention_check_share = forms.FloatField(
        min_value=0.0, max_value=0.5, initial=0.0, required=False, label="Attention checks (share of all pairs)",
        help_text="0 to 0.5: pairs whose harder question is known (a large EIP difficulty gap), mixed in blind "
                  "and left out of every agreement statistic.")
    seed = column_field(Study, "seed", min_value=0, label="Sampler seed",
                        help_text="The same settings and seed always draw the same pairs.")
    guidelines = forms.CharField(widget=forms.Textarea(attrs={"rows": 12}), initial=DEFAULT_GUIDELINES,
                                 label="Guidelines (Markdown)", max_length=STUDY_TEXT_MAX)
    consent_text = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 6}), initial=DEFAULT_CONSENT, label="Consent text (Markdown)",
        max_length=STUDY_TEXT_MAX,
        help_text="Shown on the invitation page; evaluators agree or decline before anything about them is stored.")
    onboarding_questions = ShortEchoMultipleChoiceField(
        choices=OnboardingQuestion.choices, widget=forms.CheckboxSelectMultiple, required=False,
        initial=list(OnboardingQuestion.values), label="Onboarding questions",
        help_text="Education offers school levels and \u201cprefer not to say\u201d.")
    members = IdsModelMultipleChoiceField(
        queryset=None, widget=forms.CheckboxSelectMultiple, required=False, label="Co-researchers",
        help_text="They see and manage this study as you do.")
    speeder_seconds = forms.FloatField(
        min_value=0, max_value=SECONDS_MAX, initial=DEFAULT_SPEEDER_SECONDS, required=False,
        label="Speeder threshold (seconds)",
        help_text=f"The manage page flags an evaluator whose median seconds per vote is below this "
                  f"(blank: {DEFAULT_SPEEDER_SECONDS:g}).")
    participant_param = forms.CharField(max_length=64, required=False, initial=PROLIFIC_PARTICIPANT_PARAM,
                                        label="Participant id parameter")
    study_param = forms.CharField(max_length=64, required=False, initial=PROLIFIC_STUDY_PARAM,
                                  label="Study id parameter")
    session_param = forms.CharField(max_length=64, required=False, initial=PROLIFIC_SESSION_PARAM,
                                    label="Session id parameter")
    completion_code = forms.CharField(
        max_length=100, required=False, label="Completion code",
        help_text="Shown on the done page (e.g. the code Prolific gave you).")
    completion_url = forms.URLField(
        max_length=500, required=False, label="Completion URL", assume_scheme="https",
        help_text="The done page sends the evaluator here (e.g. https://app.prolific.com/submissions/complete?cc=…).")

    def __init__(self, *args, owner: AbstractBaseUser | None, **kwargs) -> None:
        """``owner``: the study's owner (the creating user on the creation page), left out of the members."""
        super().__init__(*args, **kwargs)
        datasets = datasets_of_finished_runs()
        self.fields["run"].queryset = scoring_runs_finished()
        self.fields["datasets"].queryset = datasets
        self.fields["subjects"].queryset = subjects_of_datasets(datasets=datasets)
        self.fields["members"].queryset = researchers_except(user=owner)
        if not self.is_bound and "seed" not in self.initial:
            self.initial["seed"] = secrets.randbits(SEED_BITS)

    @staticmethod
    def initial_of(study: Study) -> dict:
        """The form's initial data for editing ``study``."""
        per_subject = study.pairs_per_subject is not None
        related = study_related(study=study)
        return {
            "name": study.name, "run": study.scoring_run_id, "datasets": related.datasets,
            "subjects": related.subjects, "include_unkept": study.include_unkept,
            "include_low_coverage": study.include_low_coverage,
            "pairs_mode": PAIRS_PER_SUBJECT if per_subject else PAIRS_TOTAL,
            "n_pairs": study.pairs_per_subject if per_subject else study.n_pairs, "strategy": study.strategy,
            "target_judgments_per_pair": study.target_judgments_per_pair, "seed": study.seed,
            "attention_check_share": study.attention_check_share,
            "adaptive_min_comparisons": study.adaptive_min_comparisons,
            "adaptive_random_share": study.adaptive_random_share,
            "guidelines": study.guidelines, "consent_text": study.consent_text,
            "onboarding_questions": list(study.onboarding_questions), "members": related.members,
            **{name: getattr(study, name) for name in CROWD_FIELDS},
        }

    def clean(self) -> dict:
        data = super().clean()
        if data.get("strategy") == PairStrategy.ADAPTIVE and data.get("pairs_mode") == PAIRS_PER_SUBJECT:
            self.add_error("pairs_mode", ERR_ADAPTIVE_PER_SUBJECT)
        if "strategy" in data and data["strategy"] != PairStrategy.ADAPTIVE:
            for name in ADAPTIVE_FIELDS:  # another design: a valid value is not kept; an invalid one is refused
                if name in self.errors:  # named at the top too: the page's script hides the field
                    self.add_error(None, ERR_ADAPTIVE_UNUSED.format(label=self.fields[name].label))
                data[name] = None
        return data

    def service_kwargs(self) -> dict:
        """The cleaned data as keyword arguments of ``study_create`` / ``study_edit``."""
        data = self.cleaned_data
        per_subject = data["pairs_mode"] == PAIRS_PER_SUBJECT
        return {
            "name": data["name"], "run": data["run"], "datasets": list(data["datasets"]),
            "subjects": list(data["subjects"]) or None,
            "n_pairs": None if per_subject else data["n_pairs"],
            "pairs_per_subject": data["n_pairs"] if per_subject else None,
            "seed": data["seed"], "strategy": data["strategy"],
            "target_judgments_per_pair": data["target_judgments_per_pair"],
            "attention_check_share": data["attention_check_share"] or 0.0,  # blank = none
            "adaptive_min_comparisons": DEFAULT_ADAPTIVE_MIN_COMPARISONS if data["adaptive_min_comparisons"] is None
            else data["adaptive_min_comparisons"],
            "adaptive_random_share": DEFAULT_ADAPTIVE_RANDOM_SHARE if data["adaptive_random_share"] is None
            else data["adaptive_random_share"],
            "include_unkept": data["include_unkept"], "include_low_coverage": data["include_low_coverage"],
            "guidelines": data["guidelines"], "consent_text": data["consent_text"],
            "onboarding_questions": list(data["onboarding_questions"]), "members": list(data["members"]),
            "crowd_settings": {**{name: data[name] for name in CROWD_FIELDS},
                               "speeder_seconds": DEFAULT_SPEEDER_SECONDS if data["speeder_seconds"] is None
                               else data["speeder_seconds"]},
        }


class ScopeCountsForm(forms.Form):
    """Query parameters of the live counts (``eligible.json``)."""

    run = forms.ModelChoiceField(queryset=ScoringRun.objects.none())
    datasets = IdsModelMultipleChoiceField(queryset=None)
    subjects = IdsModelMultipleChoiceField(queryset=None, required=False)
    include_unkept = forms.BooleanField(required=False)
    include_low_coverage = forms.BooleanField(required=False)

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        datasets = datasets_of_finished_runs()
        self.fields["run"].queryset = scoring_runs_finished()
        self.fields["datasets"].queryset = datasets
        self.fields["subjects"].queryset = subjects_of_datasets(datasets=datasets)


class HumanSetChoiceField(forms.ModelChoiceField):
    """A loaded human response set, labelled with its id."""

    def label_from_instance(self, obj) -> str:
        return f"{obj.name} v{obj.version} · set {obj.pk}"


class DerivedStudyForm(forms.Form):
    """A study derived from a human response set: which set, which run, how many pairs."""

    human_set = HumanSetChoiceField(queryset=ResponseSet.objects.none(), label="Human response set",
                                    empty_label="Choose a set marked as human…",
                                    help_text="People's answers: one column per person.")
    run = RunChoiceField(queryset=ScoringRun.objects.none(), label="Scoring run to compare",
                         empty_label="Choose a finished run…",
                         help_text="Its methods are what the report compares with the derived judgments.")
    n_pairs = forms.IntegerField(min_value=1, max_value=1_000_000, initial=500, label="Pairs",
                                 help_text="Drawn uniformly among the same-subject pairs (fewer when fewer exist).")
    seed = forms.IntegerField(min_value=0, max_value=2**SEED_BITS - 1, initial=0, label="Seed")
    name = forms.CharField(max_length=200, required=False, label="Study name",
                           help_text="Needed to create the study; not for the preview.")

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["human_set"].queryset = response_sets_human_queryset()
        self.fields["run"].queryset = scoring_runs_finished()


class MarkdownPreviewForm(forms.Form):
    text = forms.CharField(required=False, max_length=100_000, label="Text")
