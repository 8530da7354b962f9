"""Render an alignment report (see :mod:`annotate.reports.services`) as files:
JSON, tidy CSV tables, a codebook, one zip of them all, and plots (PNG or SVG).

Every renderer takes the typed report
(:class:`~annotate.reports.services.model.AlignmentReport`); a report's JSON
dict is accepted too and read back with ``AlignmentReport.from_json``. The
tables come from :mod:`annotate.reports.services.tables` (the same ones the
page shows). Each CSV is tidy: one header row of snake_case column keys, no
notes inside, ids as integers, fractions in [0, 1], blank = missing
(undefined values are blank; report.json holds the reasons); the codebook
says what each column means.

CSV files are written by :mod:`annotate.core.downloads` like every other download:
UTF-8 without a byte-order mark, CRLF line ends, and a formula-injection
guard: a text cell that starts with ``=``,
``+``, ``-``, ``@``, a tab or a carriage return gets a leading single quote
(OWASP "CSV injection"). Numbers stay numbers, negative ones included: only
non-numeric text is guarded.

Plots use matplotlib's ``Figure`` API (the Agg canvas; no pyplot state), so
they are safe to draw inside a web request.
"""
from __future__ import annotations

import io
import itertools
import json
import textwrap
import zipfile
from collections.abc import Callable, Iterable, Iterator, Sequence
from datetime import UTC, datetime
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from django.utils.text import slugify

from annotate.core import (
    ENCODING_NOTE,
    counted,
    difficulty_profile_figure,
    forest_figure,
    human_scale_figure,
    rows_csv_bytes,
    rows_csv_lines,
)
from annotate.reports.selectors.alignment import JUDGMENT_COLUMNS
from annotate.reports.services.headline import report_headline
from annotate.reports.services.model import AlignmentReport
from annotate.reports.services.scale import correlation_basis, scale_fragmented
from annotate.reports.services.table_cells import ACCOUNT_NOTE, Table
from annotate.reports.services.tables import csv_tables

if TYPE_CHECKING:
    from matplotlib.figure import Figure

CONTENT_TYPES = {"png": "image/png", "svg": "image/svg+xml"}
ERR_PLOT = "name must be one of {names}; got {value!r}"
ERR_FORMAT = "fmt must be one of {formats}; got {value!r}"
ERR_TABLE = "key must be one of the report's CSV tables {keys}; got {value!r}"


# --------------------------------------------------------------------------- CSV


def as_report(report: AlignmentReport | dict) -> AlignmentReport:
    """The typed report (a JSON dict of one is read back)."""
    return report if isinstance(report, AlignmentReport) else AlignmentReport.from_json(report)


def table_csv(table: Table) -> bytes:
    """One table as a tidy CSV: a header row of column keys, then the raw values."""
    return rows_csv_bytes(table.csv_rows())


def report_csv(report: AlignmentReport | dict) -> bytes:
    """The main agreement table as a tidy CSV: one row per method and rater
    (each evaluator, then the consensus); see :func:`report_zip` for every table."""
    typed = as_report(report)
    [table] = [t for t in csv_tables(typed) if t.key == "agreement"]
    return table_csv(table)


def report_table_keys(report: AlignmentReport | dict) -> list[str]:
    """Keys of the tables written as CSV files (``<key>.csv`` in the zip), in page order."""
    return [t.key for t in csv_tables(as_report(report))]


def report_table_csv(report: AlignmentReport | dict, key: str) -> bytes:
    """One table of the report as its tidy CSV, the same bytes as ``<key>.csv`` in the zip.

    Raises
    ------
    ValueError
        If no CSV table has the key ``key`` (the message lists the keys).
    """
    tables = {t.key: t for t in csv_tables(as_report(report))}
    if key not in tables:
        raise ValueError(ERR_TABLE.format(keys=sorted(tables), value=key))
    return table_csv(tables[key])


def judgments_file_name(study_id: int) -> str:
    """File name of a study's judgments.csv (raw judgments: no report parameter applies)."""
    return f"study-{study_id}_judgments.csv"


def judgments_csv(rows: Sequence[dict]) -> bytes:
    """The raw judgments (from :func:`annotate.reports.selectors.alignment.study_judgment_rows`), one row each."""
    return rows_csv_bytes([list(JUDGMENT_COLUMNS), *([row[c] for c in JUDGMENT_COLUMNS] for row in rows)])


def judgments_csv_stream(rows: Iterable[dict]) -> Iterator[bytes]:
    """:func:`judgments_csv` as a stream of chunks (the same bytes), for a streamed download."""
    return rows_csv_lines(itertools.chain([list(JUDGMENT_COLUMNS)], ([row[c] for c in JUDGMENT_COLUMNS]
                                                                      for row in rows)))


def pairs_csv_stream(report: AlignmentReport | dict) -> Iterator[bytes]:
    """The report's pairs.csv (every pair, the same bytes as in the zip) as a stream of chunks."""
    [table] = [t for t in csv_tables(as_report(report)) if t.key == "pairs"]
    return rows_csv_lines(table.csv_rows())


#: A report.json download holds at most this many pairs (a page; ``pairs_page`` says which);
#: pairs.csv holds every pair.
JSON_PAIRS_LIMIT = 10_000


def report_json(report: AlignmentReport | dict, *, pairs_offset: int = 0,
                pairs_limit: int = JSON_PAIRS_LIMIT) -> bytes:
    """``json.dumps`` of the report's JSON (UTF-8, indented; NaN is refused); it
    holds the ``parameters`` object (:meth:`AlignmentReport.parameters`) and the
    pairs ``pairs_offset`` to ``pairs_offset + pairs_limit`` (``pairs_page``):
    every pair of a study of up to :data:`JSON_PAIRS_LIMIT` pairs."""
    document = as_report(report).to_json(pairs_offset=pairs_offset, pairs_limit=pairs_limit)
    return json.dumps(document, indent=2, ensure_ascii=False, allow_nan=False).encode("utf-8")


def parameters_json(report: AlignmentReport | dict) -> bytes:
    """The report's parameters (:meth:`AlignmentReport.parameters`) as a JSON object (the zip's parameters.json)."""
    return json.dumps(as_report(report).parameters(), indent=2, ensure_ascii=False).encode("utf-8")


def _name_part(value: object) -> str:
    """``value`` slugified with ``-`` only (``_`` separates the parameters of a file name)."""
    return slugify(str(value)).replace("_", "-")


def report_file_stem(report: AlignmentReport | dict) -> str:
    """The parameters of a report download in its file name, so that two
    downloads computed differently never share a name.

    Examples
    --------
    ``study-3_run-12_minvotes-2_ties-evaluator-weight_boot-2000-seed-0_label-mmlu-level``
    (``label-none`` without a difficulty label).
    """
    p = as_report(report).parameters()
    label = (_name_part(p["label_key"]) or "key") if p["label_key"] else "none"
    return (f"study-{p['study']}_run-{p['scoring_run']}_minvotes-{p['min_votes']}_ties-{_name_part(p['tie_rule'])}"
            f"_boot-{p['n_boot']}-seed-{p['bootstrap_seed']}_label-{label}")


def report_file_name(report: AlignmentReport | dict, what: str, *, ext: str) -> str:
    """``<report_file_stem>_<what>.<ext>``, e.g. ``..._label-level_report.csv``."""
    return f"{report_file_stem(report)}_{what}.{ext}"


# --------------------------------------------------------------------------- codebook and zip

#: The judgments.csv columns: (meaning, unit).
JUDGMENT_CODEBOOK = {
    "study": ("study name", ""), "pair_id": ("pair id", ""), "pair_position": ("position of the pair (0 = first)", ""),
    "subject": ("subject of the pair's questions", ""),
    "dataset_a": ("dataset of question a", ""),
    "question_a": ("external id of question a (canonical order) in dataset_a", ""),
    "dataset_b": ("dataset of question b", ""),
    "question_b": ("external id of question b in dataset_b", ""),
    "left_dataset": ("dataset of the question shown on the left", ""),
    "left_question": ("external id of the question shown on the left, in left_dataset", ""),
    "right_dataset": ("dataset of the question shown on the right", ""),
    "right_question": ("external id of the question shown on the right, in right_dataset", ""),
    "choice": ("button pressed: left, right or skip", ""),
    "harder_dataset": ("dataset of the question called harder; blank for a skip", ""),
    "harder_question": ("external id of the question called harder, in harder_dataset; blank for a skip", ""),
    "verdict": ("canonical verdict: a, b or skip", ""), "evaluator": (ACCOUNT_NOTE, ""),
    "field_of_study": ("evaluator's field of study (code)", ""),
    "education_level": ("evaluator's education level (code)", ""),
    "shown_at": ("when the pair was shown (ISO 8601)", "time"),
    "submitted_at": ("when the answer was saved (ISO 8601)", "time"),
    "seconds": ("server-measured time from showing to answer", "seconds"),
    "client_seconds": ("browser-measured time; blank when not sent", "seconds"),
    "attention_check": ("1 when the pair is an attention check (known answer; in no agreement statistic), else 0",
                        ""),
    "evaluator_excluded": ("1 when the researcher excluded the evaluator from analyses, else 0", ""),
    "platform_participant_id": ("crowd platform participant id from the join URL (e.g. PROLIFIC_PID); blank if none",
                                ""),
    "platform_study_id": ("crowd platform study id from the join URL (e.g. STUDY_ID); blank if none", ""),
    "platform_session_id": ("crowd platform session id from the join URL (e.g. SESSION_ID); blank if none", ""),
}


def product_version() -> str:
    """The installed ``eip-annotate`` version ("unknown" when not installed)."""
    try:
        return version("eip-annotate")
    except PackageNotFoundError:
        return "unknown"


def _md(value) -> str:
    return str(value).replace("|", "\\|").replace("\n", " ")


def codebook(report: AlignmentReport | dict, *, created_at: datetime | None = None) -> bytes:
    """A short Markdown codebook of the report download: the parameters, the
    product version and time, then each file and each column's meaning and unit."""
    typed = as_report(report)
    created_at = created_at or datetime.now(UTC)
    p, run, pools = typed.params, typed.run, typed.pools
    lines = [
        f"# Alignment report of study {typed.study.name!r} (id {typed.study.id})", "",
        f"- product: eip-annotate {product_version()}",
        f"- written: {created_at.isoformat(timespec='seconds')}; report computed: {typed.generated_at}",
        f"- report schema version: {typed.schema_version} (annotate/report_schema.json)",
        f"- scoring run: {run.id} (response set {run.response_set}"
        f"{'' if run.is_study_run else '; not the run the pairs came from'})",
        f"- consensus: min_votes {p.min_votes}, tie rule {p.tie_rule!r}; {p.method_tie_rule}",
        "- parameters (also parameters.json, report.json's `parameters`, the last columns of every table CSV and "
        f"the download's file name): {json.dumps(typed.parameters(), ensure_ascii=False)}",
        f"- bootstrap: {counted(p.n_boot, 'replicate')}, seed {p.bootstrap_seed}, {p.ci_level:.0%} percentile intervals"
        + _other_boots(typed.parameters()),
        "- difficulty label key: " + (
            f"{typed.labels.key!r} ({'autodetected' if typed.labels.autodetected else 'given'})"
            if typed.labels.key else f"none ({typed.labels.undefined_reason})"),
        "- model pools: " + (f"stored analysis {pools.analysis_run} (EIP alpha {pools.alpha:g}, size thresholds "
                             f"{list(pools.size_thresholds)} billion parameters)" if pools.available
                             else str(pools.undefined_reason)),
        *([f"- judges weighted by reliability (crowd_*.csv): {typed.crowd.model}. {typed.crowd.weighting}"]
          if typed.crowd is not None else []),
        "", ENCODING_NOTE, "",
        "Every CSV has one header row; blank = missing or undefined (report.json gives the reason); "
        "fractions are in [0, 1] (the page shows them in percent); ids are integers. Text cells that a spreadsheet "
        "would run as a formula start with a single quote.", "",
        "## report.json", "", "The whole report, documented by annotate/report_schema.json.", "",
        "## parameters.json", "", "The parameters above as one JSON object (the same as report.json's "
        "`parameters`).", "",
    ]
    for table in csv_tables(typed):
        lines += [f"## {table.file_name}", "", table.title + ".", ""]
        lines += [f"- {n}" for n in table.notes]
        lines += ["", "| column | meaning | unit |", "|---|---|---|"]
        lines += [f"| {c.key} | {_md(c.description or c.label)} | {_md(c.unit)} |" for c in table.columns]
        lines.append("")
    lines += ["## judgments.csv", "", "Every judgment and skip, by pair then evaluator. Each question is named by "
              "its dataset and external id (two datasets may share external ids). Raw judgments: no report "
              "parameter applies, so they carry none.", "",
              "| column | meaning | unit |", "|---|---|---|"]
    lines += [f"| {k} | {_md(JUDGMENT_CODEBOOK[k][0])} | {JUDGMENT_CODEBOOK[k][1]} |" for k in JUDGMENT_COLUMNS]
    return ("\n".join(lines) + "\n").encode("utf-8")


def report_files(report: AlignmentReport | dict, judgments: Sequence[dict]) -> dict[str, bytes]:
    """The files of a report download, by name: one tidy CSV per table,
    judgments.csv, report.json, parameters.json and codebook.md."""
    typed = as_report(report)
    files = {t.file_name: table_csv(t) for t in csv_tables(typed)}
    files["judgments.csv"] = judgments_csv(judgments)
    files["report.json"] = report_json(typed)
    files["parameters.json"] = parameters_json(typed)
    files["codebook.md"] = codebook(typed)
    return files


def _other_boots(parameters: dict) -> str:
    """The bootstrap settings besides ``n_boot`` that some tables' intervals use, said beside it."""
    parts = []
    if parameters.get("scale_n_boot") is not None:
        parts.append(f"{parameters['scale_n_boot']} for the human scale and its correlations (scale_n_boot: "
                     "at most 200, as each replicate refits the scale)")
    if parameters.get("label_n_boot") is not None:
        parts.append(f"{parameters['label_n_boot']} for the label analysis (label_n_boot: its own setting)")
    return "; " + "; ".join(parts) if parts else ""


def report_zip(report: AlignmentReport | dict, judgments: Sequence[dict]) -> bytes:
    """:func:`report_files` as one zip (deflated)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, content in report_files(report, judgments).items():
            archive.writestr(name, content)
    return buffer.getvalue()


class _Pipe(io.RawIOBase):
    """A write-only, non-seekable file whose bytes are taken out as they come (for a streamed zip)."""

    def __init__(self) -> None:
        super().__init__()
        self._chunks: list[bytes] = []
        self._written = 0

    def writable(self) -> bool:
        return True

    def write(self, data) -> int:  # type: ignore[override]
        self._chunks.append(bytes(data))
        self._written += len(data)
        return len(data)

    def tell(self) -> int:  # zipfile asks where it is to record member offsets; seeking stays unsupported
        return self._written

    def take(self) -> bytes:
        out, self._chunks = b"".join(self._chunks), []
        return out


def report_zip_stream(report: AlignmentReport | dict, judgments: Iterable[dict]) -> Iterator[bytes]:
    """:func:`report_zip` as a stream of chunks, for a download that never holds the whole zip.

    The same members with the same contents (``zipfile`` writes to a
    non-seekable stream with data descriptors, so the bytes of the archive
    differ from :func:`report_zip`'s, its unpacked files do not). The CSV
    tables and judgments.csv are deflated chunk by chunk as they are
    written; at any time this holds one chunk of rows and what the
    compressor has not yet given out.
    """
    typed = as_report(report)
    pipe = _Pipe()
    with zipfile.ZipFile(pipe, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        members: list[tuple[str, Iterable[bytes]]] = [
            (t.file_name, rows_csv_lines(t.csv_rows())) for t in csv_tables(typed)]
        members.append(("judgments.csv", judgments_csv_stream(judgments)))
        members += [("report.json", [report_json(typed)]), ("parameters.json", [parameters_json(typed)]),
                    ("codebook.md", [codebook(typed)])]
        for name, chunks in members:
            with archive.open(name, "w", force_zip64=True) as member:
                for chunk in chunks:
                    member.write(chunk)
                    if out := pipe.take():
                        yield out
            if out := pipe.take():
                yield out
    if out := pipe.take():  # the central directory
        yield out


# --------------------------------------------------------------------------- plots


def plot_forest(report: AlignmentReport) -> Figure:
    """The report's answer: each method's agreement with people, with intervals
    (:func:`~annotate.reports.services.headline.report_headline`'s panels:
    with the consensus, with the human scale, with the label), the best method bold.
    Every panel lists the methods in the consensus panel's order; a method a
    panel has no row for is drawn "undefined"."""
    headline = report_headline(report)
    order = [r.method for r in headline.panels[0].rows]
    labels = {r.method: r.label for r in headline.panels[0].rows}
    panels = []
    for panel in headline.panels:
        by_key = {r.method: r for r in panel.rows}
        rows = []
        for key in order:
            r = by_key.get(key)
            rows.append((labels[key], None, None, None) if r is None else (labels[key], r.value, r.low, r.high))
        panels.append((panel.title, panel.axis, panel.percent, rows))
    best = headline.lead.best
    return forest_figure(panels=panels, highlight=None if best is None else report.label(best))


def plot_agreement(report: AlignmentReport) -> Figure:
    """Agreement of each method with the consensus, with its bootstrap interval,
    and the mean over evaluators."""
    from matplotlib.figure import Figure
    methods = report.available
    fig = Figure(figsize=(max(4.5, 1.1 * len(methods) + 1.5), 3.6), layout="constrained")
    ax = fig.add_subplot()
    x = np.arange(len(methods))
    for i, m in enumerate(methods):
        c = report.consensus_agreement[m.key]
        if c.agreement is None:
            ax.text(i, 2, "undefined", ha="center", rotation=90, fontsize=8)
            continue
        value = 100 * c.agreement
        ci = c.ci.agreement
        err = None if ci is None else [[value - 100 * ci[0]], [100 * ci[1] - value]]
        ax.bar(i, value, color="#2b6cb0" if m.key == "eip" else "#a0aec0", yerr=err, capsize=4)
        mean = report.method_summary[m.key].agreement.mean
        if mean is not None:
            ax.plot(i, 100 * mean, "o", color="#c05621", label="evaluator mean" if i == 0 else None)
    ax.set_xticks(x, [m.label for m in methods], rotation=20, ha="right")
    ax.set_ylim(0, 100)
    ax.set_ylabel("agreement with consensus (%)")
    ax.set_title(f"Agreement with the human consensus ({report.params.ci_level:.0%} bootstrap CI)", fontsize=10)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=8, loc="lower right")
    return fig


def plot_heatmap(report: AlignmentReport) -> Figure:
    """Evaluators (rows) x methods (columns): agreement in percent; undefined cells grey."""
    from matplotlib.figure import Figure
    methods = report.available
    evaluators = report.evaluators
    values = np.array([[np.nan if e.methods[m.key].agreement is None else 100 * e.methods[m.key].agreement
                        for m in methods] for e in evaluators], dtype=float).reshape(len(evaluators), len(methods))
    fig = Figure(figsize=(1.0 * len(methods) + 2.5, 0.28 * len(evaluators) + 1.6), layout="constrained")
    ax = fig.add_subplot()
    ax.set_facecolor("#d9d9d9")
    image = ax.imshow(np.ma.masked_invalid(values), cmap="viridis", vmin=0, vmax=100, aspect="auto")
    ax.set_xticks(np.arange(len(methods)), [m.label for m in methods], rotation=30, ha="right", fontsize=8)
    ax.set_yticks(np.arange(len(evaluators)), [e.short for e in evaluators], fontsize=7)
    if len(evaluators) <= 40:
        for (r, c), v in np.ndenumerate(values):
            ax.text(c, r, "–" if np.isnan(v) else f"{v:.0f}", ha="center", va="center", fontsize=6,
                    color="black" if np.isnan(v) or v > 60 else "white")
    fig.colorbar(image, ax=ax, label="agreement (%)")
    ax.set_title("Each evaluator against each method", fontsize=10)
    return fig


def plot_profiles(report: AlignmentReport) -> Figure:
    """Distribution of EIP difficulty (0-100) per dataset, as in the paper's figure 9."""
    profiles = report.profiles
    return difficulty_profile_figure(bin_edges=profiles.bin_edges,
                                     groups=[(d.name, d.n, d.counts) for d in profiles.datasets],
                                     empty_reason=profiles.undefined_reason or "")


def plot_pools(report: AlignmentReport) -> Figure:
    """Per model pool: consensus agreement and dead-node share (paper figure 8)."""
    from matplotlib.figure import Figure
    pools = report.pools.pools
    fig = Figure(figsize=(max(5.0, 0.9 * len(pools) + 2), 3.4), layout="constrained")
    ax = fig.add_subplot()
    names = [f"{p.name}\n({p.n_models})" for p in pools]
    x = np.arange(len(pools))
    agree = [np.nan if p.consensus is None or p.consensus.agreement is None else 100 * p.consensus.agreement
             for p in pools]
    dead = [np.nan if p.share_dead is None else 100 * p.share_dead for p in pools]
    ax.bar(x - 0.2, agree, width=0.4, label="consensus agreement", color="#2b6cb0")
    ax.bar(x + 0.2, dead, width=0.4, label="dead nodes", color="#c05621")
    for i, a in enumerate(agree):
        if np.isnan(a):
            ax.text(i - 0.2, 2, "undefined", rotation=90, ha="center", fontsize=7)
    ax.set_xticks(x, names, fontsize=8)
    ax.set_ylim(0, 100)
    ax.set_ylabel("%")
    ax.set_title("Model pools: agreement with the consensus and dead nodes", fontsize=10)
    if pools:
        ax.legend(fontsize=8)
    else:
        ax.text(0.5, 0.5, "no pool analysis:\n" + _wrap(str(report.pools.undefined_reason)), ha="center",
                va="center", transform=ax.transAxes, fontsize=8)
    return fig


def plot_human_scale(report: AlignmentReport) -> Figure:
    """Per method: its difficulty against the human scale, each question with its bootstrap interval; each
    panel's title says its Spearman ρ and on how many judged questions and components it was computed, and
    that it is not meaningful when the scale is fragmented
    (:func:`~annotate.reports.services.scale.scale_fragmented`)."""
    hs = report.human_scale
    panels = []
    if hs is not None and hs.available:
        overall = {r.method: r.spearman for r in hs.methods if r.scope == "overall"}
        fragmented = scale_fragmented(hs)
        for m in report.available:
            qs = [q for q in hs.questions if q.difficulty is not None and q.methods.get(m.key) is not None]
            rho = overall.get(m.key)
            caption = ("ρ undefined" if rho is None or rho.value is None
                       else f"ρ = {rho.value:.2f} on {correlation_basis([rho], hs)}".replace(", in ", ",\nin "))
            if fragmented:
                caption += "\nfragmented scale: ρ not meaningful"
            panels.append((m.label, [q.methods[m.key] for q in qs], [q.difficulty for q in qs],
                           [np.nan if q.ci is None else q.ci[0] for q in qs],
                           [np.nan if q.ci is None else q.ci[1] for q in qs], caption))
    reason = ("this report predates the human scale" if hs is None else hs.undefined_reason or "")
    return human_scale_figure(panels=panels, empty_reason=reason)


def _wrap(text: str, width: int = 70) -> str:
    return "\n".join(textwrap.wrap(text, width))


PLOTS: dict[str, Callable[[AlignmentReport], Figure]] = {
    "forest": plot_forest,
    "agreement": plot_agreement,
    "heatmap": plot_heatmap,
    "profiles": plot_profiles,
    "pools": plot_pools,
    "human_scale": plot_human_scale,
}


#: Each plot's title on the report page (the keys stay in file names and addresses).
PLOT_TITLES: dict[str, str] = {
    "forest": "Agreement of each method with people (forest plot)",
    "agreement": "Agreement with the human consensus",
    "heatmap": "Each evaluator against each method",
    "profiles": "Difficulty profile of each dataset",
    "pools": "Model pools",
    "human_scale": "Each method's difficulty against the human scale",
}


def report_plot_names(report: AlignmentReport) -> list[str]:
    """The plots worth showing for ``report``: every one of :data:`PLOTS`, less
    the pools plot while no stored pools analysis is available and the human
    scale plot while there is no scale."""
    scale = report.human_scale is not None and report.human_scale.available
    return [name for name in PLOTS if (name != "pools" or report.pools.available) and (name != "human_scale" or scale)]


def render_plot(report: AlignmentReport | dict, *, name: str, fmt: str) -> bytes:
    """Draw plot ``name`` (a key of :data:`PLOTS`) as ``fmt`` ("png" or "svg") bytes.

    Raises
    ------
    ValueError
        If ``name`` or ``fmt`` is unknown.
    """
    if name not in PLOTS:
        raise ValueError(ERR_PLOT.format(names=sorted(PLOTS), value=name))
    if fmt not in CONTENT_TYPES:
        raise ValueError(ERR_FORMAT.format(formats=sorted(CONTENT_TYPES), value=fmt))
    fig = PLOTS[name](as_report(report))
    buffer = io.BytesIO()
    metadata = {"Date": None} if fmt == "svg" else {"Software": None}
    fig.savefig(buffer, format=fmt, dpi=110, metadata=metadata, bbox_inches="tight", pad_inches=0.05)
    return buffer.getvalue()


# --------------------------------------------------------------------------- bundle


def write_bundle(report: AlignmentReport | dict, judgments: Sequence[dict], out_dir: Path | str) -> list[Path]:
    """Write the files of :func:`report_files` (tidy CSVs, judgments.csv,
    report.json, codebook.md), report.zip holding them, and every plot as PNG and SVG.

    Returns
    -------
    list of Path
        The files written, in that order. ``out_dir`` is created if needed.
    """
    typed = as_report(report)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    files = report_files(typed, judgments)
    files["report.zip"] = report_zip(typed, judgments)
    for name in PLOTS:
        for fmt in CONTENT_TYPES:
            files[f"{name}.{fmt}"] = render_plot(typed, name=name, fmt=fmt)
    written = []
    for file_name, content in files.items():
        path = out_dir / file_name
        path.write_bytes(content)
        written.append(path)
    return written
