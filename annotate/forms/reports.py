"""The alignment report's parameters (page, downloads and the pools button)."""
from __future__ import annotations

from django import forms


class ReportParamsForm(forms.Form):
    run = forms.IntegerField(required=False, min_value=1, help_text="scoring run id (default: the study's run)")
    min_votes = forms.IntegerField(required=False, min_value=1, max_value=1000, initial=1)
    tie_rule = forms.ChoiceField(required=False, choices=[("evaluator_weight", "evaluator weight"), ("none", "none")])
    n_boot = forms.IntegerField(required=False, min_value=1, max_value=20000, initial=2000)
