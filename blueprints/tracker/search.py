"""Search over a workspace's issues: keyword, semantic or hybrid."""

from __future__ import annotations

from flask_jwt_extended import current_user

from blueprints.common import auth_required
from blueprints.parsing import Blueprint
from blueprints.tracker.docs import error_responses
from schemas.tracker.search import SearchPage, SearchQuery
from services.tracker import semantic
from services.tracker.issues import MAX_PER_PAGE

blp = Blueprint("tracker_search", __name__, url_prefix="/workspaces/<slug>", description="Search")


@blp.route("/search", methods=["GET"])
@auth_required()
@blp.arguments(SearchQuery, location="query", error_status_code=400)
@blp.response(200, SearchPage)
@error_responses(blp, 400, 402, 403, 404)
def search(query, slug):
    """Search the titles, descriptions and comments of the workspace's issues.

    `mode=keyword` (default, every plan): issues holding words that start with
    the words of `q`, ignoring case and accents, ranked by BM25 (title words
    weigh more). `mode=semantic`: issues closest in meaning (vectors of the
    organization's text, or of the instance's embedding model), so a synonym or
    a typo still finds them. `mode=hybrid`: both rankings fused by reciprocal
    rank fusion. `semantic` and `hybrid` need the plan feature `semantic_search`
    (402 `PLAN_LIMIT_REACHED` with `details: {feature: "semantic_search", plan,
    available_in}`).

    `project_id` narrows to one project of the workspace (404 for any other).
    Each result has the `issue`, its `score` and `highlight`: the best matching
    passage (title, a sentence of the description or of a comment) as HTML, all
    text escaped and the matched words inside `<mark>…</mark>`. At most 200
    issues are ranked; `total` counts them. A change is searchable once its
    background job ran (seconds); deleted issues never appear.
    """
    return semantic.search(
        current_user,
        slug,
        query["q"],
        query["mode"],
        query.get("project_id"),
        query["page"],
        min(query["per_page"], MAX_PER_PAGE),
    )
