"""Helpers for custom fields' tests: a plan with the feature, fields made through the API."""

from __future__ import annotations

from tests.tracker.support import API, project_url, superadmin


def on_plan(client, tenant, plan: str = "pro") -> None:
    """Put the tenant's organization on ``plan`` (``pro`` has ``custom_fields``)."""
    # One superadmin per test's client: the address registers once.
    root = getattr(client, "custom_fields_root", None) or superadmin(client)
    client.custom_fields_root = root
    response = client.patch(
        f"{API}/admin/organizations/{tenant.org_id}", json={"plan": plan}, headers=root.headers
    )
    assert response.status_code == 200, response.get_json()


def fields_url(tenant, project) -> str:
    return project_url(tenant, project) + "/custom-fields"


def make_field(client, tenant, project, **body) -> dict:
    response = client.post(fields_url(tenant, project), json=body, headers=tenant.headers)
    assert response.status_code == 201, response.get_json()
    return response.get_json()
