"""Wire shapes of the remanejamento account area (camelCase Portuguese)."""

from __future__ import annotations

from marshmallow import fields

from models.auth import PAPEIS
from schemas.common import StockSchema
from schemas.fields import Boolean, Email, Text, choice, password_field

TOKEN_MAX = 4096
IDIOMAS = ("pt-BR", "en")


class LoginRequest(StockSchema):
    email = Email(required=True)
    senha = password_field(required=True, min_length=1)
    remember = Boolean(load_default=True)


class AccessInvitation(StockSchema):
    """The stock admin page's invitation form: the address an account is made for."""

    email = Email(required=True)
    nome = Text(load_default="", max_length=200)


class RefreshRequest(StockSchema):
    refreshToken = Text(required=True, max_length=TOKEN_MAX)


class ForgotPasswordRequest(StockSchema):
    email = Email(required=True)


class ResetPasswordRequest(StockSchema):
    token = Text(required=True, max_length=TOKEN_MAX)
    senha = password_field(required=True, min_length=8)


class UpdateProfileRequest(StockSchema):
    nome = Text(allow_none=True, min_length=1, max_length=200)
    email = Email(allow_none=True)
    papel = choice(PAPEIS, allow_none=True)
    loja_id = fields.UUID(allow_none=True, data_key="lojaId")
    senha_atual = password_field(
        allow_none=True,
        data_key="senhaAtual",
        min_length=1,
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
    idioma = fields.String(
        allow_none=True,
        metadata={
            "description": "Idioma dos números e datas nas páginas (`pt-BR` ou `en`); "
            "`null`: pt-BR, qualquer que seja o idioma do navegador."
        },
    )


class UpdatePreferenciasRequest(StockSchema):
    notif_email = Boolean(required=True, data_key="notifEmail")
    notif_push = Boolean(required=True, data_key="notifPush")
    digest_semanal = Boolean(required=True, data_key="digestSemanal")
    idioma = choice(
        IDIOMAS,
        allow_none=True,
        metadata={"description": "Opcional; ausente mantém o atual, `null` volta ao pt-BR."},
    )


class PushKeys(StockSchema):
    p256dh = Text(
        max_length=200,
        min_length=1,
        required=True,
        metadata={"description": "The browser's P-256 public key (base64url)"},
    )
    auth = Text(
        max_length=100,
        min_length=1,
        required=True,
        metadata={"description": "The 16-byte authentication secret (base64url)"},
    )


class PushSubscriptionRequest(StockSchema):
    """What a browser's `PushSubscription.toJSON()` gives (other members are ignored)."""

    endpoint = Text(
        max_length=2000,
        min_length=1,
        required=True,
        metadata={"description": "The push service's URL for this browser (https)"},
    )
    keys = fields.Nested(PushKeys, required=True)


class PushSubscriptionCreated(StockSchema):
    id = fields.UUID(required=True)
    created_at = fields.DateTime(required=True)
