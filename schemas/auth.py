"""Wire shapes of the remanejamento account area (camelCase Portuguese)."""

from __future__ import annotations

from marshmallow import fields, validate

from models.auth import PAPEIS
from schemas.common import StockSchema


class LoginRequest(StockSchema):
    email = fields.Email(required=True)
    senha = fields.String(required=True, validate=validate.Length(min=1))
    remember = fields.Boolean(load_default=True)


class RefreshRequest(StockSchema):
    refreshToken = fields.String(required=True)


class ForgotPasswordRequest(StockSchema):
    email = fields.Email(required=True)


class ResetPasswordRequest(StockSchema):
    token = fields.String(required=True)
    senha = fields.String(required=True, validate=validate.Length(min=8))


class UpdateProfileRequest(StockSchema):
    nome = fields.String(allow_none=True, validate=validate.Length(min=1, max=200))
    email = fields.Email(allow_none=True)
    papel = fields.String(allow_none=True, validate=validate.OneOf(PAPEIS))
    lojaId = fields.UUID(allow_none=True)
    senhaAtual = fields.String(
        allow_none=True,
        validate=validate.Length(max=256),
        metadata={"description": "Senha atual; obrigatória para trocar o `email` (senão 403)"},
    )


class MessageResponse(StockSchema):
    message = fields.String(required=True)


class AuthUser(StockSchema):
    id = fields.UUID(required=True)
    nome = fields.String(required=True, attribute="name")
    email = fields.Email(required=True)
    papel = fields.String(required=True, metadata={"enum": list(PAPEIS)})
    lojaId = fields.UUID(allow_none=True, attribute="loja_id")
    iniciais = fields.String(required=True)
    emailPendente = fields.Email(
        allow_none=True,
        attribute="pending_email",
        metadata={"description": "Novo e-mail aguardando a confirmação pelo link enviado a ele"},
    )


class TokenResponse(StockSchema):
    user = fields.Nested(AuthUser, required=True)
    accessToken = fields.String(required=True)
    refreshToken = fields.String(required=True)
    tokenType = fields.String(dump_default="bearer")


class AccessTokenResponse(StockSchema):
    accessToken = fields.String(required=True)
    refreshToken = fields.String(
        metadata={
            "description": "The rotated refresh token. Refreshing revokes the token presented, "
            "so a client keeps this one for its next refresh."
        }
    )
    tokenType = fields.String(dump_default="bearer")


class Preferencias(StockSchema):
    notifEmail = fields.Boolean(attribute="notif_email", dump_default=True)
    notifPush = fields.Boolean(attribute="notif_push", dump_default=False)
    digestSemanal = fields.Boolean(attribute="digest_semanal", dump_default=True)


class UpdatePreferenciasRequest(StockSchema):
    notifEmail = fields.Boolean(required=True)
    notifPush = fields.Boolean(required=True)
    digestSemanal = fields.Boolean(required=True)
