"""The workspace search page: keyword, semantic or hybrid, matched passages highlighted.

The same ``services.tracker.semantic.search`` as the API. An organization whose
plan lacks ``semantic_search`` sees those modes disabled with the plans that
include them; asking for one anyway answers 402 with that hint.
"""

from __future__ import annotations

from flask import request
from flask_jwt_extended import current_user
from marshmallow import ValidationError

from blueprints.pages.common import page_login_required, render_page
from blueprints.pages.messages import domain_message, plan_name, schema_errors
from blueprints.pages.tracker_common import TrackerPagesBlueprint
from schemas.tracker.search import SearchQuery
from services.errors import DomainError, PlanLimitError
from services.tracker import plans, semantic, workspaces
from services.tracker.access import workspace_access

blp = TrackerPagesBlueprint("search_pages", __name__)

PER_PAGE = 20
FIELDS = ("q", "mode", "project_id", "page")


def mode_choices(organization) -> dict:
    """What the mode toggle shows: whether the plan has the semantic modes, and which plans do."""
    allowed = bool(organization.plan_features.get(semantic.FEATURE))
    offering = [] if allowed else [plan_name(p.id) for p in plans.plans_with_feature(semantic.FEATURE)]
    return {"semantic_allowed": allowed, "semantic_plans": offering}


@blp.route("/w/<slug>/search")
@page_login_required()
def search(slug: str):
    workspace, access = workspace_access(current_user, slug)
    raw = {name: request.args.get(name, "").strip() for name in FIELDS if request.args.get(name, "").strip()}
    context = {
        "workspace": workspace,
        "slug": slug,
        "raw": raw,
        "mode": raw.get("mode", "keyword"),
        "projects": workspaces.list_projects(current_user, slug),
        "result": None,
        "errors": {},
        **mode_choices(access.organization),
    }
    status = 200
    if raw.get("q"):
        try:
            query = SearchQuery().load({**raw, "per_page": PER_PAGE})
            context["result"] = semantic.search(
                current_user,
                slug,
                query["q"],
                query["mode"],
                query.get("project_id"),
                query["page"],
                PER_PAGE,
            )
        except ValidationError as exc:
            context["errors"], status = schema_errors(exc), 400
        except PlanLimitError as exc:
            context["errors"], status = {"_form": domain_message(exc)}, exc.status
        except DomainError as exc:
            if exc.status == 404:
                raise
            context["errors"], status = {"_form": domain_message(exc)}, exc.status
    return render_page("tracker/search.html", "search_results", status=status, **context)
