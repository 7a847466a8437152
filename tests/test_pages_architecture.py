"""How the application is put together: services gate the pages as they gate the APIs, page
modules hold no SQL, no module imports another that imports it back, no service function runs
over 80 lines, and every reason a service refuses with has pt-BR text."""

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
# Reads the code, or talks to a server of its own with no query that tells the databases apart:
# run once when `make test` runs both.
code_only = pytest.mark.any_database(on="sqlite")
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


@code_only
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


@code_only
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


@code_only
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


@code_only
def test_stock_services_build_no_api_bodies():
    """Stock services answer models and dataclasses with snake_case attributes; the schemas alone
    name them in camelCase on the wire (``data_key``), and the services take no API bodies."""
    offenders = [
        f"{path.name}:{line}" for path, tree in _sources("services/stock") for line in _camel_keys(tree)
    ]
    assert not offenders, offenders


@code_only
def test_the_structural_check_sees_a_camel_case_body():
    tree = ast.parse(
        'def out(rec):\n    return {"loteId": rec.lote_id}\n\ndef read(body):\n    return body["qtdMinima"]\n'
    )
    assert _camel_keys(tree) == [2, 5]


# --- imports and size --------------------------------------------------------------------------

# The application: these packages, and the modules beside them at the top of the tree.
APPLICATION_PACKAGES = ("blueprints", "models", "schemas", "services")
APPLICATION_MODULES = ("app", "config", "database", "errors", "extensions", "observability", "security")
# A service function longer than this does more than one job.
FUNCTION_LINES_MAX = 80

Sources = dict[str, tuple[Path, ast.Module]]


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _application_sources() -> Sources:
    modules = {
        _module_name(path): (path, tree) for folder in APPLICATION_PACKAGES for path, tree in _sources(folder)
    }
    for name in APPLICATION_MODULES:
        path = ROOT / f"{name}.py"
        modules[name] = (path, ast.parse(path.read_text(), filename=str(path)))
    return modules


def _typing_only(tree: ast.Module) -> set[int]:
    """The nodes under ``if TYPE_CHECKING:``: imports for annotations, which never run."""
    return {
        id(inner)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING"
        for inner in ast.walk(node)
    }


def _imported(node: ast.AST, package: str, known: Sources) -> list[str]:
    """The modules ``node`` imports: an import statement, at the top of the module or inside a
    function (deferred, but the cycle is the same), or ``importlib.import_module("name")``."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if isinstance(node, ast.ImportFrom):
        base = node.module or ""
        if node.level:
            parts = package.split(".")
            base = ".".join([*parts[: len(parts) - node.level + 1], base]).strip(".")
        # ``from package import module`` imports the module.
        return [f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base for alias in node.names]
    if (
        isinstance(node, ast.Call)
        and _called(node) == "import_module"
        and node.args
        and isinstance(node.args[0], ast.Constant)
    ):
        return [node.args[0].value]
    return []


def _import_graph(modules: Sources) -> dict[str, set[str]]:
    """Which application modules each one imports. A package's ``__init__`` runs before any of
    its modules, so importing a module is no edge to its package."""
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, (path, tree) in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        typing_only = _typing_only(tree)
        for node in ast.walk(tree):
            if id(node) not in typing_only:
                graph[name].update(
                    target
                    for target in _imported(node, package, modules)
                    if target in modules and target != name
                )
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Each import cycle a depth-first walk meets, as the modules along it (the first repeated)."""
    cycles: list[list[str]] = []
    state: dict[str, int] = {}  # 1 on the walk's current path, 2 done

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
    return cycles


@code_only
def test_the_application_imports_without_cycles():
    cycles = _cycles(_import_graph(_application_sources()))
    assert not cycles, f"{len(cycles)} import cycle(s): {cycles}"


@code_only
def test_the_cycle_check_sees_deferred_and_named_imports():
    def module(source: str) -> tuple[Path, ast.Module]:
        return ROOT / "services" / "example.py", ast.parse(source)

    modules = {
        "services.low": module("def later():\n    from services import high\n"),
        "services.high": module("from services import low\n"),
        "services.named": module("import importlib\n\nimportlib.import_module('services.high')\n"),
        "services.typed": module(
            "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n    from services import low\n"
        ),
    }
    graph = _import_graph(modules)
    assert graph == {
        "services.low": {"services.high"},
        "services.high": {"services.low"},
        "services.named": {"services.high"},
        "services.typed": set(),
    }
    assert _cycles(graph) == [["services.high", "services.low", "services.high"]]


def _long_functions(folder: str, limit: int) -> list[str]:
    """Functions of ``folder`` over ``limit`` lines, from the ``def`` line (decorators left out)
    to the body's last line, each as ``path:line name (length)``."""
    return [
        f"{path.relative_to(ROOT)}:{node.lineno} {node.name} ({length} lines)"
        for path, tree in _sources(folder)
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and (length := node.end_lineno - node.lineno + 1) > limit
    ]


@code_only
def test_no_service_function_is_longer_than_80_lines():
    offenders = _long_functions("services", FUNCTION_LINES_MAX)
    assert not offenders, f"{len(offenders)} function(s) over {FUNCTION_LINES_MAX} lines: {offenders}"


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
