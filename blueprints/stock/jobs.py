"""Jobs of the remanejamento service: reading one, and starting a week's batch generation."""

from __future__ import annotations

from flask_jwt_extended import current_user

from blueprints.common import stock_auth_required
from blueprints.parsing import Blueprint
from schemas.jobs import GenerateRequest, JobOut
from services import job_access, jobs
from services.clock import today
from services.stock import partitions

blp = Blueprint(
    "stock_jobs",
    __name__,
    url_prefix="",
    description=(
        "Background jobs: long work (batch generation, CSV imports) runs on the workers and reports "
        "its state and progress here. A job is visible to whoever started it; batch generations also "
        "to every `admin` and `planejador`, imports to every `admin`."
    ),
)


@blp.route("/jobs/<uuid:job_id>", methods=["GET"])
@stock_auth_required()
@blp.response(200, JobOut)
def get_job(job_id):
    """A job's state, progress (0-100, with a message), result or error, and its times.

    Poll it until `state` is `done` or `failed`. Another person's job answers 404."""
    return jobs.job_out(job_access.get_job(job_id, current_user, "stock"))


@blp.route("/remanejamento/geracoes", methods=["POST"])
@stock_auth_required()
@blp.arguments(GenerateRequest)
@blp.response(202, JobOut)
@blp.alt_response(200, schema=JobOut, description="A generation of that week is already queued or running")
def generate_batch(body):
    """Generate (or refresh, keeping every decision) the batch of the ISO week of `data` in the background.

    `planejador` and `admin` only. Answers 202 with the new job, or 200 with the job already
    generating that week: a week is generated at most once at a time. Poll `GET /jobs/{id}`."""
    job, created = partitions.request_generation(body.get("data") or today(), actor=current_user)
    return jobs.job_out(job), (202 if created else 200)
