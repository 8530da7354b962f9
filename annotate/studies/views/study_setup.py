"""A researcher creates and edits a study (until its first judgment): the
form page, its live counts of eligible questions and pairs, and the Markdown
preview. The pairs are drawn by :mod:`annotate.studies.services.studies`, exactly as
``manage.py create_study`` draws them."""
from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_POST

from annotate.core import (
    JUDGMENTS_AND_SKIPS,
    ascii_int,
    counted,
    form_add_service_error,
    form_problems,
    json_refusals,
    posted,
    posted_files,
    render_markdown,
)
from annotate.models import Study, StudyStatus
from annotate.studies.forms.judgment_import import JudgmentImportForm
from annotate.studies.forms.stopping import StoppingRulesForm, stopping_form_problems
from annotate.studies.forms.studies import DerivedStudyForm, MarkdownPreviewForm, ScopeCountsForm, StudyForm
from annotate.studies.selectors.studies import (
    study_evaluator_count,
    study_group_counts,
    study_judgment_count,
    study_pool_size,
    study_scope_frozen,
)
from annotate.studies.selectors.study_scope import (
    derive_prerequisites_missing,
    import_example_questions,
    study_scope_counts,
)
from annotate.studies.services.derived import PAIRING_RULE, derived_study_create, derived_study_preview
from annotate.studies.services.judgment_import import MAX_PROBLEMS, JudgmentImportError, judgments_import
from annotate.studies.services.scope import StudyScopeFrozenError
from annotate.studies.services.stopping import StoppingInput
from annotate.studies.services.studies import study_create, study_edit
from annotate.studies.views.access import researcher_required, study_access_required


def _pairs_text(study: Study) -> str:
    if study.is_adaptive:
        return (f"a pool of {counted(study_pool_size(study=study), 'question')}, pairs chosen adaptively, "
                f"{study.n_pairs:,} per evaluator")
    return counted(study.n_pairs, "pair")


@researcher_required
def study_create_page(request: HttpRequest) -> HttpResponse:
    """The New-study page: every setting, and the stopping rules of the manage page (its form, its service)."""
    form = StudyForm(posted(request), owner=request.user)
    stopping_form = StoppingRulesForm.on_creation(posted(request))
    if request.method == "POST" and form.is_valid() and stopping_form.is_valid():
        try:
            study = study_create(**form.service_kwargs(), created_by=request.user, status=StudyStatus.DRAFT,
                                 stopping=StoppingInput(**stopping_form.cleaned_data))
        except ValueError as exc:
            form_add_service_error(form, exc, others=(stopping_form,))
        else:
            messages.success(request, f"Study {study.name!r} created as a draft with {_pairs_text(study)}. "
                                      "Check it, then launch it.")
            return redirect("annotate:study_manage", study_id=study.pk)
    stopping_problems = stopping_form_problems(stopping_form) if stopping_form.errors else ""
    return render(request, "annotate/judging/study_form.html",
                  {"form": form, "study": None, "stopping_form": stopping_form,
                   "stopping_problems": stopping_problems}, status=400 if request.method == "POST" else 200)


@researcher_required
def study_derive_page(request: HttpRequest) -> HttpResponse:
    """Preview (counts, nothing written) or create a study derived from a human response set; a refused
    form (or a service's refusal, on the field it names) is re-shown with status 400, nothing written."""
    form = DerivedStudyForm(posted(request))
    preview = None
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        kwargs = {"human_set_id": data["human_set"].pk, "run": data["run"], "n_pairs": data["n_pairs"],
                  "seed": data["seed"]}
        try:
            if request.POST.get("action") == "create":
                study, _ = derived_study_create(**kwargs, name=data["name"], created_by=request.user)
                messages.success(request,
                                 f"Derived study {study.name!r} created with {counted(study.n_pairs, 'pair')}.")
                return redirect("annotate:study_report", study_id=study.pk)
            preview = derived_study_preview(**kwargs)
        except ValueError as exc:
            form_add_service_error(form, exc)
    no_human_sets, no_runs = derive_prerequisites_missing()
    return render(request, "annotate/judging/study_derive.html",
                  {"form": form, "preview": preview, "rule": PAIRING_RULE, "no_human_sets": no_human_sets,
                   "no_runs": no_runs}, status=400 if form.errors else 200)


@researcher_required
def study_import_page(request: HttpRequest) -> HttpResponse:
    """Import judgments made elsewhere (CSV, JSON Lines, Label Studio) as a closed study; on any problem,
    list every one (file, row, column), write nothing and answer 400 (as for a refused form)."""
    run = request.GET.get("run", "")
    form = JudgmentImportForm(posted(request), posted_files(request),
                              initial={"run": ascii_int(run)} if ascii_int(run) is not None else {})
    problems: list[str] = []
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            study = judgments_import(files=data["files"], run=data["run"], name=data["name"],
                                     created_by=request.user)
        except JudgmentImportError as exc:
            problems = exc.problems
        except ValueError as exc:
            form_add_service_error(form, exc)
        else:
            groups = study_group_counts(study=study)
            in_groups = (" in groups " + ", ".join(f"{g} ({n:,})" for g, n in groups.items())) if groups else ""
            messages.success(request, f"Imported study {study.name!r}: {counted(study.n_pairs, 'pair')}, "
                                      f"{counted(study_evaluator_count(study=study), 'evaluator')}{in_groups}, "
                                      f"{counted(study_judgment_count(study=study), *JUDGMENTS_AND_SKIPS)}.")
            return redirect("annotate:study_report", study_id=study.pk)
    return render(request, "annotate/judging/study_import.html",
                  {"form": form, "problems": problems, "more": max(0, len(problems) - MAX_PROBLEMS),
                   "shown": problems[:MAX_PROBLEMS], "example": import_example_questions()},
                  status=400 if request.method == "POST" else 200)


@study_access_required
def study_edit_page(request: HttpRequest, study_id: int) -> HttpResponse:
    study = get_object_or_404(Study, pk=study_id)
    if study_scope_frozen(study=study):
        messages.error(request, "This study has judgments, so its settings can no longer change.")
        return redirect("annotate:study_manage", study_id=study_id)
    form = StudyForm(posted(request), owner=study.created_by, initial=StudyForm.initial_of(study))
    if request.method == "POST" and form.is_valid():
        try:
            study = study_edit(study=study, **form.service_kwargs())
        except (StudyScopeFrozenError, ValueError) as exc:
            form_add_service_error(form, exc)
        else:
            messages.success(request, f"Study {study.name!r} saved; " + (
                f"its pool of questions was chosen again ({_pairs_text(study)})." if study.is_adaptive
                else f"its {counted(study.n_pairs, 'pair')} {'was' if study.n_pairs == 1 else 'were'} drawn again."))
            return redirect("annotate:study_manage", study_id=study.pk)
    return render(request, "annotate/judging/study_form.html", {"form": form, "study": study},
                  status=400 if request.method == "POST" else 200)


@json_refusals
@researcher_required
@require_GET
def study_scope_counts_json(request: HttpRequest) -> HttpResponse:
    """Eligible questions and possible pairs for the chosen run, datasets and subjects."""
    form = ScopeCountsForm(request.GET)
    if not form.is_valid():
        return JsonResponse({"error": form_problems(form), "errors": form.errors.get_json_data()}, status=400)
    data = form.cleaned_data
    counts = study_scope_counts(
        run=data["run"], datasets=list(data["datasets"]), subjects=list(data["subjects"]) or None,
        include_unkept=data["include_unkept"], include_low_coverage=data["include_low_coverage"],
    )
    return JsonResponse({
        "subjects": [vars(s) for s in counts.subjects],
        "n_questions": counts.n_questions, "n_eligible": counts.n_eligible,
        "n_possible_pairs": counts.n_possible_pairs,
        "excluded": [{"reason": reason, "n": n} for reason, n in counts.excluded.items()],
    })


@json_refusals
@researcher_required
@require_POST
def markdown_preview(request: HttpRequest) -> HttpResponse:
    """The sanitised HTML of the posted Markdown (``text``), as the evaluators will see it."""
    form = MarkdownPreviewForm(request.POST)
    if not form.is_valid():
        return HttpResponseBadRequest(f"No preview: {form_problems(form)}")
    return JsonResponse({"html": render_markdown(form.cleaned_data["text"])})
