"""The pages' pt-BR text for the services' refusals and for schema messages, shown inline.

Services name each refusal by a stable ``reason`` (``services/errors.py``); the
pages say it in pt-BR from ``REASON_TEXT``, whatever the wording of the API's
message (English for the tracker, Portuguese for remanejamento). A test keeps
every reason the services raise in this table.
"""

from __future__ import annotations

from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l
from marshmallow import ValidationError

from services.errors import DomainError, FieldError, ValidationFailed

RESOURCE_TEXT = {
    "members": _l("membros"),
    "projects": _l("projetos"),
    "issues": _l("tarefas"),
    "storage_bytes": _l("armazenamento"),
}

# Reason -> what the pages say; ``%(name)s`` takes the error's ``params``. Remanejamento's
# texts are its service's own messages (that service speaks Portuguese).
REASON_TEXT = {
    # tracker: tenancy and roles
    "organization_not_found": _l("Organização não encontrada."),
    "workspace_not_found": _l("Espaço de trabalho não encontrado."),
    "project_not_found": _l("Projeto não encontrado."),
    "organization_suspended": _l("Esta organização está suspensa."),
    "viewer_read_only": _l("Seu papel nesta organização só permite leitura."),
    "managers_only": _l("Só proprietários e administradores da organização podem fazer isso."),
    "superadmins_only": _l("Só administradores da plataforma podem fazer isso."),
    # tracker: people
    "member_not_found": _l("Membro não encontrado."),
    "owner_role_by_owner": _l("Só um proprietário pode dar ou tirar o papel de proprietário."),
    "owner_removed_by_owner": _l("Só um proprietário pode remover outro proprietário."),
    "owner_invited_by_owner": _l("Só um proprietário pode convidar um proprietário."),
    "last_owner": _l("A organização precisa de pelo menos um proprietário."),
    "already_member": _l("Essa pessoa já é membro da organização."),
    "already_joined": _l("Você já é membro desta organização."),
    "invitation_not_found": _l("Convite não encontrado."),
    "invitation_pending": _l("Esse endereço já tem um convite pendente."),
    "unverified_address": _l("Confirme seu e-mail (siga o link que enviamos) para aceitar convites."),
    # tracker: workspaces, projects, statuses, labels, plans
    "organization_slug_taken": _l("Já existe uma organização com esse endereço."),
    "workspace_slug_taken": _l("Já existe um espaço de trabalho com esse endereço."),
    "project_key_taken": _l("Já existe um projeto com essa chave neste espaço de trabalho."),
    "status_not_found": _l("Status não encontrado."),
    "status_in_use": _l("Há tarefas com este status: mova-as para outro status antes de excluí-lo."),
    "label_not_found": _l("Etiqueta não encontrada."),
    "label_name_taken": _l("Já existe uma etiqueta com esse nome neste projeto."),
    "plan_not_found": _l("Plano não encontrado."),
    "unknown_plan": _l("Plano desconhecido."),
    "plan_id_taken": _l("Já existe um plano com esse identificador."),
    "plan_limit_reached": _l(
        "O plano desta organização chegou ao limite de %(resource)s (%(limit)s). "
        "Fale com quem administra a conta."
    ),
    # tracker: issues and relations
    "issue_not_found": _l("Tarefa não encontrada."),
    "status_not_in_project": _l("Status inexistente neste projeto."),
    "assignee_not_member": _l("O responsável precisa ser membro da organização."),
    "label_not_in_project": _l("Todas as etiquetas precisam ser deste projeto."),
    "parent_not_in_project": _l("A tarefa pai precisa ser do mesmo projeto."),
    "parent_cycle": _l("Uma tarefa não pode ser descendente de si mesma."),
    "due_before_start": _l("O prazo não pode ser anterior ao início."),
    "project_without_status": _l("O projeto não tem nenhum status."),
    "title_required": _l("Campo obrigatório."),
    # tracker: board order and bulk edit
    "rank_neighbour_not_in_project": _l("A tarefa vizinha precisa ser deste projeto."),
    "rank_neighbours_out_of_order": _l("A tarefa de cima precisa vir antes da de baixo no quadro."),
    "rank_and_neighbours": _l("Informe a posição ou as tarefas vizinhas, não os dois."),
    "rank_next_to_itself": _l("Uma tarefa não pode ficar ao lado de si mesma."),
    "bulk_without_changes": _l("Escolha pelo menos uma alteração."),
    "bulk_label_both": _l("Uma etiqueta não pode ser adicionada e removida ao mesmo tempo."),
    "bulk_issue_not_found": _l("Alguma das tarefas escolhidas não existe mais neste projeto."),
    # tracker: plan features and the audit log
    "audit_until_before_since": _l("A data final não pode ser anterior à inicial."),
    "feature_not_in_plan": _l(
        "O plano desta organização não inclui este recurso; ele faz parte dos planos %(plans)s."
    ),
    # remanejamento: the operations project in the tracker
    "operations_project_missing": _l(
        "Nenhum projeto de operação no Tracker: um admin de estoque escolhe um nas regras."
    ),
    "problem_invalid": _l("Escolha o tipo de problema (e descreva, se for outro)."),
    "operations_project_refused": _l("Escolha um projeto de uma organização que você administra no Tracker."),
    # remanejamento notifications
    "push_unavailable": _l("Notificações no navegador não estão disponíveis nesta instalação."),
    "push_endpoint_refused": _l("O navegador enviou um endereço de push que não é aceito."),
    "push_key_invalid": _l("O navegador enviou uma assinatura de push inválida."),
    "push_subscription_not_found": _l("Assinatura de push não encontrada."),
    # tracker: single sign-on
    "sso_required": _l("%(organization)s exige login único: entre pelo provedor da organização."),
    "sso_not_configured": _l("O login único ainda não foi configurado."),
    "sso_secret_required": _l("Informe o segredo do cliente na primeira configuração."),
    "sso_enforced_needs_enabled": _l("Para exigir o login único, ative-o também."),
    "sso_role_invalid": _l("Papel inválido."),
    "sso_domain_invalid": _l("Algum dos domínios não é um nome de domínio válido."),
    "sso_too_many_domains": _l("No máximo 20 domínios."),
    "sso_domain_claimed": _l("O domínio %(domain)s já pertence a outra organização."),
    "sso_domain_not_found": _l("Domínio não encontrado nesta configuração."),
    "sso_issuer_refused": _l(
        "Use um endereço https (ou http só em loopback); endereços privados são recusados."
    ),
    "related_issue_not_found": _l("Tarefa não encontrada nesta organização."),
    "self_relation": _l("Uma tarefa não pode se relacionar com ela mesma."),
    "already_related": _l("Essas tarefas já estão relacionadas."),
    "blocking_cycle": _l("Isso criaria um ciclo de bloqueios."),
    "relation_not_found": _l("Relação não encontrada."),
    "comment_not_found": _l("Comentário não encontrado."),
    "comment_edit_author_only": _l("Só o autor pode editar um comentário."),
    "comment_delete_forbidden": _l("Só o autor, um dono ou um admin pode excluir um comentário."),
    # tracker: attachments
    "attachment_not_found": _l("Anexo não encontrado."),
    "attachment_no_thumbnail": _l("Este anexo não tem miniatura."),
    "attachment_object_missing": _l("O arquivo deste anexo não está mais disponível."),
    "attachment_file_missing": _l("Escolha um arquivo para anexar."),
    "attachment_incomplete": _l("O envio do arquivo foi interrompido; tente de novo."),
    "attachment_too_large": _l("O arquivo passa do limite de %(limit)s por anexo."),
    "attachment_delete_forbidden": _l("Só quem enviou, um dono ou um admin pode excluir um anexo."),
    # tracker: plan features and custom fields
    "custom_field_not_found": _l("Campo personalizado não encontrado."),
    "custom_field_slug_taken": _l("Já existe um campo com esse nome neste projeto."),
    "custom_field_limit": _l("Um projeto tem no máximo %(limit)s campos personalizados."),
    "field_name_unusable": _l("O nome precisa ter pelo menos uma letra ou um dígito."),
    "options_required": _l("Um campo de seleção precisa de pelo menos uma opção."),
    "options_repeated": _l("As opções não podem se repetir."),
    "options_unused": _l("Só campos de seleção têm opções."),
    "custom_field_unknown": _l("Campo personalizado inexistente neste projeto."),
    "custom_field_required": _l("Campo obrigatório."),
    "custom_field_text_invalid": _l("Texto inválido."),
    "custom_field_number_invalid": _l("Informe um número."),
    "custom_field_date_invalid": _l("Informe uma data válida."),
    "custom_field_option_invalid": _l("Escolha uma das opções do campo."),
    # tracker: webhooks
    "webhook_not_found": _l("Webhook não encontrado."),
    "webhook_limit": _l("Uma organização tem no máximo %(limit)s webhooks."),
    "webhook_url_refused": _l(
        "Use um endereço https público (ou http para este computador, como 127.0.0.1): endereços "
        "privados, locais, multicast e reservados são recusados."
    ),
    "webhook_events_invalid": _l("Escolha pelo menos um evento."),
    # platform administration
    "user_not_found": _l("Usuário não encontrado."),
    "self_ban": _l("Você não pode bloquear nem rebaixar a si mesmo."),
    # accounts
    "invalid_credentials": _l("E-mail ou senha inválidos."),
    "account_banned": _l("Conta bloqueada."),
    "refresh_token_expired": _l("Sessão expirada: entre de novo."),
    "invalid_refresh_token": _l("Sessão inválida: entre de novo."),
    "refresh_token_reused": _l("Sessão inválida: entre de novo."),
    "invalid_reset_token": _l("Token de redefinição inválido ou expirado"),
    "invalid_verification_link": _l("Link de confirmação inválido ou expirado"),
    "email_registered": _l("Este e-mail já pertence a outra conta"),
    "email_taken": _l("Este e-mail já pertence a outra conta"),
    "wrong_current_password": _l("Senha atual incorreta: ela é necessária para trocar o e-mail"),
    "self_promotion": _l("Não é permitido elevar o próprio papel"),
    "own_store_admin_only": _l("Só um admin pode trocar a própria loja"),
    # remanejamento
    "no_stock_access": _l(
        "Esta conta não tem acesso ao remanejamento. Peça a um administrador de estoque que conceda um papel."
    ),
    "role_not_allowed": _l("Sem permissão para esta ação"),
    "unknown_papel": _l("Papel inválido"),
    "gerente_without_loja": _l("Um gerente de loja precisa de uma loja."),
    "account_not_found": _l("Conta não encontrada."),
    "own_admin_role": _l(
        "Você não pode remover o seu próprio papel de administrador; peça a outro administrador."
    ),
    "invalid_email": _l("Informe um e-mail válido."),
    "loja_not_found": _l("Loja não encontrada"),
    "produto_not_found": _l("Produto não encontrado"),
    "tamanho_outside_grade": _l("Tamanho fora da grade do produto"),
    "lote_not_found": _l("Lote não encontrado"),
    "recomendacao_not_found": _l("Recomendação não encontrada"),
    "veto_without_motivo": _l("Informe o motivo do veto."),
    "refusal_reason_unknown": _l("Motivo de recusa desconhecido."),
    "refusal_reason_without_text": _l("Descreva o motivo da recusa."),
    "undo_not_available": _l("Não há ação recente sua para desfazer."),
    "action_not_found": _l("Ação desconhecida."),
    "approve_not_allowed": _l("Não é possível aprovar uma recomendação %(status)s"),
    "approve_vetoed": _l("Recomendação vetada: restaure-a antes de aprovar"),
    "execute_not_allowed": _l("Só uma recomendação aprovada pode ser executada (esta está %(status)s)"),
    "execute_vetoed": _l("Recomendação vetada: restaure-a antes de executar"),
    "refuse_not_allowed": _l("Não é possível recusar uma recomendação %(status)s"),
    "veto_not_allowed": _l("Não é possível vetar uma recomendação %(status)s"),
    "receive_not_destination": _l("Só o gerente da loja de destino confirma o recebimento"),
    "already_received": _l("Esta transferência já foi recebida"),
    "receive_not_allowed": _l("Só uma recomendação executada pode ser recebida (esta está %(status)s)"),
    "received_quantity_out_of_range": _l("A quantidade recebida vai de zero à quantidade enviada."),
    # background jobs
    "job_not_found": _l("Tarefa não encontrada."),
    "job_queue_unavailable": _l(
        "A fila de tarefas está indisponível no momento; tente de novo em alguns minutos."
    ),
    "import_rejected": _l("Arquivo recusado, nada foi importado."),
}


def reason_text(reason: str, params: dict | None = None) -> str | None:
    """The pt-BR text of a service's reason, its blanks filled; None for an unknown reason."""
    text = REASON_TEXT.get(reason)
    if text is None:
        return None
    return str(text) % params if params else str(text)


def field_message(message: str) -> str:
    """A marshmallow message about one field, in Portuguese (marshmallow names no reasons)."""
    rules = (
        ("Missing data for required field", _("Campo obrigatório.")),
        ("Field may not be null", _("Campo obrigatório.")),
        ("Shorter than minimum length 1", _("Campo obrigatório.")),
        ("Must not be blank", _("Campo obrigatório.")),
        ("Shorter than minimum length", _("Texto curto demais.")),
        ("Length must be between 1 and", _("Texto longo demais.")),
        ("Longer than maximum length", _("Texto longo demais.")),
        ("2 to 10 characters", _("De 2 a 10 letras maiúsculas (A–Z) ou dígitos, começando por uma letra.")),
        ("Lowercase letters, digits", _("Apenas letras minúsculas, dígitos e hífens simples.")),
        ("2-40 of a-z", _("De 2 a 40 caracteres a–z, 0–9, _ ou -, começando por uma letra.")),
        ("hex colour", _("Use uma cor como #1a2b3c.")),
        ("Must be greater than or equal", _("Valor baixo demais.")),
        ("Must be less than or equal", _("Valor alto demais.")),
        ("Unknown plan", _("Plano desconhecido.")),
        ("Not a valid integer", _("Informe um número inteiro.")),
        ("Not a valid date", _("Informe uma data válida.")),
        ("Not a valid email address", _("Informe um e-mail válido.")),
        ("Must be one of", _("Escolha uma das opções.")),
    )
    for needle, text in rules:
        if needle.lower() in message.lower():
            return text
    return _("Valor inválido.")


def schema_errors(exc: ValidationError) -> dict[str, str]:
    """``{field: message}`` for a marshmallow failure (nested fields joined with dots)."""
    out: dict[str, str] = {}
    data = exc.data if isinstance(exc.data, dict) else {}

    def walk(messages, prefix: str) -> None:
        if prefix in data and data[prefix] in ("", None) and isinstance(messages, list):
            # An empty value that fails a length rule is a missing value, for people.
            out[prefix] = _("Campo obrigatório.")
            return
        if isinstance(messages, dict):
            for key, value in messages.items():
                walk(value, f"{prefix}.{key}" if prefix else str(key))
        elif isinstance(messages, list | tuple):
            texts = [m for m in messages if isinstance(m, str)]
            if texts:
                out[prefix or "_form"] = field_message(texts[0])
            for item in messages:
                if isinstance(item, dict):
                    walk(item, prefix)
        else:
            out[prefix or "_form"] = field_message(str(messages))

    walk(exc.messages, "")
    return out


def error_message(error: FieldError) -> str:
    """A service's complaint about one field, in Portuguese."""
    return reason_text(error.reason) or field_message(error.msg)


def domain_errors(exc: DomainError) -> dict[str, str]:
    """``{field or "_form": message}`` for an error raised by a service."""
    if isinstance(exc, ValidationFailed):
        return {(str(e.loc[-1]) if e.loc else "_form"): error_message(e) for e in exc.errors}
    return {"_form": domain_message(exc)}


def domain_message(exc: DomainError) -> str:
    """One sentence for the whole error (the first field's, for a validation failure)."""
    if isinstance(exc, ValidationFailed) and exc.errors:
        return error_message(exc.errors[0])
    if exc.reason == "plan_limit_reached":
        name = str(exc.extra.get("resource", ""))
        resource = str(RESOURCE_TEXT.get(name, name))
        return reason_text(exc.reason, {"resource": resource, "limit": exc.extra.get("limit", "?")}) or ""
    text = reason_text(exc.reason, exc.params)
    if text is not None:
        return text
    if exc.status == 404:
        return _("Não encontrado.")
    if exc.code == "FORBIDDEN":
        return _("Você não tem permissão para esta ação.")
    return exc.message


STATUS_DEFAULTS = {
    "Backlog": _l("Backlog"),
    "Todo": _l("A fazer"),
    "In Progress": _l("Em andamento"),
    "Done": _l("Concluído"),
    "Cancelled": _l("Cancelado"),
}


def status_name(name: str) -> str:
    """A status as the page shows it: the five defaults every project starts with are
    translated; names a team chose are theirs and shown as typed."""
    default = STATUS_DEFAULTS.get(name)
    return name if default is None else str(default)


PAPEL_TEXT = {
    "admin": _l("Administrador"),
    "planejador": _l("Planejador"),
    "gerente_loja": _l("Gerente de loja"),
    "visualizador": _l("Visualizador"),
}


def papel_name(papel: str | None) -> str:
    """A stock role as people read it (never the raw ``gerente_loja``)."""
    if papel is None:
        return _("sem acesso ao remanejamento")
    return str(PAPEL_TEXT.get(papel, papel))


# The plans the platform is installed with, as the pages name them; a plan an administrator
# adds later is shown by its own name.
PLAN_TEXT = {
    "free": _l("Gratuito"),
    "pro": _l("Pro"),
    "enterprise": _l("Enterprise"),
}


def plan_name(plan_id: str, name: str | None = None) -> str:
    """A plan as people read it: "Gratuito", never the raw ``free``."""
    return str(PLAN_TEXT.get(plan_id, name or plan_id))
