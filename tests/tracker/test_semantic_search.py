"""Workspace search: keyword, semantic and hybrid modes, the plan feature, isolation, freshness
after writes (jobs run inline once a request commits), the CLI backfill, the ONNX encoder and
the pages."""

from __future__ import annotations

import re
import uuid

import numpy as np
import pytest
from sqlalchemy import select, text

from extensions import db
from models.tracker_search import IssueVector
from services.tracker import semantic
from tests.test_pages_tracker import sign_in
from tests.tracker.support import (
    API,
    add_member,
    assert_error,
    issues_url,
    make_issue,
    make_project,
    register,
    superadmin,
)

pytestmark = pytest.mark.usefixtures("search_indexing")

# A small support desk: payments are also called "cobrança" in the issues that talk of both,
# so the built-in encoder learns the two words go together.
ISSUES = [
    ("Cobrança duplicada no cartão", "Cliente pagou uma vez e o pagamento aparece duas vezes na fatura."),
    ("Pagamento recusado pelo banco", "A cobrança volta recusada para clientes com cartão de débito."),
    ("Estorno de pagamento não chegou", "O estorno da cobrança foi pedido há dez dias."),
    ("Cobrança do frete errada", "O pagamento do frete soma o valor duas vezes no checkout."),
    ("Pagamento por boleto não compensa", "A cobrança por boleto demora mais de três dias úteis."),
    ("Fatura com cobrança repetida", "O cliente viu a mesma cobrança na fatura do cartão."),
    ("Tela de login lenta no celular", "O login demora vinte segundos na rede móvel."),
    ("Senha não é aceita no login", "Depois de trocar a senha o login recusa a nova."),
    ("Foto do produto não carrega", "A vitrine mostra a imagem quebrada para sandálias."),
    ("Imagem do produto desfocada", "As fotos da vitrine aparecem borradas no zoom."),
    ("Etiqueta de envio sem CEP", "A expedição imprime a etiqueta sem o CEP do destino."),
    ("Separação do pedido atrasada", "O CD de Cajamar atrasa a separação dos pedidos grandes."),
]


def search_url(tenant) -> str:
    return f"{API}/workspaces/{tenant.slug}/search"


def search(client, tenant, q, mode="keyword", status=200, **params):
    response = client.get(
        search_url(tenant), query_string={"q": q, "mode": mode, **params}, headers=tenant.headers
    )
    assert response.status_code == status, response.get_json()
    return response.get_json()


def titles(body) -> list[str]:
    return [result["issue"]["title"] for result in body["results"]]


def on_plan(client, root, tenant, plan: str) -> None:
    response = client.patch(
        f"{API}/admin/organizations/{tenant.org_id}", json={"plan": plan}, headers=root.headers
    )
    assert response.status_code == 200, response.get_json()


@pytest.fixture
def desk(client):
    """An owner on the pro plan (semantic_search) with a project of payment, login and CD issues."""
    root = superadmin(client)
    owner = register(client, name="Olga Dona")
    on_plan(client, root, owner, "pro")
    project = make_project(client, owner, key="SUP", name="Suporte")
    made = {
        title: make_issue(client, owner, project, title=title, description=text) for title, text in ISSUES
    }
    return {"root": root, "owner": owner, "project": project, "issues": made}


def test_keyword_mode_finds_words_in_titles_descriptions_and_comments(client, desk):
    owner = desk["owner"]
    body = search(client, owner, "senha")
    assert titles(body)[0] == "Senha não é aceita no login"
    assert body["mode"] == "keyword" and body["page"] == 1 and body["total"] == len(body["results"]) == 1
    result = body["results"][0]
    assert result["score"] > 0 and result["issue"]["key"].startswith("SUP-")
    assert "<mark>Senha</mark>" in result["highlight"]
    # Accents and case ignored, words in the description found.
    assert titles(search(client, owner, "CAJAMAR"))[0] == "Separação do pedido atrasada"
    assert titles(search(client, owner, "separacao"))[0] == "Separação do pedido atrasada"
    # A comment is searchable too.
    issue = desk["issues"]["Etiqueta de envio sem CEP"]
    comment = client.post(
        f"{issues_url(owner, desk['project'])}/{issue['key']}/comments",
        json={"body": "Falta a transportadora Jadlog na integração"},
        headers=owner.headers,
    )
    assert comment.status_code == 201
    found = search(client, owner, "jadlog")
    assert titles(found) == ["Etiqueta de envio sem CEP"]
    assert "<mark>Jadlog</mark>" in found["results"][0]["highlight"]


def test_keyword_mode_matches_the_start_of_words_every_word_before_any(client, desk):
    owner = desk["owner"]
    # The start of a word matches, accents and case aside; the middle of one does not.
    prefix = titles(search(client, owner, "ESTOR"))
    assert prefix == ["Estorno de pagamento não chegou"]
    assert search(client, owner, "storno")["total"] == 0
    # Issues with every word come first; then those with some of them.
    both = titles(search(client, owner, "vitrine zoom"))
    assert both[0] == "Imagem do produto desfocada"
    assert set(both) == {"Imagem do produto desfocada", "Foto do produto não carrega"}
    # Words that never meet are still found one by one.
    apart = set(titles(search(client, owner, "cajamar senha")))
    assert apart == {"Separação do pedido atrasada", "Senha não é aceita no login"}


def test_keyword_search_on_postgresql_reads_the_index_of_words(client, desk):
    """The query's expression must be the index's (migration 0039), or every search reads
    every issue: with sequential scans off, the plan names the index."""
    if db.session.get_bind().dialect.name != "postgresql":
        pytest.skip("SQLite reads the words with LIKE")
    every, _ = semantic._word_conditions(["pagam", "cobran"])
    statement = select(IssueVector.issue_id).where(every)
    db.session.execute(text("SET LOCAL enable_seqscan = off"))
    plan = db.session.execute(
        text(
            "EXPLAIN " + str(statement.compile(db.session.get_bind(), compile_kwargs={"literal_binds": True}))
        )
    ).scalars()
    assert "ix_issue_vectors_words_lexemes" in "\n".join(plan)
    # And the index answers the same as the words: each issue with both word starts.
    found = set(db.session.scalars(statement))
    expected = {
        issue_id
        for issue_id, words in db.session.execute(select(IssueVector.issue_id, IssueVector.words))
        if " pagam" in words and " cobran" in words
    }
    assert found == expected and len(found) >= 4


def test_semantic_and_hybrid_need_the_plan_feature_keyword_does_not(client):
    owner = register(client, name="Gratuito")
    project = make_project(client, owner, key="FRE")
    make_issue(client, owner, project, title="Pagamento recusado")
    for mode in ("semantic", "hybrid"):
        response = client.get(
            search_url(owner), query_string={"q": "pagamento", "mode": mode}, headers=owner.headers
        )
        body = assert_error(response, 402, "PLAN_LIMIT_REACHED")
        assert body["details"]["feature"] == "semantic_search" and "pro" in body["details"]["available_in"]
    assert titles(search(client, owner, "pagamento")) == ["Pagamento recusado"]


def test_bad_queries_are_400(client, desk):
    owner = desk["owner"]
    for params in (
        {"q": ""},
        {"q": "x", "mode": "fuzzy"},
        {"q": "x", "page": 0},
        {"q": "x", "project_id": "nope"},
    ):
        response = client.get(search_url(owner), query_string=params, headers=owner.headers)
        assert_error(response, 400, "VALIDATION_ERROR")
    response = client.get(search_url(owner), headers=owner.headers)
    assert_error(response, 400, "VALIDATION_ERROR")


def test_a_synonym_found_by_meaning_that_keyword_misses(client, desk):
    owner = desk["owner"]
    target = "Fatura com cobrança repetida"  # never says "pagamento" nor "duplicado"
    assert target not in titles(search(client, owner, "pagamento duplicado"))
    semantic = titles(search(client, owner, "pagamento duplicado", mode="semantic"))
    assert target in semantic[:5]
    assert semantic.index(target) < min(
        semantic.index(t) if t in semantic else 99
        for t in ("Tela de login lenta no celular", "Foto do produto não carrega")
    )
    assert target in titles(search(client, owner, "pagamento duplicado", mode="hybrid"))[:6]


def test_a_typo_is_found_by_semantic_and_hybrid_not_by_keyword(client, desk):
    owner = desk["owner"]
    assert "Separação do pedido atrasada" not in titles(search(client, owner, "separasão atrazada"))
    semantic = search(client, owner, "separasão do pedido atrazada", mode="semantic")
    assert titles(semantic)[0] == "Separação do pedido atrasada"
    assert "<mark>" in semantic["results"][0]["highlight"]
    hybrid = search(client, owner, "etiqeta sem cep", mode="hybrid")
    assert titles(hybrid)[0] == "Etiqueta de envio sem CEP"
    assert hybrid["mode"] == "hybrid" and hybrid["results"][0]["score"] > 0


def test_hybrid_fuses_both_rankings(client, desk):
    owner = desk["owner"]
    keyword = titles(search(client, owner, "login"))
    semantic = titles(search(client, owner, "login", mode="semantic"))
    hybrid = titles(search(client, owner, "login", mode="hybrid"))
    assert set(hybrid) == set(keyword) | set(semantic)
    assert set(hybrid[:2]) == {"Tela de login lenta no celular", "Senha não é aceita no login"}


def test_only_issues_the_caller_may_read(client, desk):
    owner, root = desk["owner"], desk["root"]
    stranger = register(client, name="Outra Empresa")
    on_plan(client, root, stranger, "pro")
    theirs = make_project(client, stranger, key="OUT")
    make_issue(client, stranger, theirs, title="Cobrança duplicada no cartão da outra empresa")
    for mode in ("keyword", "semantic", "hybrid"):
        mine = titles(search(client, owner, "cobrança duplicada", mode=mode))
        assert "Cobrança duplicada no cartão da outra empresa" not in mine
        assert titles(search(client, stranger, "cobrança duplicada", mode=mode)) == [
            "Cobrança duplicada no cartão da outra empresa"
        ]
    # Another organization's workspace and project: 404, as everywhere.
    assert_error(
        client.get(search_url(stranger), query_string={"q": "x"}, headers=owner.headers), 404, "NOT_FOUND"
    )
    response = client.get(
        search_url(owner), query_string={"q": "cobrança", "project_id": theirs["id"]}, headers=owner.headers
    )
    assert_error(response, 404, "NOT_FOUND")
    # A project of another workspace of the same organization is not this workspace's search.
    other = client.post(
        f"{API}/workspaces",
        json={"name": "Financeiro", "organization_id": owner.org_id},
        headers=owner.headers,
    )
    assert other.status_code == 201, other.get_json()
    other_slug = other.get_json()["slug"]
    elsewhere = client.post(
        f"{API}/workspaces/{other_slug}/projects",
        json={"name": "Contas", "key": "FIN"},
        headers=owner.headers,
    ).get_json()
    client.post(
        f"{API}/workspaces/{other_slug}/projects/{elsewhere['id']}/issues",
        json={"title": "Cobrança duplicada do fornecedor"},
        headers=owner.headers,
    )
    for mode in ("keyword", "semantic", "hybrid"):
        assert "Cobrança duplicada do fornecedor" not in titles(
            search(client, owner, "cobrança duplicada", mode=mode)
        )
    # A viewer of the organization reads; someone outside does not.
    viewer = register(client, name="Vitor Leitor")
    add_member(client, owner, viewer, role="viewer")
    response = client.get(
        search_url(owner), query_string={"q": "cobrança", "mode": "hybrid"}, headers=viewer.headers
    )
    assert response.status_code == 200 and "Cobrança duplicada no cartão" in titles(response.get_json())
    assert_error(
        client.get(search_url(owner), query_string={"q": "cobrança"}, headers=stranger.headers),
        404,
        "NOT_FOUND",
    )


def test_project_filter_and_paging(client, desk):
    owner = desk["owner"]
    other = make_project(client, owner, key="OPS", name="Operações")
    make_issue(client, owner, other, title="Cobrança da transportadora")
    everywhere = search(client, owner, "cobrança")
    only = search(client, owner, "cobrança", project_id=other["id"])
    assert "Cobrança da transportadora" in titles(everywhere)
    assert titles(only) == ["Cobrança da transportadora"]
    first = search(client, owner, "cobrança", per_page=2)
    second = search(client, owner, "cobrança", per_page=2, page=2)
    assert len(first["results"]) == 2 and first["total"] == everywhere["total"] > 2
    assert not set(titles(first)) & set(titles(second))


def test_an_edit_is_searchable_after_its_job_and_a_deleted_issue_never_returns(client, desk):
    owner, project = desk["owner"], desk["project"]
    issue = desk["issues"]["Imagem do produto desfocada"]
    url = f"{issues_url(owner, project)}/{issue['key']}"
    assert search(client, owner, "pixelizada")["total"] == 0
    changed = client.patch(
        url, json={"description": "As fotos ficam pixelizadas no zoom."}, headers=owner.headers
    )
    assert changed.status_code == 200
    # The request's commit ran the indexing job (inline in the tests).
    assert titles(search(client, owner, "pixelizada")) == ["Imagem do produto desfocada"]
    assert (
        "Imagem do produto desfocada"
        in titles(search(client, owner, "fotos pixelizadas", mode="semantic"))[:2]
    )
    assert client.delete(url, headers=owner.headers).status_code == 204
    for mode in ("keyword", "semantic", "hybrid"):
        for q in ("pixelizada", "imagem desfocada", "fotos do produto"):
            assert "Imagem do produto desfocada" not in titles(search(client, owner, q, mode=mode))


def test_the_job_is_queued_once_per_write_and_deduplicated(client, desk, app):
    from sqlalchemy import func, select

    from extensions import db
    from models.jobs import Job

    owner = desk["owner"]
    with app.app_context():
        before = db.session.scalar(select(func.count()).select_from(Job).where(Job.kind == "busca"))
    make_issue(client, owner, desk["project"], title="Troca de tamanho pelo app")
    with app.app_context():
        jobs_ = db.session.scalars(select(Job).where(Job.kind == "busca").order_by(Job.created_at)).all()
        assert len(jobs_) == before + 1
        assert jobs_[-1].state == "done" and jobs_[-1].lock_key is None


def test_the_cli_backfills_every_issue(client, desk, runner, app):
    from sqlalchemy import delete

    from extensions import db
    from models.tracker_search import IssueVector, SearchModel

    owner = desk["owner"]
    with app.app_context():
        db.session.execute(delete(IssueVector))
        db.session.execute(delete(SearchModel))
        db.session.commit()
    assert search(client, owner, "cajamar")["total"] == 0
    assert search(client, owner, "cajamar", mode="semantic")["total"] == 0
    result = runner.invoke(args=["tracker", "reindex-search"])
    assert result.exit_code == 0, result.output
    assert re.search(r"12 tarefas", result.output), result.output
    assert titles(search(client, owner, "cajamar")) == ["Separação do pedido atrasada"]
    assert (
        titles(search(client, owner, "separacão atrasada", mode="semantic"))[0]
        == "Separação do pedido atrasada"
    )
    unknown = runner.invoke(args=["tracker", "reindex-search", "nao-existe"])
    assert unknown.exit_code != 0 and "nao-existe" in unknown.output


def test_highlight_escapes_the_text(client, desk):
    owner = desk["owner"]
    make_issue(
        client,
        owner,
        desk["project"],
        title="Aviso <script>alert(1)</script> no rodapé",
        description="O rodapé mostra <b>negrito</b> & outras marcas",
    )
    result = search(client, owner, "rodapé")["results"][0]
    assert "<script>" not in result["highlight"] and "&lt;script&gt;" in result["highlight"]
    assert "<mark>rodapé</mark>" in result["highlight"]


def _tiny_onnx_model(directory, vocabulary: list[str], dims: int = 8) -> None:
    """An embedding lookup whose token vectors are mean-pooled by the loader, and a word-level
    tokenizer over ``vocabulary``."""
    onnx = pytest.importorskip("onnx")
    tokenizers = pytest.importorskip("tokenizers")
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(7)
    table = rng.normal(size=(len(vocabulary) + 2, dims)).astype(np.float32)
    # Synonyms share a vector: the model "knows" them, as a real sentence model would.
    index = {word: i + 2 for i, word in enumerate(vocabulary)}
    table[index["cobranca"]] = table[index["pagamento"]]
    graph = helper.make_graph(
        [helper.make_node("Gather", ["table", "input_ids"], ["last_hidden_state"], axis=0)],
        "tiny",
        [
            helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "tokens"]),
            helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "tokens"]),
        ],
        [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, ["batch", "tokens", dims])],
        [numpy_helper.from_array(table, "table")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(model, str(directory / "model.onnx"))
    vocab = {"[PAD]": 0, "[UNK]": 1, **index}
    tokenizer = tokenizers.Tokenizer(tokenizers.models.WordLevel(vocab, unk_token="[UNK]"))
    tokenizer.normalizer = tokenizers.normalizers.Sequence(
        [
            tokenizers.normalizers.NFD(),
            tokenizers.normalizers.StripAccents(),
            tokenizers.normalizers.Lowercase(),
        ]
    )
    tokenizer.pre_tokenizer = tokenizers.pre_tokenizers.Whitespace()
    tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
    tokenizer.save(str(directory / "tokenizer.json"))


def test_an_operator_onnx_model_encodes_and_search_uses_it(client, app, tmp_path, monkeypatch, runner):
    from services.tracker import embeddings

    vocabulary = ["pagamento", "cobranca", "recusado", "login", "lento", "senha", "foto", "produto"]
    _tiny_onnx_model(tmp_path, vocabulary)
    encoder = embeddings.OnnxEncoder(tmp_path)
    vectors = encoder.encode(["pagamento recusado", "cobrança recusado", "login lento"])
    assert vectors.shape == (3, 8) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert vectors[0] @ vectors[1] > 0.99 > vectors[0] @ vectors[2]

    monkeypatch.setitem(app.config, "EMBEDDING_MODEL_DIR", str(tmp_path))
    root = superadmin(client)
    owner = register(client, name="Com Modelo")
    on_plan(client, root, owner, "pro")
    project = make_project(client, owner, key="ONX")
    make_issue(client, owner, project, title="Cobrança recusado")
    make_issue(client, owner, project, title="Login lento")
    make_issue(client, owner, project, title="Foto produto")
    body = search(client, owner, "pagamento", mode="semantic")
    assert titles(body)[0] == "Cobrança recusado"
    from extensions import db
    from models.tracker_search import SearchModel

    with app.app_context():
        models = db.session.query(SearchModel).filter_by(organization_id=uuid.UUID(owner.org_id)).all()
        assert [m.encoder for m in models] == [f"onnx:{tmp_path.name}"] and models[0].dims == 8


def test_the_issue_list_page_has_a_search_box_with_modes(client, desk):
    owner = desk["owner"]
    sign_in(client, owner)
    page = client.get(
        f"/tracker/w/{owner.slug}/search", query_string={"q": "pagamento duplicado", "mode": "hybrid"}
    )
    assert page.status_code == 200
    html = page.get_data(as_text=True)
    assert "Fatura com cobrança repetida" in html
    assert "<mark>" in html and 'value="hybrid"' in html
    listing = client.get(f"/tracker/w/{owner.slug}/p/{desk['project']['id']}/issues").get_data(as_text=True)
    assert 'name="mode"' in listing and "semântica" in listing and "híbrida" in listing


def test_semantic_modes_are_disabled_with_a_hint_on_a_plan_without_them(client):
    owner = register(client, name="Gratuito Página")
    project = make_project(client, owner, key="FRE")
    make_issue(client, owner, project, title="Pagamento recusado <b>x</b>")
    sign_in(client, owner)
    listing = client.get(f"/tracker/w/{owner.slug}/p/{project['id']}/issues").get_data(as_text=True)
    assert re.search(r'value="semantic"[^>]*disabled', listing)
    assert "plano Pro" in listing
    page = client.get(f"/tracker/w/{owner.slug}/search", query_string={"q": "pagamento", "mode": "semantic"})
    html = page.get_data(as_text=True)
    assert page.status_code == 402
    assert "O plano desta organização não inclui este recurso" in html and "Pro" in html
    keyword = client.get(
        f"/tracker/w/{owner.slug}/search", query_string={"q": "pagamento", "mode": "keyword"}
    )
    assert keyword.status_code == 200
    html = keyword.get_data(as_text=True)
    assert "<mark>Pagamento</mark>" in html and "<b>x</b>" not in html


def test_the_issue_page_shows_similar_issues(client, desk):
    owner = desk["owner"]
    sign_in(client, owner)
    issue = desk["issues"]["Cobrança duplicada no cartão"]
    html = client.get(f"/tracker/w/{owner.slug}/p/{desk['project']['id']}/issues/{issue['key']}").get_data(
        as_text=True
    )
    assert "Tarefas parecidas" in html
    section = html[html.index("Tarefas parecidas") :]
    assert "Fatura com cobrança repetida" in section[:3000]
    assert "Tela de login lenta no celular" not in section[:3000]
