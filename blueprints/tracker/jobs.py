"""Jobs seen from the tracker: e-mails and notification runs someone started, by id."""

from __future__ import annotations

from flask_jwt_extended import current_user

from blueprints.common import auth_required
from blueprints.parsing import Blueprint
from schemas.jobs import JobOut
from services import job_access, jobs

blp = Blueprint(
    "tracker_jobs",
    __name__,
    url_prefix="",
    description="Background jobs: state and progress of work started by the caller.",
)


@blp.route("/jobs/<uuid:job_id>", methods=["GET"])
@auth_required()
@blp.response(200, JobOut)
def get_job(job_id):
    """A job's state, progress (0-100, with a message), result or error, and its times.

    Visible to whoever started it and to platform superadmins; anyone else gets 404."""
    return jobs.job_out(job_access.get_job(job_id, current_user, "tracker"))
