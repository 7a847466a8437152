"""Every service that changes state checks its actor, whoever calls it (API, page, CLI, job)."""

from __future__ import annotations

from datetime import date

import pytest

from services.errors import ForbiddenError, NotFoundError
from services.stock import decisions, generation, recommendations, rules, transit
from services.tracker import accounts, organizations, workspaces
from tests.factories import make_loja, make_lote, make_produto, make_rec, make_user

DEFAULT_RULES = rules.NovasRegras(**{k: v for k, v in rules.defaults().items() if k != "cadence"})


@pytest.mark.parametrize("papel", [None, "visualizador", "gerente_loja", "planejador"])
def test_only_a_stock_admin_changes_rules_and_cadence(ctx, papel):
    user = make_user(papel=papel)
    with pytest.raises(ForbiddenError):
        rules.update_rules(DEFAULT_RULES, user)
    with pytest.raises(ForbiddenError):
        rules.set_cadence("diaria", user)


@pytest.mark.parametrize("papel", [None, "visualizador", "gerente_loja"])
def test_only_planners_and_admins_generate_a_batch(ctx, papel):
    with pytest.raises(ForbiddenError):
        generation.generate(date(2026, 11, 18), user=make_user(papel=papel))


@pytest.mark.parametrize("papel", [None, "visualizador"])
def test_decisions_refuse_an_actor_without_the_role(ctx, papel):
    rec = make_rec(make_lote(), make_produto(), make_loja(is_cd=True), make_loja())
    user = make_user(papel=papel)
    for act in (decisions.aprovar, decisions.recusar, decisions.executar):
        with pytest.raises(ForbiddenError):
            act(rec.id, user)
    assert rec.status == "pendente"
    with pytest.raises(ForbiddenError):
        decisions.desfazer(rec.lote_id, rec.id, user, "aprovar")
    # A decision on everything a filter matches changes nothing and says the role is why.
    result = decisions.decidir_filtro(
        "aprovar", recommendations.FiltroRecomendacoes(lote_id=rec.lote_id), user
    )
    assert (result.alteradas, result.ignoradas) == (0, {"papel": 1})
    assert rec.status == "pendente"


@pytest.mark.parametrize("papel", [None, "visualizador"])
def test_receipt_refuses_an_actor_without_the_role(ctx, papel):
    rec = make_rec(make_lote(), make_produto(), make_loja(is_cd=True), make_loja(), status="executada")
    with pytest.raises(ForbiddenError):
        transit.receber(rec.id, make_user(papel=papel), 1)
    assert rec.recebida_em is None


def test_tracker_services_refuse_members_and_strangers(ctx):
    owner = make_user(papel=None)
    organization = accounts.create_organization("Loja", owner)
    workspace = accounts.create_workspace(organization, "Loja")
    viewer, stranger = make_user(papel=None), make_user(papel=None)
    organizations.invite(owner, organization.id, viewer.email, "viewer")
    organizations.accept_invitation(viewer, organizations.my_invitations(viewer)[0].id)

    with pytest.raises(ForbiddenError):
        organizations.invite(viewer, organization.id, "x@giro.test", "member")
    with pytest.raises(ForbiddenError):
        workspaces.create_project(viewer, workspace.slug, {"name": "P", "key": "PP", "description": None})
    # Outside the organization, nothing exists.
    with pytest.raises(NotFoundError):
        organizations.invite(stranger, organization.id, "x@giro.test", "member")
    with pytest.raises(NotFoundError):
        workspaces.create_project(stranger, workspace.slug, {"name": "P", "key": "PP", "description": None})


def test_tracker_audit_log_and_bulk_edit_refuse_members_and_strangers(ctx):
    from services.tracker import audit, issues, plans

    owner = make_user(papel=None)
    organization = accounts.create_organization("Loja", owner)
    plans.assign_plan(organization, "enterprise")
    workspace = accounts.create_workspace(organization, "Loja")
    project = workspaces.create_project(
        owner, workspace.slug, {"name": "P", "key": "PP", "description": None}
    )
    issues.create_issue(owner, workspace.slug, project.id, {"title": "Uma"})
    viewer, stranger = make_user(papel=None), make_user(papel=None)
    organizations.invite(owner, organization.id, viewer.email, "viewer")
    organizations.accept_invitation(viewer, organizations.my_invitations(viewer)[0].id)

    for actor, refusal in ((viewer, ForbiddenError), (stranger, NotFoundError)):
        with pytest.raises(refusal):
            audit.list_events(actor, organization.id, audit.AuditFilter())
        with pytest.raises(refusal):
            audit.export_csv(actor, organization.id, audit.AuditFilter())
        with pytest.raises(refusal):
            issues.bulk_update(actor, workspace.slug, project.id, ["PP-1"], {"priority": "high"})
    assert audit.list_events(owner, organization.id, audit.AuditFilter()).total > 0


def test_platform_administration_refuses_anyone_but_a_superadmin(ctx):
    from services.tracker import admin

    someone = make_user(papel="admin")  # a stock admin is no platform administrator
    organization = accounts.create_organization("Loja", someone)
    workspace = accounts.create_workspace(organization, "Loja")
    calls = [
        lambda: admin.stats(someone),
        lambda: admin.list_users(someone, {}),
        lambda: admin.update_user(someone, someone.id, {"superadmin": True}),
        lambda: admin.list_organizations(someone, {}),
        lambda: admin.update_organization(someone, organization.id, {"suspended": True}),
        lambda: admin.list_workspaces(someone, {}),
        lambda: admin.update_workspace(someone, workspace.id, {"name": "Outro"}),
    ]
    for call in calls:
        with pytest.raises(ForbiddenError):
            call()
    assert (someone.superadmin, organization.suspended, workspace.name) == (False, False, "Loja")


def test_webhook_services_refuse_members_and_strangers(ctx):
    from services.tracker import webhooks

    owner = make_user(papel=None)
    organization = accounts.create_organization("Loja", owner)
    member, stranger = make_user(papel=None), make_user(papel=None)
    organizations.invite(owner, organization.id, member.email, "member")
    organizations.accept_invitation(member, organizations.my_invitations(member)[0].id)
    hook = webhooks.create_webhook(owner, organization.id, "https://127.0.0.1/hook", ["issue.created"])

    for person, refusal in ((member, ForbiddenError), (stranger, NotFoundError)):
        with pytest.raises(refusal):
            webhooks.create_webhook(person, organization.id, "https://127.0.0.1/x", ["issue.created"])
        with pytest.raises(refusal):
            webhooks.update_webhook(person, organization.id, hook.id, {"enabled": False})
        with pytest.raises(refusal):
            webhooks.delete_webhook(person, organization.id, hook.id)
        with pytest.raises(refusal):
            webhooks.list_deliveries(person, organization.id, hook.id)
    assert hook.enabled is True
