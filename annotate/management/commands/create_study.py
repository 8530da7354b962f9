"""Create a judging study: fixed same-subject pairs sampled from a scoring run,
or (``--strategy adaptive``) a pool of questions whose pairs are chosen as
evaluators judge."""
from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.urls import reverse

from annotate.core import counted
from annotate.management.lookups import (
    OWNER_HELP,
    datasets_from_option,
    owner_from_option,
    scoring_run_from_option,
    subjects_from_option,
)
from annotate.management.options import add_base_url_option, checked_base_url, column_option
from annotate.models import Dataset, PairStrategy, ScoringRun, Study
from annotate.models.studies import DEFAULT_ADAPTIVE_MIN_COMPARISONS, DEFAULT_ADAPTIVE_RANDOM_SHARE
from annotate.runs import scoring_run_latest_covering
from annotate.studies import (
    StoppingInput,
    StoppingRulesForm,
    invitation_create,
    stopping_form_problems,
    study_create,
    study_pool_size,
)

#: Stopping-rule options named as the manage page's form fields they fill (``--compare`` fills the methods).
STOPPING_OPTIONS = ("target_reliability", "alpha", "max_judgments", "budget", "pay_per_judgment")
#: The number options, bounded by the columns they are stored in (an error names the option).
OPTION_TYPES = {
    "pairs": column_option(Study, "n_pairs", min_value=1),
    "seed": column_option(Study, "seed", min_value=0),
    "run_id": column_option(ScoringRun, "id", min_value=1),
    "target": column_option(Study, "target_judgments_per_pair", min_value=1),
    "share": column_option(Study, "attention_check_share", min_value=0.0, max_value=0.5),
    "min_comparisons": column_option(Study, "adaptive_min_comparisons", min_value=1),
    "random_share": column_option(Study, "adaptive_random_share", min_value=0.0, max_value=1.0),
}


class Command(BaseCommand):
    help = (
        "Create an open study of N same-subject question pairs from a finished scoring run "
        "(default: the latest finished run with results for the datasets) and print an invitation link."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--name", required=True, help="unique study name (shown to evaluators)")
        parser.add_argument("--datasets", nargs="+", required=True, metavar="DATASET", help="dataset names")
        parser.add_argument("--subjects", nargs="*", default=None, metavar="SUBJECT",
                            help="subject names (default: every subject of the datasets)")
        parser.add_argument("--pairs", type=OPTION_TYPES["pairs"], default=70,
                            help="number of pairs (default 70, as in the paper); with --strategy adaptive, the pairs "
                                 "each evaluator judges")
        parser.add_argument("--seed", type=OPTION_TYPES["seed"], default=1, help="sampler seed (default 1)")
        parser.add_argument("--strategy", choices=PairStrategy.values, default=PairStrategy.UNIFORM)
        parser.add_argument("--run", type=OPTION_TYPES["run_id"], default=None, metavar="RUN_ID",
                            help="scoring run id (default: latest finished run covering the datasets)")
        parser.add_argument("--target", type=OPTION_TYPES["target"], default=20,
                            help="votes per pair before it stops being offered")
        parser.add_argument("--include-unkept", action="store_true",
                            help="also pair questions every model solved or failed")
        parser.add_argument("--include-low-coverage", action="store_true",
                            help="also pair questions observed by fewer than the run's min_models (default 3) models")
        parser.add_argument("--owner", default=None, metavar="USERNAME",
                            help=OWNER_HELP)
        parser.add_argument("--attention-check-share", type=OPTION_TYPES["share"], default=0.0, metavar="SHARE",
                            help="share (0 to 0.5) of attention-check pairs with a known answer, mixed in blind "
                                 "(default 0: none)")
        parser.add_argument("--min-comparisons", type=OPTION_TYPES["min_comparisons"],
                            default=DEFAULT_ADAPTIVE_MIN_COMPARISONS, metavar="N",
                            help="adaptive: comparisons every question gets before informative pairs take over "
                                 "(default %(default)s)")
        parser.add_argument("--random-share", type=OPTION_TYPES["random_share"],
                            default=DEFAULT_ADAPTIVE_RANDOM_SHARE, metavar="SHARE",
                            help="adaptive: share (0 to 1) of pairs drawn at random (default %(default)s)")
        rules = parser.add_argument_group("stopping rules (as on the manage page; none: the study runs until its "
                                          "pairs reach their target votes)")
        rules.add_argument("--target-reliability", default=None, metavar="R",
                           help="stop when SSR and split-half of the human scale reach R, in (0, 1)")
        rules.add_argument("--compare", nargs=2, default=None, metavar=("METHOD_A", "METHOD_B"),
                           help="stop when the sequential sign test decides which of two methods (keys) agrees "
                                "better with people")
        rules.add_argument("--alpha", default="0.05", help="level of that test (default %(default)s)")
        rules.add_argument("--max-judgments", default=None, metavar="N", help="stop after N judgments (skips count)")
        rules.add_argument("--budget", default=None, metavar="AMOUNT",
                           help="stop when judgments x --pay-per-judgment reach AMOUNT")
        rules.add_argument("--pay-per-judgment", default=None, metavar="AMOUNT", help="pay per judgment")
        parser.add_argument("--no-invitation", action="store_true", help="do not create an invitation link")
        add_base_url_option(parser, purpose="the printed invitation link")

    def handle(self, *args, **options) -> str:
        base = checked_base_url(options["base_url"])
        datasets = datasets_from_option(options["datasets"])
        subjects = None if options["subjects"] is None else subjects_from_option(options["subjects"])
        run = self._run(options["run"], datasets)
        owner = owner_from_option(options["owner"])
        stopping = self._stopping(options)
        try:
            study = study_create(
                name=options["name"],
                run=run,
                datasets=datasets,
                subjects=subjects,
                n_pairs=options["pairs"],
                seed=options["seed"],
                strategy=options["strategy"],
                target_judgments_per_pair=options["target"],
                include_unkept=options["include_unkept"],
                include_low_coverage=options["include_low_coverage"],
                created_by=owner,
                attention_check_share=options["attention_check_share"],
                adaptive_min_comparisons=options["min_comparisons"],
                adaptive_random_share=options["random_share"],
                stopping=stopping,
            )
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        if not options["no_invitation"]:
            invitation = invitation_create(study=study, note="created by create_study")
            link = reverse("annotate:study_join", kwargs={"token": invitation.token})
            self.stdout.write(f"invitation link: {base}{link}")
        if study.is_adaptive:
            return (f"study {study.pk} {study.name!r}: adaptive, a pool of "
                    f"{counted(study_pool_size(study=study), 'question')}, {counted(study.n_pairs, 'pair')} per "
                    f"evaluator (at least {counted(study.adaptive_min_comparisons, 'comparison')} per "
                    f"question, random share {study.adaptive_random_share:g}, seed {study.seed}) from run {run.pk}")
        return (f"study {study.pk} {study.name!r}: {counted(study.n_pairs, 'pair')} ({study.strategy}, "
                f"seed {study.seed})"
                f" from run {run.pk}")

    def _stopping(self, options: dict) -> StoppingInput:
        """The stopping-rule options read by the manage page's form (same fields, same messages)."""
        data = {name: options[name] or "" for name in STOPPING_OPTIONS}
        data["method_a"], data["method_b"] = options["compare"] or ("", "")
        form = StoppingRulesForm(data)
        if not form.is_valid():
            raise CommandError(stopping_form_problems(form))
        return StoppingInput(**form.cleaned_data)

    def _run(self, run_id: int | None, datasets: list[Dataset]) -> ScoringRun:
        if run_id is not None:
            return scoring_run_from_option(run_id)
        run = scoring_run_latest_covering(datasets=datasets)
        if run is None:
            raise CommandError("no finished scoring run has results for these datasets; score them first or pass --run")
        return run
