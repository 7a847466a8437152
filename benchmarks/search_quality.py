"""Search quality: recall@10 and MRR of keyword, semantic and hybrid search, per query class.

    .venv/bin/python benchmarks/search_quality.py [--issues 2000]

Two corpora: the demo's issues (``services.tracker.demo_content``: titles,
descriptions and comments) and a generated project of ``--issues`` issues over
twenty support topics, each written in several ways with shared filler. The
queries (``benchmarks/search_queries.json``) were written and labelled by hand,
not from the engine's output; a generated query's relevant issues are every
issue of its topic. recall@10 counts the relevant issues in the first ten over
``min(10, relevant)``; MRR is the mean of 1 / rank of the first relevant one.

The rankings are the service's own (``services.tracker.semantic``: ``bm25`` over
the stored keyword words, the built-in encoder fitted on the corpus with
``MIN_SIMILARITY`` and ``MAX_CANDIDATES``, reciprocal rank fusion); only the
database round trip is left out (the tests cover it).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from services.tracker import embeddings, semantic
from services.tracker.demo_content import ISSUES
from services.tracker.search_index import Document, embedding_text, keyword_words

QUERIES = Path(__file__).with_name("search_queries.json")

LOJAS = [f"LJ{n:03d}" for n in range(1, 81)]
PRODUTOS = ["tênis", "sandália", "bota", "chinelo", "sapatilha", "mocassim", "scarpin", "rasteira"]
UFS = ["SP", "MG", "RJ", "BA", "PR", "RS", "PE", "GO"]
CDS = ["CD Cajamar", "CD Extrema"]
FILLER = [
    "Reportado pela equipe da {loja}.",
    "Prioridade combinada na reunião de segunda.",
    "Acontece desde a última atualização.",
    "Vários clientes reclamaram no SAC.",
    "Precisa de análise antes da próxima campanha.",
    "Ver print anexado pelo gerente.",
]
TOPICS = {
    "pix": [
        ("Pix não confirma na {loja}", "O cliente paga pelo banco e o pedido continua aguardando."),
        ("QR Code do Pix expira antes do pagamento", "O código vence em um minuto no checkout."),
        ("Confirmação do Pix atrasada no app", "A baixa do Pix leva mais de dez minutos."),
    ],
    "boleto": [
        ("Boleto vencido não é reemitido", "O cliente não consegue gerar a segunda via."),
        ("Boleto pago não baixa o pedido na {loja}", "A compensação chegou mas o pedido segue pendente."),
        ("Código de barras do boleto ilegível", "A linha digitável sai cortada no PDF."),
    ],
    "estorno": [
        (
            "Estorno do cartão não aparece para o cliente",
            "A operadora confirmou o cancelamento há uma semana.",
        ),
        ("Reembolso pendente do pedido {n}", "O pedido foi cancelado e o valor não voltou."),
        ("Devolver o valor da compra cancelada", "Cliente cobra o estorno pelo SAC."),
    ],
    "frete": [
        ("Frete grátis não aplicado acima de R$ {n}", "A regra de frete grátis ignora o cupom."),
        ("Prazo de entrega errado para {uf}", "O site promete dois dias e a transportadora leva sete."),
        ("Cálculo do frete falha com CEP de {uf}", "A cotação volta vazia para alguns CEPs."),
    ],
    "login": [
        ("Vendedor não consegue entrar no app na {loja}", "O login volta para a tela inicial."),
        ("Senha recusada após atualização", "Depois da nova versão a senha antiga não é aceita."),
        ("Sessão cai durante a venda", "O vendedor precisa autenticar de novo no meio do atendimento."),
    ],
    "estoque": [
        (
            "Saldo de estoque diferente do físico na {loja}",
            "O sistema mostra pares que não estão na prateleira.",
        ),
        ("Contagem de {produto} não bate com o sistema", "A loja contou menos pares que o saldo."),
        ("Estoque negativo de {produto}", "O saldo ficou abaixo de zero depois das vendas."),
    ],
    "etiqueta": [
        ("Impressora de etiquetas travando no {cd}", "A impressora para a cada vinte etiquetas."),
        ("Etiqueta de preço com valor antigo na {loja}", "O preço impresso não acompanha a remarcação."),
        ("Etiqueta de envio sem número da nota", "A expedição imprime a etiqueta incompleta."),
    ],
    "lentidao": [
        ("Página da categoria {produto} demora para abrir", "Leva mais de oito segundos no celular."),
        ("App lento na tela de estoque", "A consulta trava alguns segundos antes de mostrar."),
        ("Busca do site leva mais de {n} segundos", "Os resultados demoram a carregar."),
    ],
    "troca": [
        ("Troca de tamanho de {produto} pelo site", "O cliente quer outro tamanho do mesmo modelo."),
        ("Cliente quer trocar {produto} na loja física", "Comprou pelo site e quer trocar na {loja}."),
        ("Política de troca sem custo", "Definir as regras de troca sem frete."),
    ],
    "transferencia": [
        ("Transferência da {loja} para a {loja2} parada", "Os pares saíram e não chegaram."),
        ("Remanejamento de {produto} entre lojas", "O lote sugeriu mover pares da {loja}."),
        ("Pares enviados para a loja errada", "A transferência foi para a {loja2} em vez da {loja}."),
    ],
    "promocao": [
        ("Desconto da campanha não aparece no {produto}", "A vitrine mostra o preço cheio."),
        ("Preço promocional errado na vitrine", "O valor da promoção está acima do normal."),
        ("Cupom de aniversário não funciona", "O cupom enviado por e-mail é recusado no checkout."),
    ],
    "nota": [
        ("Nota fiscal rejeitada pela Sefaz", "A NF-e volta com rejeição de schema."),
        ("NF-e sem CFOP correto na transferência", "A nota entre lojas sai com o CFOP de venda."),
        ("Erro ao emitir nota de devolução", "A emissão da nota trava no sistema."),
    ],
    "avaliacao": [
        ("Avaliações com estrelas não aparecem no {produto}", "A nota média some da página."),
        ("Moderar comentários ofensivos de clientes", "Precisamos esconder comentários com palavrões."),
        ("Responder avaliações negativas", "O SAC quer responder direto na página."),
    ],
    "notificacao": [
        ("E-mail de pedido enviado não chega", "O cliente não recebe o aviso de envio."),
        ("Push de carrinho abandonado duplicado", "O aviso chega três vezes no celular."),
        ("SMS de confirmação com link quebrado", "O link do SMS abre uma página vazia."),
    ],
    "inventario": [
        ("Inventário anual da {loja}", "Contagem geral marcada para o fim do mês."),
        ("Contagem cíclica do {cd}", "Contar uma rua por dia sem parar a expedição."),
        ("Bloquear vendas durante o balanço", "As vendas precisam parar enquanto a loja conta."),
    ],
    "leitor": [
        ("Leitor de código de barras não reconhece {produto}", "O código da caixa não é lido."),
        ("Coletor do {cd} sem bateria", "Os coletores descarregam no meio do turno."),
        ("Scanner Bluetooth desconecta", "O scanner perde o pareamento com o celular."),
    ],
    "relatorio": [
        ("Relatório de vendas por vendedor vazio", "O relatório não traz as vendas de ontem."),
        ("Exportar relatório de ruptura em CSV", "As lojas querem o arquivo para planilha."),
        ("Dashboard de metas sem dados de ontem", "O dashboard não atualizou durante a noite."),
    ],
    "erp": [
        ("Pedido não sobe para o ERP", "A integração parou de enviar pedidos."),
        ("Integração com o ERP duplica clientes", "Cada pedido cria um cliente novo no ERP."),
        ("Sincronização de preços do ERP falhou", "Os preços do site ficaram desatualizados."),
    ],
    "acessibilidade": [
        ("Contraste baixo nos botões do checkout", "Texto cinza sobre fundo claro."),
        ("Leitor de tela não lê o menu", "O menu não tem rótulos acessíveis."),
        ("Navegação por teclado no carrinho", "Não dá para chegar ao botão de finalizar com Tab."),
    ],
    "fotos": [
        ("Foto do {produto} cortada no celular", "A imagem perde a ponta do calçado."),
        ("Imagens sem zoom na página do produto", "O cliente não consegue ampliar a foto."),
        ("Galeria de fotos carrega devagar", "As fotos demoram a aparecer na vitrine."),
    ],
}


def _fill(text: str, rng: random.Random) -> str:
    loja, loja2 = rng.sample(LOJAS, 2)
    return text.format(
        loja=loja,
        loja2=loja2,
        produto=rng.choice(PRODUTOS),
        uf=rng.choice(UFS),
        cd=rng.choice(CDS),
        n=rng.randint(2, 900),
    )


def generated(count: int, seed: int = 11) -> tuple[list[Document], dict[str, str]]:
    rng = random.Random(seed)
    docs, topic_of = [], {}
    names = sorted(TOPICS)
    for n in range(count):
        topic = names[n % len(names)]
        title, description = rng.choice(TOPICS[topic])
        filler = " ".join(_fill(f, rng) for f in rng.sample(FILLER, 2))
        doc_id = f"G{n}"
        docs.append(Document(doc_id, "org", "proj", _fill(title, rng), f"{_fill(description, rng)} {filler}"))
        topic_of[doc_id] = topic
    return docs, topic_of


def demo() -> list[Document]:
    docs = []
    for issue in ISSUES:
        comments = [step[2] for step in issue.steps if step[0] == "c"]
        docs.append(Document(issue.ref, "org", issue.project, issue.title, issue.description, comments))
    return docs


class Engine:
    def __init__(self, docs: list[Document]):
        self.docs = docs
        started = time.perf_counter()
        self.model = embeddings.fit([embedding_text(d) for d in docs])
        self.matrix = self.model.encode([embedding_text(d) for d in docs])
        self.seconds = time.perf_counter() - started
        self.words = [(d.id, keyword_words(d), embeddings.fold(d.title)) for d in docs]

    def keyword(self, q: str) -> list:
        terms = semantic.query_terms(q)
        # What the service's LIKE '% term%' keeps.
        candidates = [w for w in self.words if any(f" {t}" in w[1] for t in terms)]
        return semantic.bm25(terms, candidates)

    def semantic(self, q: str) -> list:
        scores = self.matrix @ self.model.encode([q])[0]
        order = np.argsort(-scores)[: semantic.MAX_CANDIDATES]
        return [(self.docs[i].id, float(scores[i])) for i in order if scores[i] >= semantic.MIN_SIMILARITY]

    def rank(self, q: str, mode: str) -> list:
        if mode == "keyword":
            return self.keyword(q)
        if mode == "semantic":
            return self.semantic(q)
        return semantic.fuse(self.keyword(q), self.semantic(q))


def measure(engine: Engine, queries: list[dict], relevant_of) -> dict:
    table: dict = defaultdict(lambda: defaultdict(list))
    for query in queries:
        relevant = relevant_of(query)
        for mode in semantic.MODES:
            ranked = [doc_id for doc_id, _ in engine.rank(query["q"], mode)]
            hits = len(set(ranked[:10]) & relevant)
            first = next((i for i, doc_id in enumerate(ranked, 1) if doc_id in relevant), None)
            for cls in (query["class"], "all"):
                table[(mode, cls)]["recall"].append(hits / min(10, len(relevant)))
                table[(mode, cls)]["rr"].append(1 / first if first else 0.0)
    return table


def report(name: str, table: dict) -> None:
    classes = ["all", "exact", "forms", "synonyms", "typos"]
    print(f"\n{name}: recall@10 / MRR (queries)")
    print(f"{'mode':10}" + "".join(f"{c:>22}" for c in classes))
    for mode in semantic.MODES:
        cells = []
        for cls in classes:
            row = table.get((mode, cls))
            if not row:
                cells.append(f"{'-':>22}")
                continue
            recall, mrr = np.mean(row["recall"]), np.mean(row["rr"])
            cells.append(f"{recall:>9.3f} / {mrr:.3f} ({len(row['recall']):>3})")
        print(f"{mode:10}" + "".join(cells))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--issues", type=int, default=2000, help="issues of the generated project")
    parser.add_argument(
        "--latent-share",
        type=float,
        default=embeddings.LATENT_SHARE,
        help="weight of the LSA half against the lexical one (0: TF-IDF of stems and pieces alone, 1: LSA alone)",
    )
    args = parser.parse_args()
    embeddings.LATENT_SHARE = args.latent_share
    queries = json.loads(QUERIES.read_text())
    demo_engine = Engine(demo())
    report(
        f"demo ({len(demo_engine.docs)} issues, fit {demo_engine.seconds:.2f} s)",
        measure(demo_engine, queries["demo"], lambda q: set(q["relevant"])),
    )
    docs, topic_of = generated(args.issues)
    by_topic = defaultdict(set)
    for doc_id, topic in topic_of.items():
        by_topic[topic].add(doc_id)
    gen_engine = Engine(docs)
    report(
        f"generated ({len(docs)} issues, fit {gen_engine.seconds:.2f} s)",
        measure(gen_engine, queries["generated"], lambda q: by_topic[q["topic"]]),
    )
    both = measure(demo_engine, queries["demo"], lambda q: set(q["relevant"]))
    for key, row in measure(gen_engine, queries["generated"], lambda q: by_topic[q["topic"]]).items():
        for metric, values in row.items():
            both[key][metric].extend(values)
    report(f"both ({len(queries['demo']) + len(queries['generated'])} queries)", both)


if __name__ == "__main__":
    main()
