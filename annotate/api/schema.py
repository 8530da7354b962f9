"""The API's OpenAPI 3.1 description, served at ``/api/openapi.json``.

A static dict, written by hand next to the views it describes;
``tests/annotate/test_api_schema.py`` validates it with
openapi-spec-validator and checks that its paths are exactly the API's URL
patterns.
"""
from __future__ import annotations

import copy

from annotate.loaders.tabular import FORMATS as TABULAR_FORMATS

_ERROR = {"$ref": "#/components/schemas/Error"}
_ID = {"type": "integer", "minimum": 1}
_TIME = {"type": ["string", "null"], "format": "date-time"}


def _json(schema: dict, description: str) -> dict:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def _errors(*codes: int) -> dict:
    text = {
        400: "Invalid input; nothing was changed.",
        401: "No credentials, a malformed Authorization header, or an invalid or revoked token.",
        403: "Authenticated, but the role does not allow this (or a session request without its CSRF token).",
        404: "No such object.",
    }
    return {str(code): _json(_ERROR, text[code]) for code in codes}


def _path_id(name: str, what: str) -> dict:
    return {"name": name, "in": "path", "required": True, "description": what, "schema": _ID}


def _format_param(default_note: str) -> dict:
    return {
        "name": "format", "in": "query", "required": False, "description": default_note,
        "schema": {"type": "string", "enum": ["json", "csv"], "default": "json"},
    }


_SCHEMA: dict = {
    "openapi": "3.1.0",
    "info": {
        "title": "EIP human-alignment API",
        "version": "1.0.0",
        "summary": "Upload response sets, run the difficulty methods, download study reports and judgments.",
        "description": (
            "Authenticate with a per-user token: `Authorization: Token <key>` "
            "(`manage.py create_api_token --user NAME` prints a key once; only its hash is stored). "
            "A logged-in browser session also works; then POST requests need the CSRF token. "
            "Uploads and scoring runs need a staff account; studies, reports and judgments a researcher "
            "or staff account; evaluators have no access. Errors are JSON objects with an `error` message."
        ),
        "license": {"name": "MIT", "identifier": "MIT"},
    },
    "servers": [{"url": "/", "description": "this site"}],
    "security": [{"tokenAuth": []}, {"sessionAuth": []}],
    "paths": {
        "/api/openapi.json": {
            "get": {
                "operationId": "getOpenApi",
                "summary": "This document.",
                "security": [],
                "responses": {"200": _json({"type": "object"}, "The OpenAPI 3.1 description.")},
            }
        },
        "/api/response-sets/": {
            "get": {
                "operationId": "listResponseSets",
                "summary": "The newest response sets (at most 500), newest first. Staff.",
                "responses": {
                    "200": _json(
                        {"type": "object", "required": ["response_sets"],
                         "properties": {"response_sets": {"type": "array",
                                                          "items": {"$ref": "#/components/schemas/ResponseSet"}}}},
                        "Response sets.",
                    ),
                    **_errors(401, 403),
                },
            },
            "post": {
                "operationId": "uploadResponseSet",
                "summary": "Upload and load a response set in one transaction. Staff.",
                "description": (
                    "Multipart form. The files are parsed by the same loaders as `manage.py load_responses` "
                    "and the admin upload page; a load is all or nothing. With `dry_run=true` nothing is "
                    "written and the preview is returned. A refused upload answers 400 with every problem "
                    "found, each located by file, row and column."
                ),
                "requestBody": {
                    "required": True,
                    "content": {"multipart/form-data": {"schema": {"$ref": "#/components/schemas/Upload"}}},
                },
                "responses": {
                    "201": {
                        **_json({"$ref": "#/components/schemas/ResponseSet"}, "Loaded."),
                        "headers": {"Location": {"description": "URL of the new response set",
                                                 "schema": {"type": "string"}}},
                    },
                    "200": _json(
                        {"type": "object", "required": ["dry_run", "preview"],
                         "properties": {"dry_run": {"const": True},
                                        "preview": {"$ref": "#/components/schemas/Preview"}}},
                        "Dry run: what a load would write; nothing was written.",
                    ),
                    **_errors(400, 401, 403),
                },
            },
        },
        "/api/response-sets/{response_set_id}/": {
            "parameters": [_path_id("response_set_id", "Response set id.")],
            "get": {
                "operationId": "getResponseSet",
                "summary": "One response set. Staff.",
                "responses": {"200": _json({"$ref": "#/components/schemas/ResponseSet"}, "The response set."),
                              **_errors(401, 403, 404)},
            },
        },
        "/api/scoring-runs/": {
            "post": {
                "operationId": "startScoringRun",
                "summary": "Create a scoring run and queue it for the task worker. Staff.",
                "description": (
                    "Runs every difficulty method on the response set (optionally a subset of models and "
                    "datasets) outside the request, in `manage.py db_worker`. Poll the `Location` URL until "
                    "`status` is `done` or `failed`."
                ),
                "requestBody": {
                    "required": True,
                    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/RunRequest"}}},
                },
                "responses": {
                    "202": {
                        **_json({"$ref": "#/components/schemas/ScoringRun"}, "Queued (or already run, with "
                                "TASKS_BACKEND=immediate)."),
                        "headers": {"Location": {"description": "URL to poll", "schema": {"type": "string"}}},
                    },
                    **_errors(400, 401, 403),
                },
            },
        },
        "/api/scoring-runs/{run_id}/": {
            "parameters": [_path_id("run_id", "Scoring run id.")],
            "get": {
                "operationId": "getScoringRun",
                "summary": "Status and progress of a scoring run. Staff.",
                "responses": {"200": _json({"$ref": "#/components/schemas/ScoringRun"}, "The run."),
                              **_errors(401, 403, 404)},
            },
        },
        "/api/studies/": {
            "get": {
                "operationId": "listStudies",
                "summary": "Every study, newest first. Researchers and staff.",
                "responses": {
                    "200": _json(
                        {"type": "object", "required": ["studies"],
                         "properties": {"studies": {"type": "array",
                                                    "items": {"$ref": "#/components/schemas/Study"}}}},
                        "Studies.",
                    ),
                    **_errors(401, 403),
                },
            },
        },
        "/api/studies/{study_id}/report/": {
            "parameters": [_path_id("study_id", "Study id.")],
            "get": {
                "operationId": "getStudyReport",
                "summary": "The study's alignment report (agreement of each method with the human judgments). "
                           "Researchers and staff.",
                "parameters": [
                    _format_param("json: the full report; csv: its tables (formula-guarded cells)."),
                    {"name": "run", "in": "query", "required": False, "schema": _ID,
                     "description": "Compare another finished scoring run (default: the study's own)."},
                    {"name": "min_votes", "in": "query", "required": False,
                     "schema": {"type": "integer", "minimum": 1, "default": 1},
                     "description": "Fewest votes a pair needs for a consensus."},
                    {"name": "tie_rule", "in": "query", "required": False,
                     "schema": {"type": "string", "enum": ["evaluator_weight", "none"],
                                "default": "evaluator_weight"}},
                    {"name": "n_boot", "in": "query", "required": False,
                     "schema": {"type": "integer", "minimum": 1, "default": 2000},
                     "description": "Bootstrap replicates for the 95% intervals."},
                ],
                "responses": {
                    "200": {
                        "description": "The report (schema: annotate/report_schema.json) or its CSV tables.",
                        "content": {
                            "application/json": {"schema": {"$ref": "#/components/schemas/Report"}},
                            "text/csv": {"schema": {"type": "string"}},
                        },
                    },
                    **_errors(400, 401, 403, 404),
                },
            },
        },
        "/api/studies/{study_id}/judgments/": {
            "parameters": [_path_id("study_id", "Study id.")],
            "get": {
                "operationId": "getStudyJudgments",
                "summary": "Every judgment and skip, evaluators by pseudonym. Researchers and staff.",
                "parameters": [_format_param("json (default) or csv (formula-guarded cells).")],
                "responses": {
                    "200": {
                        "description": "One row per judgment or skip, by pair then evaluator.",
                        "content": {
                            "application/json": {"schema": {
                                "type": "object", "required": ["study", "judgments"],
                                "properties": {"study": _ID, "judgments": {
                                    "type": "array", "items": {"$ref": "#/components/schemas/Judgment"}}},
                            }},
                            "text/csv": {"schema": {"type": "string"}},
                        },
                    },
                    **_errors(400, 401, 403, 404),
                },
            },
        },
    },
    "components": {
        "securitySchemes": {
            "tokenAuth": {
                "type": "apiKey", "in": "header", "name": "Authorization",
                "description": "`Token <key>`; keys from `manage.py create_api_token`.",
            },
            "sessionAuth": {
                "type": "apiKey", "in": "cookie", "name": "sessionid",
                "description": "A logged-in browser; unsafe methods also need the CSRF token (X-CSRFToken).",
            },
        },
        "schemas": {
            "Error": {
                "type": "object",
                "required": ["error"],
                "properties": {
                    "error": {"type": "string"},
                    "problems": {"type": "array", "items": {"$ref": "#/components/schemas/Problem"}},
                    "fields": {"type": "object", "additionalProperties": {"type": "array",
                                                                         "items": {"type": "string"}}},
                },
            },
            "Problem": {
                "type": "object",
                "required": ["file", "message"],
                "properties": {
                    "file": {"type": "string"},
                    "row": {"type": ["integer", "null"], "description": "1-based line as an editor shows it"},
                    "column": {"type": ["string", "null"]},
                    "message": {"type": "string"},
                },
            },
            "Upload": {
                "type": "object",
                "required": ["responses"],
                "properties": {
                    "responses": {"type": "string", "contentMediaType": "application/octet-stream",
                                  "description": "Wide CSV, long CSV/TSV or JSON Lines."},
                    "questions": {"type": "string", "contentMediaType": "application/octet-stream"},
                    "models": {"type": "string", "contentMediaType": "application/octet-stream"},
                    "file_format": {"type": "string", "enum": list(TABULAR_FORMATS), "default": "auto"},
                    "dataset": {"type": "string", "description": "Required for a wide file."},
                    "subject_column": {"type": "string"},
                    "keep_columns": {"type": "string", "description": "Comma-separated question columns to keep."},
                    "id_column": {"type": "string", "default": "question_id"},
                    "name": {"type": "string", "description": "Default: the responses file name."},
                    "new_version": {"type": "boolean", "default": False},
                    "dry_run": {"type": "boolean", "default": False},
                },
            },
            "ResponseSet": {
                "type": "object",
                "required": ["id", "name", "version", "status", "n_questions", "n_models", "n_responses"],
                "properties": {
                    "id": _ID, "name": {"type": "string"}, "version": {"type": "integer"},
                    "status": {"type": "string", "enum": ["loaded", "superseded"]},
                    "file_name": {"type": "string"}, "file_format": {"type": "string"},
                    "checksum": {"type": "string", "description": "SHA-256 of the uploaded files"},
                    "n_questions": {"type": "integer"}, "n_models": {"type": "integer"},
                    "n_responses": {"type": "integer"}, "created_at": _TIME,
                    "notes": {"type": "array", "items": {"type": "string"}},
                },
            },
            "Preview": {
                "type": "object",
                "properties": {
                    "name": {"type": ["string", "null"]}, "version": {"type": "integer"},
                    "supersedes": {"type": ["string", "null"]}, "checksum": {"type": "string"},
                    "file_format": {"type": "string"}, "n_responses": {"type": "integer"},
                    "n_questions": {"type": "integer"}, "n_models": {"type": "integer"},
                    "questions_new": {"type": "integer"}, "questions_existing": {"type": "integer"},
                    "models_new": {"type": "integer"}, "models_existing": {"type": "integer"},
                    "subjects_new": {"type": "integer"}, "datasets_new": {"type": "integer"},
                    "notes": {"type": "array", "items": {"type": "string"}},
                },
            },
            "RunRequest": {
                "type": "object",
                "required": ["response_set"],
                "additionalProperties": False,
                "properties": {
                    "response_set": _ID,
                    "model_ids": {"type": ["array", "null"], "items": _ID, "description": "Default: every model."},
                    "dataset_ids": {"type": ["array", "null"], "items": _ID,
                                    "description": "Default: every dataset."},
                    "params": {
                        "type": ["object", "null"],
                        "description": "alpha (EIP damping, default 0.85), tol (default 1e-10), mirt_epochs, "
                                       "mirt_seed, methods.",
                    },
                },
            },
            "ScoringRun": {
                "type": "object",
                "required": ["id", "response_set", "status", "progress"],
                "properties": {
                    "id": _ID, "response_set": _ID,
                    "status": {"type": "string", "enum": ["queued", "running", "done", "failed"]},
                    "progress": {"type": "number", "minimum": 0, "maximum": 1},
                    "error": {"type": "string"}, "params": {"type": "object"},
                    "created_at": _TIME, "finished_at": _TIME,
                    "methods": {"type": "array", "items": {
                        "type": "object",
                        "properties": {"method": {"type": "string"}, "n_iter": {"type": ["integer", "null"]},
                                       "converged": {"type": ["boolean", "null"]},
                                       "residual": {"type": ["number", "null"]}, "duration_s": {"type": "number"}},
                    }},
                },
            },
            "Study": {
                "type": "object",
                "required": ["id", "name", "status"],
                "properties": {
                    "id": _ID, "name": {"type": "string"}, "status": {"type": "string", "enum": ["open", "closed"]},
                    "strategy": {"type": "string"}, "n_pairs": {"type": "integer"},
                    "target_judgments_per_pair": {"type": "integer"}, "scoring_run": _ID,
                    "created_at": _TIME, "closed_at": _TIME,
                    "n_evaluators": {"type": "integer"},
                    "n_judgments": {"type": "integer", "description": "votes, skips excluded"},
                },
            },
            "Judgment": {
                "type": "object",
                "properties": {
                    "study": {"type": "string"}, "pair_id": _ID, "pair_position": {"type": "integer"},
                    "subject": {"type": "string"}, "dataset": {"type": "string"},
                    "question_a": {"type": "string"}, "question_b": {"type": "string"},
                    "left_question": {"type": "string"}, "right_question": {"type": "string"},
                    "choice": {"type": "string", "enum": ["left", "right", "skip"]},
                    "harder_question": {"type": "string"},
                    "verdict": {"type": "string", "enum": ["a", "b", "skip"]},
                    "evaluator": {"type": "string", "description": "pseudonym"},
                    "field_of_study": {"type": "string"}, "education_level": {"type": "string"},
                    "shown_at": {"type": "string", "format": "date-time"},
                    "submitted_at": {"type": "string", "format": "date-time"},
                    "seconds": {"type": "number"}, "client_seconds": {"type": ["number", "null"]},
                },
            },
            "Report": {
                "type": "object",
                "description": "See annotate/report_schema.json.",
                "required": ["schema_version", "study", "run"],
                "additionalProperties": True,
            },
        },
    },
}


def openapi_schema() -> dict:
    """A fresh copy of the OpenAPI 3.1 description (a plain, JSON-ready dict)."""
    return copy.deepcopy(_SCHEMA)
