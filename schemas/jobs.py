"""The job record both APIs answer (the pinned operations contract: snake_case in both)."""

from __future__ import annotations

from marshmallow import fields

from schemas.common import StockSchema

STATES = "`queued` → `running` → `done` | `failed`"


class JobOut(StockSchema):
    id = fields.UUID(required=True)
    kind = fields.String(
        required=True,
        metadata={
            "description": "`lote` (a week's batch), `importacao` (a CSV import), `email`, "
            "`notificacoes` (tracker notification e-mails) or `call` (a service function)"
        },
    )
    state = fields.String(
        required=True,
        metadata={"description": STATES, "enum": ["queued", "running", "done", "failed"]},
    )
    progress = fields.Integer(required=True, metadata={"description": "0-100; 100 only when `done`"})
    message = fields.String(required=True, metadata={"description": "What the job is doing (pt-BR)"})
    result = fields.Dict(
        allow_none=True,
        required=True,
        metadata={
            "description": "When `done`: what the job did. `lote`: `loteId`, `semana`, `novas`, `mantidas`, "
            "`substituidas`, `regenerado`, `particoes`, `tempos`; or `gerado: false` with `proximoLote` when "
            "the cadence said no batch was due. `importacao`: `linhas`, `inseridas`, `atualizadas`, ..."
        },
    )
    error = fields.String(
        allow_none=True,
        required=True,
        metadata={
            "description": "When `failed`: why. A rejected `importacao` lists every bad line of the "
            "file, one per text line (`linha N: motivo`, the first 100, then how many more)"
        },
    )
    created_at = fields.DateTime(required=True)
    started_at = fields.DateTime(allow_none=True, required=True)
    finished_at = fields.DateTime(allow_none=True, required=True)


class GenerateRequest(StockSchema):
    data = fields.Date(
        load_default=None,
        allow_none=True,
        metadata={"description": "A day of the week to generate (default today in GIRO_TIMEZONE)"},
    )
