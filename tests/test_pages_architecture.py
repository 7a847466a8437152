"""How the pages are put together: services gate them as they gate the APIs, page modules
hold no SQL and no import cycles, and every reason a service refuses with has pt-BR text."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from app import create_app
from blueprints.pages.messages import REASON_TEXT
from services.unique import DUPLICATES
from tests.conftest import IsolatedClient
from tests.factories import PASSWORD, make_user

ROOT = Path(__file__).resolve().parent.parent
FIRST_PARTY = ("app", "blueprints", "config", "errors", "extensions", "models", "schemas", "services")
# The classes a service refuses with (``services/errors.py`` and their subclasses).
DOMAIN_ERRORS = {
    "DomainError",
    "NotFoundError",
    "ConflictError",
    "ForbiddenError",
    "AuthenticationError",
    "PlanLimitError",
    "TokenReuseError",
}


def _sources(folder: str):
    for path in sorted((ROOT / folder).rglob("*.py")):
        yield path, ast.parse(path.read_text(), filename=str(path))


def _called(node: ast.Call) -> str:
    func = node.func
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")


def _reasons_in_services() -> dict[str, str]:
    """Every reason a service names (a ``reason=`` or ``..._reason=`` literal), and where."""
    found: dict[str, str] = {}
    for path, tree in _sources("services"):
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            for keyword in node.keywords:
                if (
                    keyword.arg
                    and (keyword.arg == "reason" or keyword.arg.endswith("_reason"))
                    and isinstance(keyword.value, ast.Constant)
                    and keyword.value.value
                ):
                    found.setdefault(keyword.value.value, f"{path.relative_to(ROOT)}:{node.lineno}")
    for duplicate in DUPLICATES.values():
        found.setdefault(duplicate.reason, "services/unique.py DUPLICATES")
    return found


# --- reasons -----------------------------------------------------------------------------------


def test_every_refusal_a_service_raises_names_its_reason():
    missing = []
    for path, tree in _sources("services"):
        stock = path.relative_to(ROOT).parts[1] == "stock"
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            name = _called(node)
            needs = name in DOMAIN_ERRORS or (name in ("FieldError", "_field") and not stock)
            if needs and not any(k.arg == "reason" for k in node.keywords):
                missing.append(f"{path.relative_to(ROOT)}:{node.lineno} {name}")
    assert not missing, f"refusals without a reason: {missing}"


def test_every_reason_the_services_raise_has_pt_br_text():
    found = _reasons_in_services()
    missing = {reason: where for reason, where in found.items() if reason not in REASON_TEXT}
    assert not missing, f"reasons without pt-BR text in blueprints/pages/messages.py: {missing}"
    stale = sorted(set(REASON_TEXT) - set(found))
    assert not stale, f"pt-BR text for reasons no service raises: {stale}"


def test_reasons_stay_out_of_the_api_bodies(client, ctx):
    from tests.factories import auth_headers

    user = make_user()
    stock = client.get(
        "/api/v1/produtos/00000000-0000-0000-0000-000000000000", headers=auth_headers(client, user)
    )
    assert stock.status_code == 404 and stock.get_json() == {"detail": "Produto não encontrado"}
    tracker = client.get("/tracker/api/v1/workspaces/nope", headers=auth_headers(client, user))
    assert tracker.status_code == 404
    assert tracker.get_json() == {"error": "NOT_FOUND", "message": "Workspace not found"}


# --- structure ---------------------------------------------------------------------------------


def test_page_modules_hold_no_sql():
    """Views reach the database only through services; the toolkit alone rolls a refusal back."""
    offenders = []
    for path, tree in _sources("blueprints/pages"):
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module:
                names = {alias.name for alias in node.names}
                if node.module.startswith("sqlalchemy") or (
                    node.module == "extensions" and "db" in names and path.name != "common.py"
                ):
                    offenders.append(f"{path.name}:{node.lineno}")
            elif isinstance(node, ast.Import) and any(a.name.startswith("sqlalchemy") for a in node.names):
                offenders.append(f"{path.name}:{node.lineno}")
    assert not offenders, offenders


CAMEL_CASE = re.compile(r"[a-z]+[A-Z][A-Za-z]*")


def _camel_keys(tree: ast.AST) -> list[int]:
    """Lines where a dict literal has a camelCase key, or a value is read by a camelCase key."""
    lines = []
    for node in ast.walk(tree):
        keys = (
            node.keys
            if isinstance(node, ast.Dict)
            else [node.slice]
            if isinstance(node, ast.Subscript)
            else []
        )
        lines += [
            key.lineno
            for key in keys
            if isinstance(key, ast.Constant)
            and isinstance(key.value, str)
            and CAMEL_CASE.fullmatch(key.value)
        ]
    return lines


def test_stock_services_build_no_api_bodies():
    """Stock services answer models and dataclasses with snake_case attributes; the schemas alone
    name them in camelCase on the wire (``data_key``), and the services take no API bodies."""
    offenders = [
        f"{path.name}:{line}" for path, tree in _sources("services/stock") for line in _camel_keys(tree)
    ]
    assert not offenders, offenders


def test_the_structural_check_sees_a_camel_case_body():
    tree = ast.parse(
        'def out(rec):\n    return {"loteId": rec.lote_id}\n\ndef read(body):\n    return body["qtdMinima"]\n'
    )
    assert _camel_keys(tree) == [2, 5]


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def test_blueprints_and_services_import_without_cycles():
    modules = {}
    for folder in ("blueprints", "services", "models", "schemas"):
        for path, tree in _sources(folder):
            modules[_module_name(path)] = (path, tree)
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, (path, tree) in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        # Imports for annotations only (``if TYPE_CHECKING:``) never run: not an edge.
        typing_only = {
            id(inner)
            for node in ast.walk(tree)
            if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING"
            for inner in ast.walk(node)
        }
        for node in ast.walk(tree):
            if id(node) in typing_only:
                continue
            targets = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    base = ".".join(
                        [*package.split(".")[: len(package.split(".")) - node.level + 1], base]
                    ).strip(".")
                # ``from package import module`` imports the module.
                targets = [
                    f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base
                    for alias in node.names
                ]
            for target in targets:
                if target in modules and target != name:
                    graph[name].add(target)
    # A package's __init__ runs before any of its modules: an edge to it is not a cycle by itself.
    cycles = []
    state: dict[str, int] = {}

    def visit(node: str, trail: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                cycles.append([*trail[trail.index(nxt) :], nxt])
            elif nxt not in state:
                visit(nxt, [*trail, nxt])
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node, [node])
    assert not cycles, f"import cycles: {cycles}"


# --- SERVICES gates the pages ------------------------------------------------------------------


def _app_serving(app, services: tuple[str, ...]):
    served = create_app(
        {
            "TESTING": True,
            "SQLALCHEMY_DATABASE_URI": app.config["SQLALCHEMY_DATABASE_URI"],
            "ARGON2_TIME_COST": 1,
            "ARGON2_MEMORY_COST": 1024,
            "SMTP_HOST": None,
            "SERVICES": services,
        }
    )
    served.test_client_class = IsolatedClient
    return served


@pytest.fixture(scope="module")
def tracker_only(app):
    return _app_serving(app, ("tracker",))


@pytest.fixture(scope="module")
def stock_only(app):
    return _app_serving(app, ("stock",))


def _signed_in(served, user):
    client = served.test_client()
    response = client.post("/login", data={"email": user.email, "senha": PASSWORD})
    assert response.status_code == 302
    return client


def test_a_tracker_only_process_serves_no_stock_page(tracker_only, ctx):
    client = _signed_in(tracker_only, make_user(papel="admin"))
    for path in ("/lotes", "/lojas", "/grade", "/historico", "/regras"):
        assert client.get(path).status_code == 404, path
    home = client.get("/")
    assert home.status_code == 302 and home.headers["Location"] == "/tracker/"
    tracker = client.get("/tracker/")
    assert tracker.status_code == 200
    body = tracker.get_data(as_text=True)
    assert 'href="/tracker/"' in body and 'href="/lotes"' not in body and 'href="/lojas"' not in body


def test_a_stock_only_process_serves_no_tracker_page(stock_only, ctx):
    client = _signed_in(stock_only, make_user(papel="planejador"))
    for path in ("/tracker/", "/admin/", "/admin/users"):
        assert client.get(path).status_code == 404, path
    lotes = client.get("/lotes")
    assert lotes.status_code == 200
    body = lotes.get_data(as_text=True)
    assert 'href="/lotes"' in body and 'href="/tracker/"' not in body
    # Without a stock role there is no tracker to offer.
    stranger = _signed_in(stock_only, make_user(papel=None))
    refused = stranger.get("/")
    assert refused.status_code == 403
    assert "Ir para o Tracker" not in refused.get_data(as_text=True)
