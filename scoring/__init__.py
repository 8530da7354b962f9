"""Question difficulty and model competency from a response matrix.

Pure numpy/scipy; never imports Django. Every method takes
``R : array-like of shape (n_questions, n_models)``, credit in [0, 1] with NaN
for "not observed" (or a bool/integer 0/1 matrix, fully observed).

Difficulty and competency
    eip, simple_rank, accuracy, question_accuracy_difficulty,
    weighted_accuracy, dataset_difficulty_weights, irt_1pl, irt_2pl, irt_mirt,
    irt_1pl_mml, irt_2pl_mml (marginal ML), mml_log_likelihood
Compact partial credit
    FractionMatrix (exact k/n as uint8 numerators and a bit-packed mask),
    fraction_denominator
Agreement with people
    cohen_kappa, krippendorff_alpha, fleiss_kappa, agreement_rate,
    harder_of_pairs, tie_threshold, merge_ties, verdict_counts, method_agreement,
    pair_kappa, flip_verdicts, with_reversed_pairs,
    bootstrap_agreement_ci, mcnemar_exact, consensus, leave_one_out_consensus,
    leave_one_out_verdicts
"""
from scoring.agreement import (
    AlphaResult,
    FleissResult,
    KappaResult,
    agreement_rate,
    cohen_kappa,
    fleiss_kappa,
    krippendorff_alpha,
)
from scoring.baselines import (
    accuracy,
    dataset_difficulty_weights,
    question_accuracy_difficulty,
    simple_rank,
    weighted_accuracy,
)
from scoring.consensus import (
    ConsensusResult,
    PairConsensus,
    consensus,
    leave_one_out_consensus,
    leave_one_out_verdicts,
)
from scoring.eip import EIPResult, eip
from scoring.exceptions import ConvergenceError, NonFiniteError
from scoring.fraction import FractionMatrix, fraction_denominator
from scoring.irt import IRTResult, irt_1pl, irt_2pl
from scoring.irt_mml import MMLResult, irt_1pl_mml, irt_2pl_mml, mml_log_likelihood
from scoring.mirt import MIRTResult, irt_mirt
from scoring.pair_inference import AgreementCI, McNemarResult, bootstrap_agreement_ci, mcnemar_exact
from scoring.pairs import (
    FIRST,
    SECOND,
    SKIP,
    TIE,
    UNDEFINED,
    MethodAgreement,
    Verdict,
    flip_verdicts,
    harder_of_pairs,
    merge_ties,
    method_agreement,
    pair_kappa,
    tie_threshold,
    verdict_counts,
    with_reversed_pairs,
)

__all__ = [
    "FIRST",
    "SECOND",
    "SKIP",
    "TIE",
    "UNDEFINED",
    "AgreementCI",
    "AlphaResult",
    "ConsensusResult",
    "ConvergenceError",
    "NonFiniteError",
    "EIPResult",
    "FleissResult",
    "FractionMatrix",
    "IRTResult",
    "KappaResult",
    "MIRTResult",
    "MMLResult",
    "McNemarResult",
    "MethodAgreement",
    "PairConsensus",
    "Verdict",
    "accuracy",
    "agreement_rate",
    "bootstrap_agreement_ci",
    "cohen_kappa",
    "consensus",
    "dataset_difficulty_weights",
    "eip",
    "fraction_denominator",
    "fleiss_kappa",
    "flip_verdicts",
    "harder_of_pairs",
    "irt_1pl",
    "irt_1pl_mml",
    "irt_2pl",
    "irt_2pl_mml",
    "irt_mirt",
    "krippendorff_alpha",
    "leave_one_out_consensus",
    "leave_one_out_verdicts",
    "mcnemar_exact",
    "merge_ties",
    "mml_log_likelihood",
    "method_agreement",
    "pair_kappa",
    "question_accuracy_difficulty",
    "simple_rank",
    "tie_threshold",
    "verdict_counts",
    "weighted_accuracy",
    "with_reversed_pairs",
]
