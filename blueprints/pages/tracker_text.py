"""Portuguese text for the tracker's domain and validation errors, shown inline on pages.

The services speak English (the API's ``message``); pages show people pt-BR.
Known messages are translated; anything unknown keeps the service's text.
"""

from __future__ import annotations

from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l
from marshmallow import ValidationError

from services.errors import DomainError, ValidationFailed

RESOURCE_TEXT = {
    "members": _l("membros"),
    "projects": _l("projetos"),
    "issues": _l("issues"),
    "storage_bytes": _l("armazenamento"),
}


def _known(message: str) -> str | None:
    table = {
        "A project with this key already exists in the workspace": _("Já existe um projeto com essa chave neste workspace."),
        "A workspace with this slug already exists": _("Já existe um workspace com esse endereço."),
        "An issue cannot be related to itself": _("Uma issue não pode se relacionar com ela mesma."),
        "These issues are already related": _("Essas issues já estão relacionadas."),
        "This would create a cycle of blocking issues": _("Isso criaria um ciclo de bloqueios."),
        "A plan with this id already exists": _("Já existe um plano com esse identificador."),
        "You cannot ban or demote yourself": _("Você não pode bloquear nem rebaixar a si mesmo."),
        "No such status in this project": _("Status inexistente neste projeto."),
        "The assignee must be a member of the organization": _("O responsável precisa ser membro da organização."),
        "Every label must belong to this project": _("Todas as etiquetas precisam ser deste projeto."),
        "The parent must be an issue of the same project": _("A issue pai precisa ser do mesmo projeto."),
        "An issue cannot be a descendant of itself": _("Uma issue não pode ser descendente de si mesma."),
        "The due date cannot be before the start date": _("O prazo não pode ser anterior ao início."),
        "No such issue in this organization": _("Issue não encontrada nesta organização."),
        "The project has no status; create one first": _("O projeto não tem nenhum status."),
        "No such parent issue": _("Issue pai não encontrada neste projeto."),
        "Viewers can only read": _("Seu papel nesta organização só permite leitura."),
        "Only owners and admins can do this": _("Só proprietários e administradores da organização podem fazer isso."),
        "This organization is suspended": _("Esta organização está suspensa."),
        "Only platform administrators can do this": _("Só administradores da plataforma podem fazer isso."),
        "This person is already a member": _("Essa pessoa já é membro da organização."),
        "This address already has a pending invitation": _("Esse endereço já tem um convite pendente."),
        "Only an owner can give or take the owner role": _("Só um proprietário pode dar ou tirar o papel de proprietário."),
        "Only an owner can remove an owner": _("Só um proprietário pode remover outro proprietário."),
        "Only an owner can invite an owner": _("Só um proprietário pode convidar um proprietário."),
        "An organization needs at least one owner": _("A organização precisa de pelo menos um proprietário."),
        "You are already a member of this organization": _("Você já é membro desta organização."),
        "Member not found": _("Membro não encontrado."),
        "Issues still have this status; move them to another status first": _("Há issues com este status: mova-as para outro status antes de excluí-lo."),
        "Status not found": _("Status não encontrado."),
        "Label not found": _("Etiqueta não encontrada."),
        "A label with this name already exists in the project": _("Já existe uma etiqueta com esse nome neste projeto."),
        "Invitation not found": _("Convite não encontrado."),
    }  # fmt: skip
    return table.get(message)


def field_message(message: str) -> str:
    """A marshmallow or domain message about one field, in Portuguese."""
    known = _known(message)
    if known:
        return known
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


def domain_errors(exc: DomainError) -> dict[str, str]:
    """``{field or "_form": message}`` for an error raised by a service."""
    if isinstance(exc, ValidationFailed):
        return {(str(e.loc[-1]) if e.loc else "_form"): field_message(e.msg) for e in exc.errors}
    return {"_form": domain_message(exc)}


def domain_message(exc: DomainError) -> str:
    """One sentence for the whole error (the first field's, for a validation failure)."""
    if isinstance(exc, ValidationFailed) and exc.errors:
        return field_message(exc.errors[0].msg)
    if exc.code == "PLAN_LIMIT_REACHED":
        name = str(exc.extra.get("resource", ""))
        resource = str(RESOURCE_TEXT.get(name, name))
        return _(
            "O plano desta organização chegou ao limite de %(resource)s (%(limit)s). Fale com quem administra a conta.",
            resource=resource,
            limit=exc.extra.get("limit", "?"),
        )
    if exc.code == "ORGANIZATION_SUSPENDED":
        return _("Esta organização está suspensa.")
    if exc.status == 404:
        return _("Não encontrado.")
    known = _known(exc.message)
    if known:
        return known
    if exc.code == "FORBIDDEN":
        return _("Você não tem permissão para esta ação.")
    return exc.message


def status_name(name: str) -> str:
    """A status as the page shows it: the five defaults every project starts with are
    translated; names a team chose are theirs and shown as typed."""
    defaults = {
        "Backlog": _("Backlog"),
        "Todo": _("A fazer"),
        "In Progress": _("Em andamento"),
        "Done": _("Concluído"),
        "Cancelled": _("Cancelado"),
    }
    return defaults.get(name, name)
