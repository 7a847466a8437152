"""What the tracker's demo writes: its three projects, their labels, about forty issues in
Portuguese with the steps each goes through (comments, moves, new assignees), and the
relations between them. ``services.tracker.demo`` writes them through the tracker's services.
"""

from __future__ import annotations

from dataclasses import dataclass, field

PROJECTS = (
    ("WEB", "Loja virtual", "O site de vendas: catálogo, carrinho, checkout e pós-venda."),
    ("APP", "App do vendedor", "O app das lojas físicas: consulta de estoque, venda assistida e reserva."),
    ("CD", "Operações dos CDs", "Cajamar e Extrema: recebimento, separação, remanejamento e expedição."),
)
LABELS = {
    "WEB": (("checkout", "#b42318"), ("pagamento", "#b54708"), ("mobile", "#175cd3"), ("SEO", "#067647"), ("UX", "#7a5af8")),
    "APP": (("estoque", "#0f766e"), ("offline", "#b54708"), ("Android", "#067647"), ("iOS", "#175cd3"), ("UX", "#7a5af8")),
    "CD": (("remanejamento", "#0f766e"), ("expedição", "#b54708"), ("recebimento", "#175cd3"), ("inventário", "#7a5af8")),
}  # fmt: skip


@dataclass
class DemoIssue:
    """One issue: how it is created, then its steps in order.

    Steps: ``("c", who, text)`` a comment (``{@local}`` becomes an @mention of that demo
    account), ``("s", who, category)`` a move to the project's status of that category,
    ``("p", who, priority)``, ``("a", who, local)`` a new assignee, ``("l", who, labels)``.
    """

    project: str
    ref: str
    title: str
    type: str
    priority: str
    status: str
    creator: str
    assignee: str | None = None
    labels: tuple[str, ...] = ()
    description: str | None = None
    due_in: int | None = None
    estimate: int | None = None
    parent: str | None = None
    steps: list[tuple] = field(default_factory=list)


def _i(project, ref, title, type_, priority, status, creator, assignee=None, labels=(), **extra) -> DemoIssue:
    return DemoIssue(project, ref, title, type_, priority, status, creator, assignee, tuple(labels), **extra)


ISSUES: tuple[DemoIssue, ...] = (
    # --- Loja virtual ------------------------------------------------------------------------
    _i(
        "WEB",
        "pix",
        "Checkout não finaliza com Pix no Safari do iPhone",
        "bug",
        "high",
        "todo",
        "gerente",
        "planejador",
        ("checkout", "pagamento", "mobile"),
        description="Clientes da **LJ001** relatam que, no Safari do iOS 17, o QR Code do Pix aparece mas a "
        "página não confirma o pagamento.\n\n1. Adicionar qualquer tênis ao carrinho\n2. Escolher Pix\n"
        "3. Pagar pelo app do banco\n\nA confirmação nunca chega; no Chrome funciona.",
        due_in=2,
        estimate=5,
        steps=[
            (
                "c",
                "planejador",
                "Reproduzi no iPhone 13 com iOS 17.4. O *polling* de confirmação para quando a aba "
                "vai para segundo plano.",
            ),
            ("p", "admin", "urgent"),
            ("s", "planejador", "in_progress"),
            (
                "c",
                "admin",
                "{@planejador} dá para trocar o polling por *webhook* do PSP ainda nesta semana? "
                "É 18% das vendas do site.",
            ),
            ("c", "planejador", "Dá sim. Abri a sub-issue do webhook; o polling fica como reserva."),
        ],
    ),
    _i(
        "WEB",
        "webhook",
        "Receber a confirmação do Pix por webhook do PSP",
        "subtask",
        "urgent",
        "todo",
        "planejador",
        "planejador",
        ("pagamento",),
        parent="pix",
        estimate=3,
        due_in=2,
        steps=[("s", "planejador", "in_progress")],
    ),
    _i(
        "WEB",
        "polling",
        "Retomar o polling quando a aba volta ao primeiro plano",
        "subtask",
        "high",
        "todo",
        "planejador",
        "superadmin",
        ("checkout", "mobile"),
        parent="pix",
        estimate=2,
        steps=[
            ("s", "superadmin", "done"),
            ("c", "superadmin", "Feito com `visibilitychange`; testado no iOS 16 e 17."),
        ],
    ),
    _i(
        "WEB",
        "frete",
        "Cálculo de frete some quando o CEP tem hífen",
        "bug",
        "medium",
        "backlog",
        "gerente",
        "superadmin",
        ("checkout",),
        description="Digitando `01310-100` o campo aceita, mas o valor do frete não aparece.",
        steps=[
            ("s", "superadmin", "done"),
            (
                "c",
                "superadmin",
                "Normalizamos o CEP antes de consultar a transportadora. Corrigido em produção.",
            ),
            ("c", "gerente", "Confirmado na loja, obrigado!"),
        ],
    ),
    _i(
        "WEB",
        "grade",
        "Mostrar a grade de tamanhos disponível na página do produto",
        "story",
        "high",
        "todo",
        "admin",
        "superadmin",
        ("UX",),
        description="Hoje o cliente só descobre que o 37 acabou depois de escolher. Queremos os tamanhos "
        "esgotados riscados, com o aviso *me avise quando chegar*.",
        due_in=9,
        estimate=8,
        steps=[
            ("c", "gerente", "Na loja física a pergunta mais comum é justamente essa. Apoio muito."),
            ("s", "superadmin", "in_progress"),
            ("c", "superadmin", "{@gerente} você consegue me mandar os tamanhos que mais esgotam na LJ001?"),
        ],
    ),
    _i(
        "WEB",
        "aviseme",
        'E-mail de "me avise quando chegar" por tamanho',
        "subtask",
        "medium",
        "backlog",
        "superadmin",
        "planejador",
        ("UX",),
        parent="grade",
        estimate=3,
    ),
    _i(
        "WEB",
        "fotos",
        "Fotos dos produtos carregam devagar no 4G",
        "task",
        "medium",
        "todo",
        "superadmin",
        "superadmin",
        ("mobile", "SEO"),
        estimate=3,
        steps=[
            ("c", "superadmin", "Vamos servir WebP em três larguras e *lazy loading* abaixo da dobra."),
            ("s", "superadmin", "in_progress"),
        ],
    ),
    _i(
        "WEB",
        "seo",
        "Títulos das páginas de categoria sem a cidade da loja",
        "task",
        "low",
        "backlog",
        "admin",
        None,
        ("SEO",),
        steps=[("a", "admin", "superadmin"), ("s", "superadmin", "todo")],
    ),
    _i(
        "WEB",
        "avaliacoes",
        "Avaliações de clientes com o tamanho que compraram",
        "story",
        "medium",
        "backlog",
        "gerente",
        None,
        ("UX",),
        description="“Veste pequeno?” é a dúvida número um. Mostrar, em cada avaliação, o tamanho comprado "
        "e se serviu.",
        steps=[
            ("c", "admin", "Boa ideia. {@superadmin} entra no próximo ciclo junto com a grade de tamanhos?"),
            ("p", "admin", "high"),
        ],
    ),
    _i(
        "WEB",
        "cupom",
        "Cupom de primeira compra aceito duas vezes com e-mails diferentes",
        "bug",
        "high",
        "todo",
        "admin",
        "planejador",
        ("checkout", "pagamento"),
        due_in=5,
        steps=[
            ("c", "planejador", "Vou amarrar o cupom ao CPF além do e-mail."),
            ("s", "planejador", "in_progress"),
        ],
    ),
    _i(
        "WEB",
        "troca",
        "Fluxo de troca de tamanho sem custo de frete",
        "epic",
        "medium",
        "backlog",
        "admin",
        "admin",
        ("UX",),
        description="Trocar o tamanho é o principal motivo de contato no SAC. Objetivo: troca em três "
        "cliques, com coleta grátis ou troca na loja.",
        estimate=13,
        steps=[
            (
                "c",
                "gerente",
                "Na loja física a troca é imediata; podemos oferecer *troque na loja* como opção.",
            )
        ],
    ),
    _i(
        "WEB",
        "parcelas",
        "Exibir parcelamento sem juros no card do produto",
        "story",
        "low",
        "todo",
        "gerente",
        None,
        ("UX",),
        steps=[
            ("s", "admin", "cancelled"),
            ("c", "admin", "Fica para depois da troca do PSP; cancelando por enquanto."),
        ],
    ),
    _i(
        "WEB",
        "safari16",
        "Botão Comprar some no Safari 16 em telas pequenas",
        "bug",
        "medium",
        "todo",
        "gerente",
        "superadmin",
        ("mobile",),
        steps=[
            (
                "c",
                "superadmin",
                "Não é o mesmo problema do Pix: aqui o rodapé fixo cobre o botão. Corrigido.",
            ),
            ("s", "superadmin", "done"),
        ],
    ),
    # --- App do vendedor ---------------------------------------------------------------------
    _i(
        "APP",
        "offline",
        "Consultar estoque da loja sem internet",
        "story",
        "high",
        "todo",
        "gerente",
        "planejador",
        ("estoque", "offline"),
        description="No estoque do fundo da loja o sinal cai. O app deve guardar o último estoque "
        "sincronizado e dizer quando foi.",
        due_in=12,
        estimate=8,
        steps=[
            ("c", "planejador", "Proposta: sincronizar a cada 15 minutos e guardar em SQLite no aparelho."),
            ("s", "planejador", "in_progress"),
            ("c", "gerente", "{@planejador} 15 minutos está ótimo. Mostra a hora da última sincronização?"),
        ],
    ),
    _i(
        "APP",
        "sync",
        "Sincronização incremental do estoque por loja",
        "subtask",
        "high",
        "todo",
        "planejador",
        "planejador",
        ("estoque",),
        parent="offline",
        estimate=5,
        steps=[("s", "planejador", "in_progress")],
    ),
    _i(
        "APP",
        "hora",
        'Mostrar "atualizado às HH:MM" na tela de estoque',
        "subtask",
        "low",
        "todo",
        "planejador",
        "superadmin",
        ("UX", "offline"),
        parent="offline",
        estimate=1,
    ),
    _i(
        "APP",
        "leitor",
        "Leitor de código de barras não lê etiquetas amassadas",
        "bug",
        "medium",
        "todo",
        "gerente",
        "superadmin",
        ("Android",),
        steps=[
            ("c", "superadmin", "Trocar para a biblioteca nativa do Android melhorou bastante nos testes."),
            ("s", "superadmin", "in_progress"),
            ("s", "superadmin", "done"),
        ],
    ),
    _i(
        "APP",
        "reserva",
        "Reservar um par para o cliente buscar na loja",
        "story",
        "medium",
        "backlog",
        "admin",
        "planejador",
        ("estoque", "UX"),
        due_in=20,
        estimate=8,
        steps=[("c", "admin", "Reserva dura 48 h; depois volta ao estoque sozinha.")],
    ),
    _i(
        "APP",
        "login",
        "Sessão expira no meio da venda assistida",
        "bug",
        "urgent",
        "todo",
        "gerente",
        "superadmin",
        ("iOS", "Android"),
        due_in=1,
        steps=[
            ("c", "gerente", "Aconteceu três vezes hoje na LJ001, com cliente esperando."),
            ("s", "superadmin", "in_progress"),
            (
                "c",
                "superadmin",
                "A renovação do token não rodava com o app em segundo plano. Correção em teste.",
            ),
        ],
    ),
    _i(
        "APP",
        "vitrine",
        "Lista de produtos em campanha na tela inicial",
        "task",
        "low",
        "backlog",
        "admin",
        None,
        ("UX",),
        steps=[("l", "admin", ("UX", "estoque")), ("a", "admin", "gerente")],
    ),
    _i(
        "APP",
        "pagamento",
        "Aceitar Pix no app para a venda assistida",
        "story",
        "high",
        "todo",
        "admin",
        "planejador",
        ("iOS", "Android"),
        due_in=14,
        estimate=8,
        steps=[
            ("c", "planejador", "Reaproveitamos a integração com o PSP que a loja virtual está trocando.")
        ],
    ),
    _i(
        "APP",
        "ios17",
        "Teclado cobre o campo de quantidade no iOS 17",
        "bug",
        "low",
        "todo",
        "gerente",
        "superadmin",
        ("iOS",),
        steps=[("s", "superadmin", "done")],
    ),
    _i(
        "APP",
        "outras",
        "Ver estoque das lojas vizinhas com distância",
        "story",
        "medium",
        "todo",
        "gerente",
        "planejador",
        ("estoque",),
        description="Quando falta o tamanho, o vendedor quer indicar a loja mais perto que tem.",
        estimate=5,
        steps=[
            ("c", "planejador", "Dá para usar as coordenadas das lojas que o remanejamento já tem."),
            ("c", "gerente", "Perfeito. {@admin} podemos priorizar para o próximo ciclo?"),
            ("p", "admin", "high"),
        ],
    ),
    _i(
        "APP",
        "metas",
        "Painel de metas do dia por vendedor",
        "epic",
        "medium",
        "backlog",
        "admin",
        "admin",
        ("UX",),
        estimate=13,
        steps=[("p", "admin", "low"), ("c", "admin", "Baixando a prioridade: primeiro o estoque offline.")],
    ),
    # --- Operações dos CDs -------------------------------------------------------------------
    _i(
        "CD",
        "lote",
        "Lote semanal de remanejamento sugere origem bloqueada",
        "bug",
        "high",
        "todo",
        "planejador",
        "planejador",
        ("remanejamento",),
        description="O lote desta semana sugeriu tirar pares da LJ007, que está bloqueada para envio "
        "(reforma). Verificar se o bloqueio foi cadastrado antes da geração.",
        due_in=3,
        estimate=3,
        steps=[
            (
                "c",
                "admin",
                "O bloqueio foi cadastrado na terça, depois da geração de segunda. Regerar o lote resolve?",
            ),
            ("c", "planejador", "Resolve: as recomendações intocadas são trocadas. Vou regerar e conferir."),
            ("s", "planejador", "done"),
        ],
    ),
    _i(
        "CD",
        "separacao",
        "Lista de separação por rua em Cajamar",
        "story",
        "medium",
        "todo",
        "planejador",
        "gerente",
        ("expedição",),
        estimate=5,
        due_in=7,
        steps=[
            ("c", "gerente", "A equipe de Cajamar pediu a lista ordenada por rua e prateleira."),
            ("s", "gerente", "in_progress"),
        ],
    ),
    _i(
        "CD",
        "etiquetas",
        "Etiquetas de transferência com o código da loja destino",
        "task",
        "medium",
        "todo",
        "gerente",
        "gerente",
        ("expedição",),
        parent="separacao",
        estimate=2,
    ),
    _i(
        "CD",
        "recebimento",
        "Conferência de recebimento com divergência de grade",
        "story",
        "high",
        "backlog",
        "admin",
        "planejador",
        ("recebimento",),
        description="Quando a fábrica manda 40 no lugar de 38, a nota bate mas a grade não. Registrar a "
        "divergência por tamanho.",
        estimate=8,
        steps=[
            ("c", "planejador", "{@gerente} quantas divergências por semana vocês veem em Extrema?"),
            ("c", "gerente", "Umas dez notas por semana, quase sempre em tênis infantis."),
        ],
    ),
    _i(
        "CD",
        "inventario",
        "Inventário rotativo de Extrema em dezembro",
        "task",
        "medium",
        "todo",
        "admin",
        "gerente",
        ("inventário",),
        due_in=16,
        estimate=5,
    ),
    _i(
        "CD",
        "campanha",
        "Reservar estoque do CD para a campanha de verão",
        "task",
        "high",
        "todo",
        "planejador",
        "planejador",
        ("remanejamento",),
        due_in=6,
        steps=[
            ("s", "planejador", "in_progress"),
            (
                "c",
                "planejador",
                "Bloqueio de campanha ligado nas regras; o motor não tira mais o herói do CD.",
            ),
        ],
    ),
    _i(
        "CD",
        "coleta",
        "Horário de coleta da transportadora mudou para 16h",
        "task",
        "low",
        "todo",
        "gerente",
        "gerente",
        ("expedição",),
        steps=[("s", "gerente", "done")],
    ),
    _i(
        "CD",
        "devolucao",
        "Devoluções do site entram no estoque do CD errado",
        "bug",
        "medium",
        "todo",
        "superadmin",
        "planejador",
        ("recebimento",),
        steps=[
            (
                "c",
                "planejador",
                "Devolução de cliente do Sul está indo para Cajamar; deveria ir para Extrema.",
            )
        ],
    ),
    _i(
        "CD",
        "cubagem",
        "Cubagem das caixas de tênis para o frete entre CDs",
        "task",
        "low",
        "backlog",
        "planejador",
        "gerente",
        ("expedição",),
        estimate=2,
    ),
    _i(
        "CD",
        "ruptura",
        "Relatório de ruptura por tamanho para as lojas",
        "story",
        "medium",
        "backlog",
        "gerente",
        None,
        ("remanejamento", "inventário"),
    ),
    _i(
        "CD",
        "veto",
        "Registrar o motivo quando um gerente veta uma transferência",
        "task",
        "low",
        "todo",
        "admin",
        "planejador",
        ("remanejamento",),
        steps=[
            ("s", "planejador", "cancelled"),
            ("c", "planejador", "O lote já pede o motivo do veto; não precisa."),
        ],
    ),
)
# (project, ref, relation type, ref of the other issue): the inverse is written by the service.
RELATIONS = (
    ("pix", "blocks", "parcelas"),
    ("safari16", "relates_to", "pix"),
    ("cupom", "relates_to", "pix"),
    ("grade", "relates_to", "outras"),
    ("login", "blocks", "reserva"),
    ("offline", "blocks", "outras"),
    ("lote", "relates_to", "campanha"),
    ("devolucao", "relates_to", "troca"),
    ("recebimento", "blocks", "inventario"),
    ("pagamento", "relates_to", "webhook"),
    ("avaliacoes", "relates_to", "grade"),
)
