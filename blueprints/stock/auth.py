"""Login, refresh, logout, password recovery and the profile of the signed-in user."""

from __future__ import annotations

from flask_jwt_extended import current_user, get_current_user

from blueprints.common import login_throttle, mail_throttle, presented_access_claims, stock_auth_required
from blueprints.parsing import Blueprint
from blueprints.responses import json_response
from extensions import db
from schemas.auth import (
    AccessTokenResponse,
    AuthUser,
    ForgotPasswordRequest,
    LoginRequest,
    MessageResponse,
    Preferencias,
    PushSubscriptionCreated,
    PushSubscriptionRequest,
    RefreshRequest,
    ResetPasswordRequest,
    TokenResponse,
    UpdatePreferenciasRequest,
    UpdateProfileRequest,
)
from schemas.fast import RowDumper
from services import auth as auth_service
from services import users as user_service
from services.stock import notifications
from services.stock.access import ensure_stock_access

blp = Blueprint("stock_auth", __name__, url_prefix="/auth", description="Sessão e senha")
users_blp = Blueprint("stock_users", __name__, url_prefix="/users", description="Perfil e preferências")

# Read by every page load of a client: written without flask-smorest's dump.
AUTH_USER = RowDumper(AuthUser)

FORGOT_MESSAGE = "Se o e-mail estiver cadastrado, enviaremos um link para redefinir a senha."


@blp.route("/login", methods=["POST"])
@login_throttle
@blp.arguments(LoginRequest)
@blp.response(200, TokenResponse)
@blp.alt_response(401, description="E-mail ou senha inválidos")
@blp.alt_response(403, description="Conta bloqueada, ou sem papel no remanejamento")
@blp.alt_response(429, description="Tentativas demais; tente de novo mais tarde (Retry-After)")
def login(body):
    """Entrar com e-mail e senha (fluxo password do OAuth 2.0).

    A conta precisa de um `papel` concedido por um admin de estoque: ter uma conta
    (por exemplo, criada pelo cadastro público do tracker) não dá acesso.
    """
    user = auth_service.authenticate(body["email"], body["senha"])
    ensure_stock_access(user)
    access, refresh = auth_service.issue_tokens(user, remember=body["remember"])
    return {"user": user, "accessToken": access, "refreshToken": refresh, "tokenType": "bearer"}


@blp.route("/refresh", methods=["POST"])
@blp.arguments(RefreshRequest)
@blp.response(200, AccessTokenResponse)
@blp.alt_response(401, description="Refresh token inválido, expirado ou revogado")
@blp.alt_response(403, description="Conta bloqueada, ou sem papel no remanejamento")
def refresh(body):
    """Trocar o refresh token por um novo access token (o refresh token é rotacionado)."""
    try:
        user, access, new_refresh = auth_service.rotate_refresh(body["refreshToken"])
    except auth_service.TokenReuseError:
        # The family revocation must outlive this failed request.
        db.session.commit()
        raise
    ensure_stock_access(user)
    return {"accessToken": access, "refreshToken": new_refresh, "tokenType": "bearer"}


@blp.route("/logout", methods=["POST"])
@blp.arguments(RefreshRequest)
@blp.response(204)
def logout(body):
    """Encerrar a sessão: revoga o refresh token e os access tokens emitidos com ele.

    Um access token enviado em `Authorization: Bearer` também deixa de valer na hora.
    """
    auth_service.logout(body["refreshToken"], presented_access_claims())


@blp.route("/me", methods=["GET"])
@stock_auth_required()
@blp.response(200, AuthUser)
def me():
    """O usuário autenticado."""
    # The account itself: through the ``current_user`` proxy each field costs a lookup.
    return json_response(AUTH_USER.dump(get_current_user()))


@blp.route("/password/forgot", methods=["POST"])
@mail_throttle
@blp.arguments(ForgotPasswordRequest)
@blp.response(200, MessageResponse)
@blp.alt_response(
    429,
    description="E-mails demais para este endereço ou deste cliente; tente de novo mais tarde (Retry-After)",
)
def forgot_password(body):
    """Pedir um link de redefinição. A resposta é a mesma exista ou não a conta."""
    auth_service.request_password_reset(body["email"])
    return {"message": FORGOT_MESSAGE}


@blp.route("/password/reset", methods=["POST"])
@blp.arguments(ResetPasswordRequest)
@blp.response(200, MessageResponse)
@blp.alt_response(400, description="Token inválido, expirado ou já usado")
def reset_password(body):
    """Definir uma nova senha com o token recebido por e-mail (uso único, 1 hora)."""
    auth_service.reset_password(body["token"], body["senha"])
    return {"message": "Senha redefinida. Entre com a nova senha."}


@users_blp.route("/me", methods=["PATCH"])
@stock_auth_required()
@users_blp.arguments(UpdateProfileRequest)
@users_blp.response(200, AuthUser)
@users_blp.alt_response(
    403, description="Tentativa de elevar o próprio papel ou trocar de loja sem ser admin"
)
def update_me(body):
    """Atualizar o próprio perfil.

    Campos ausentes ou nulos não mudam. Ninguém eleva o próprio `papel`
    (rebaixar-se é permitido); só um admin troca a própria `lojaId`, que
    deve ser de uma loja existente (422 em `["body", "lojaId"]` se não for).

    Trocar o `email` exige `senhaAtual` (senão 403) e só vale depois que o link
    enviado ao novo endereço for aberto: até lá a resposta mostra o e-mail atual e
    o novo em `emailPendente`. Se o novo endereço já pertence a outra conta, isso
    só é dito a quem abrir o link.
    """
    return user_service.update_profile(current_user, **body)


@users_blp.route("/me/preferences", methods=["GET"])
@stock_auth_required()
@users_blp.response(200, Preferencias)
def get_preferences():
    """Preferências de notificação e o idioma dos números e datas nas páginas."""
    return current_user


@users_blp.route("/me/preferences", methods=["PUT"])
@stock_auth_required()
@users_blp.arguments(UpdatePreferenciasRequest)
@users_blp.response(200, Preferencias)
def put_preferences(body):
    """Substituir as preferências de notificação (e, se presente, o `idioma`)."""
    return user_service.update_preferences(current_user, **body)


@users_blp.route("/me/push-subscriptions", methods=["POST"])
@stock_auth_required()
@users_blp.arguments(PushSubscriptionRequest)
@users_blp.response(201, PushSubscriptionCreated)
@users_blp.alt_response(409, description="A instância não tem chaves VAPID: Web Push indisponível")
def add_push_subscription(body):
    """Registrar a assinatura Web Push deste navegador (`PushSubscription.toJSON()`). Com
    `notifPush` ligado, os avisos chegam a cada navegador registrado; um navegador que o serviço
    de push diz não existir mais (404/410) é esquecido. 422 quando não é uma assinatura (endereço
    que não é de um serviço de push, chaves inválidas)."""
    return notifications.subscribe_browser(
        current_user, body["endpoint"], body["keys"]["p256dh"], body["keys"]["auth"]
    )


@users_blp.route("/me/push-subscriptions/<uuid:subscription_id>", methods=["DELETE"])
@stock_auth_required()
@users_blp.response(204)
def delete_push_subscription(subscription_id):
    """Esquecer a assinatura deste navegador (404 se não for sua)."""
    notifications.unsubscribe_browser(current_user, subscription_id)
