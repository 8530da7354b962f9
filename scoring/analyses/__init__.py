"""The paper's analyses as pure functions on a response matrix.

Every function takes ``R`` of shape ``(n_questions, n_models)`` (credit in
[0, 1], NaN = not observed) or results derived from it, returns a frozen
dataclass, and never imports Django.

=========================  ==========================================  ======================
module                     functions                                   paper
=========================  ==========================================  ======================
``efficiency``             time_methods, eip_scaling,                  3.4, tables 3-4
                           simulate_responses
``robustness``             model_removal_robustness,                   3.5, E.1, E.2,
                           leave_one_out_models, leave_one_dataset_out tables 5, 9, 10
``case_study``             simulate_case_study, case_study_rankings,   4, tables 6-7
                           case_study_recovery
``rank_changes``           eip_vs_accuracy,                            3.2, G, figures 5,
                           accuracy_by_difficulty_tertile              12, 13
``profiles``               difficulty_profiles                         3.2, figure 9
``pools``                  pool_analysis, size_pools, access_pools     3.2-3.3, figures 6, 8
=========================  ==========================================  ======================

An undefined statistic (a constant vector, too few values, a pool EIP cannot
score) is reported with an explicit reason (:class:`Correlation`), never as a
silent NaN.
"""
from scoring.analyses._common import Correlation, Summary, correlation, summarise
from scoring.analyses.case_study import (
    CaseStudyData,
    CaseStudyRankings,
    CaseStudyRecovery,
    case_study_rankings,
    case_study_recovery,
    simulate_case_study,
)
from scoring.analyses.efficiency import (
    ScalingResult,
    SimulatedResponses,
    TimingResult,
    eip_scaling,
    simulate_responses,
    time_methods,
)
from scoring.analyses.pools import NamedPools, PoolAnalysis, PoolResult, access_pools, pool_analysis, size_pools
from scoring.analyses.profiles import DifficultyProfiles, difficulty_profiles
from scoring.analyses.rank_changes import (
    RankComparison,
    TertileAccuracy,
    accuracy_by_difficulty_tertile,
    eip_vs_accuracy,
)
from scoring.analyses.robustness import (
    LeaveOneDatasetOutResult,
    ModelRemovalResult,
    leave_one_dataset_out,
    leave_one_out_models,
    model_removal_robustness,
)

__all__ = [
    "Correlation",
    "Summary",
    "correlation",
    "summarise",
    "CaseStudyData",
    "CaseStudyRankings",
    "CaseStudyRecovery",
    "case_study_rankings",
    "case_study_recovery",
    "simulate_case_study",
    "ScalingResult",
    "SimulatedResponses",
    "TimingResult",
    "eip_scaling",
    "simulate_responses",
    "time_methods",
    "NamedPools",
    "PoolAnalysis",
    "PoolResult",
    "access_pools",
    "pool_analysis",
    "size_pools",
    "DifficultyProfiles",
    "difficulty_profiles",
    "RankComparison",
    "TertileAccuracy",
    "accuracy_by_difficulty_tertile",
    "eip_vs_accuracy",
    "LeaveOneDatasetOutResult",
    "ModelRemovalResult",
    "leave_one_dataset_out",
    "leave_one_out_models",
    "model_removal_robustness",
]
