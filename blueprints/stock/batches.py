"""Recommendations, batches, decisions, rules, cadence, metrics, history and the grade matrix."""

from __future__ import annotations

from flask_jwt_extended import current_user

from blueprints.common import stock_auth_required
from blueprints.parsing import Blueprint
from blueprints.responses import json_object_stream, json_response
from schemas.fast import RowDumper, sql_json_object
from schemas.stock.batches import (
    AtivasQuery,
    CadencePayload,
    GradeMatrix,
    GradeQuery,
    HistoricoItem,
    HistoricoQuery,
    LoteOut,
    NodoFluxo,
    RecomendacaoOut,
    RecomendacoesQuery,
    RecusaRequest,
    RegrasPayload,
    TotaisLote,
    VetoRequest,
)
from schemas.stock.metrics import (
    Aprendizado,
    EfetividadeSemanal,
    KpisDashboard,
    Resultado,
    ResultadoQuery,
    Validacao,
)
from schemas.stock.transit import ProblemaList, ProblemaOut, ProblemaRequest, RecebimentoRequest, TransitoLoja
from services.stock import (
    batches,
    decisions,
    grade,
    metrics,
    outcome,
    problems,
    recommendations,
    rules,
    transit,
)

# Documented once, shown on every decision endpoint.
STATE_MACHINE = (
    "Estados: `pendente` → `aprovada` → `executada`; `pendente`/`aprovada` → `recusada`. "
    "Repetir a ação já tomada responde 200 sem mudança; outro movimento responde 409; uma vetada "
    "não pode ser aprovada nem executada até ser restaurada. Ações simultâneas são serializadas: "
    "a segunda vê o resultado da primeira."
)
blp = Blueprint(
    "stock_remanejamento",
    __name__,
    url_prefix="",
    description=(
        "Lotes semanais de recomendações de transferência e as decisões sobre elas. "
        "Papéis: `visualizador` só lê (403 nas ações); `gerente_loja` vê e executa apenas "
        "transferências que saem ou chegam na sua loja (as demais respondem 404, as outras ações 403); "
        "`planejador` e `admin` decidem tudo; só `admin` altera regras e cadência."
    ),
)

R = "/remanejamento"

# The recommendation lists answer thousands of rows: the services read them as SQL rows and
# these write each one in the schema's shape, without an ORM object or a marshmallow dump.
RECOMENDACAO = RowDumper(RecomendacaoOut)
# A recommendation's JSON as PostgreSQL writes it for a whole batch: the same object, built from
# the same schema, without a Python dump per row.
RECOMENDACAO_SQL = sql_json_object(RecomendacaoOut, recommendations.LISTED_COLUMNS)
LOTE_CABECALHO = RowDumper(LoteOut(exclude=("recomendacoes",)))
# Small bodies read often (the grade has a row per store, a cell per size): the same dump.
TOTAIS = RowDumper(TotaisLote)
GRADE = RowDumper(GradeMatrix)


@blp.route(f"{R}/recomendacoes", methods=["GET"])
@stock_auth_required()
@blp.arguments(RecomendacoesQuery, location="query")
@blp.response(200, RecomendacaoOut(many=True))
@blp.alt_response(404, description="`loteId` não existe")
def list_recomendacoes(query):
    """Recomendações do lote mais recente (ou de `loteId`).

    Filtros por igualdade exata. Ordem: prioridade (alta, media, baixa), score decrescente,
    depois a ordem do motor. Inclui vetadas e recusadas (veja `/lotes/{lid}/recomendacoes?ativas=true`).
    `limite`/`offset` paginam nessa ordem.
    """
    return json_response(RECOMENDACAO.dump_many(recommendations.list_recomendacao_rows(current_user, query)))


@blp.route(f"{R}/recomendacoes/<uuid:rid>", methods=["GET"])
@stock_auth_required()
@blp.response(200, RecomendacaoOut)
@blp.alt_response(404, description="Não existe ou não é visível para o usuário")
def get_recomendacao(rid):
    """Uma recomendação."""
    return recommendations.get_recomendacao(rid, current_user)


@blp.route(f"{R}/recomendacoes/<uuid:rid>/aprovar", methods=["POST"])
@stock_auth_required()
@blp.response(200, RecomendacaoOut)
@blp.alt_response(403, description="Papel sem permissão (planejador ou admin)")
@blp.alt_response(404, description="Não encontrada")
@blp.alt_response(409, description="O estado atual não permite aprovar")
@blp.doc(description=STATE_MACHINE)
def aprovar(rid):
    """Aprovar: `pendente` → `aprovada`."""
    return decisions.aprovar(rid, current_user)


@blp.route(f"{R}/recomendacoes/<uuid:rid>/recusar", methods=["POST"])
@stock_auth_required()
@blp.arguments(RecusaRequest, required=False)
@blp.response(200, RecomendacaoOut)
@blp.alt_response(403, description="Papel sem permissão (planejador ou admin)")
@blp.alt_response(404, description="Não encontrada")
@blp.alt_response(409, description="O estado atual não permite recusar")
@blp.doc(
    description="O corpo é opcional (extensão à especificação): `motivo` diz por que a recomendação é "
    "recusada e fica no histórico; um `motivo` desconhecido, ou `outro` sem `motivoTexto`, responde 422. "
    "O aprendizado não pesa contra a rota as recusas por `estoque_errado`.\n\n" + STATE_MACHINE
)
def recusar(body, rid):
    """Recusar: `pendente` ou `aprovada` → `recusada`, com um motivo opcional."""
    return decisions.recusar(rid, current_user, body.get("motivo"), body.get("motivo_texto"))


@blp.route(f"{R}/recomendacoes/<uuid:rid>/executar", methods=["POST"])
@stock_auth_required()
@blp.response(200, RecomendacaoOut)
@blp.alt_response(403, description="Papel sem permissão")
@blp.alt_response(404, description="Não encontrada (ou fora da loja do gerente)")
@blp.alt_response(409, description="Só uma aprovada e não vetada pode ser executada")
@blp.doc(
    description="Registra que a transferência foi despachada; o estoque muda com a próxima carga de "
    "estoque do varejista.\n\n" + STATE_MACHINE
)
def executar(rid):
    """Executar: `aprovada` → `executada`. O `gerente_loja` executa as da sua loja."""
    return decisions.executar(rid, current_user)


TRANSIT = (
    "Em trânsito: aprovada ou executada, não vetada e ainda não recebida. A próxima geração conta "
    "essas unidades como saídas da origem e já na loja de destino. Fecha com o recebimento, ou com "
    "uma carga de estoque que nomeie a loja de destino e cuja quantidade da célula supere a "
    "armazenada antes da carga em pelo menos a quantidade da transferência (as mais antigas "
    "primeiro; recebidas por inteiro)."
)


@blp.route(f"{R}/recomendacoes/<uuid:rid>/receber", methods=["POST"])
@stock_auth_required()
@blp.arguments(RecebimentoRequest)
@blp.response(200, RecomendacaoOut)
@blp.alt_response(403, description="Papel sem permissão, ou gerente de outra loja que não a de destino")
@blp.alt_response(404, description="Não encontrada (ou fora da loja do gerente)")
@blp.alt_response(409, description="Não executada, ou já recebida")
@blp.doc(description=TRANSIT)
def receber(body, rid):
    """Confirmar o recebimento de uma executada, com a quantidade que chegou (0 a `quantidade`).

    O `gerente_loja` da loja de destino, um `planejador` ou um `admin`. Fica no histórico de
    ações como `receber`, com quem e quando.
    """
    return transit.receber(rid, current_user, body["quantidade_recebida"])


@blp.route(f"{R}/recomendacoes/<uuid:rid>/problemas", methods=["POST"])
@stock_auth_required()
@blp.arguments(ProblemaRequest)
@blp.response(201, ProblemaOut)
@blp.alt_response(403, description="Papel sem permissão (visualizador)")
@blp.alt_response(404, description="Não encontrada (ou fora da loja do gerente)")
@blp.alt_response(409, description="Nenhum projeto de operação no Tracker (`projetoOperacoes` das regras)")
def relatar_problema(body, rid):
    """Relatar um problema numa transferência: abre uma tarefa no projeto de operação do Tracker,
    sob a subtarefa do destino, com os números da transferência, atribuída a quem a aprovou (se
    for membro da organização; senão, avisado pelas notificações do remanejamento). Um
    recebimento com menos unidades que o enviado abre uma sozinho."""
    return problems.report(rid, current_user, body["tipo"], body.get("texto"))


@blp.route(f"{R}/recomendacoes/<uuid:rid>/problemas", methods=["GET"])
@stock_auth_required()
@blp.response(200, ProblemaList)
@blp.alt_response(404, description="Não encontrada (ou fora da loja do gerente)")
def listar_problemas(rid):
    """Os problemas relatados nesta transferência e suas tarefas no Tracker."""
    return {"problemas": problems.listed(rid, current_user)}


@blp.route("/recomendacoes/<uuid:rid>/receber", methods=["POST"])
@stock_auth_required()
@blp.arguments(RecebimentoRequest)
@blp.response(200, RecomendacaoOut)
@blp.alt_response(403, description="Papel sem permissão, ou gerente de outra loja que não a de destino")
@blp.alt_response(404, description="Não encontrada (ou fora da loja do gerente)")
@blp.alt_response(409, description="Não executada, ou já recebida")
@blp.doc(description=TRANSIT)
def receber_curto(body, rid):
    """O mesmo que `/remanejamento/recomendacoes/{rid}/receber`."""
    return transit.receber(rid, current_user, body["quantidade_recebida"])


@blp.route("/lojas/<uuid:loja_id>/em-transito", methods=["GET"])
@stock_auth_required()
@blp.response(200, TransitoLoja)
@blp.alt_response(404, description="Loja não encontrada (ou não é a loja do gerente)")
@blp.doc(description=TRANSIT)
def em_transito(loja_id):
    """Transferências em trânsito que chegam à loja ou saem dela, com a idade em dias.

    Primeiro as que chegam, depois as que saem, cada grupo da mais antiga para a mais nova.
    `atrasada` quando a idade passa do `diasAlerta` da transferência: o prazo que 9 em 10 dos
    recebimentos da rota cumpriram (182 dias, 3 recebimentos ao menos), ou, sem esse histórico ou
    só aprovada, o `diasAlerta` da lista (configuração `TRANSIT_ALERT_DAYS`).
    """
    return transit.em_transito(loja_id, current_user)


@blp.route(f"{R}/lotes", methods=["GET"])
@stock_auth_required()
@blp.response(200, LoteOut(many=True))
def list_lotes():
    """Lotes, da semana mais recente para a mais antiga, sem as recomendações.

    Um lote por semana ISO. `status` é `aberto` enquanto houver recomendação ativa `pendente`;
    `novo` marca o lote mais recente até 7 dias após sua criação.
    """
    return batches.list_lotes()


@blp.route(f"{R}/lotes/<uuid:lid>", methods=["GET"])
@stock_auth_required()
@blp.response(200, LoteOut)
@blp.alt_response(404, description="Lote não encontrado")
def get_lote(lid):
    """Um lote com todas as suas recomendações visíveis ao usuário, na ordem da lista.

    O corpo é enviado em partes (`Transfer-Encoding: chunked`, sem `Content-Length`) enquanto as
    recomendações são lidas: um lote de centenas de milhares começa a chegar de imediato e a
    memória do servidor não cresce com ele. Lote inexistente e falta de acesso respondem antes do
    primeiro byte; as recomendações são lidas logo depois do cabeçalho (`status`, `novo`), numa
    leitura própria. Para páginas, `/lotes/{lid}/recomendacoes?limite=`.

    Cada recomendação tem os mesmos campos e valores de `/lotes/{lid}/recomendacoes`; no
    PostgreSQL o JSON de cada uma é escrito pelo banco (mesmo significado, não necessariamente os
    mesmos bytes: um número como `1e-05` pode vir como `1e-05` ou `1e-5`).
    """
    detail = batches.lote_detail(lid, current_user, RECOMENDACAO_SQL)
    if detail.recomendacoes is None:
        chunks = detail.recomendacoes_json
    else:
        chunks = (RECOMENDACAO.dump_many(rows) for rows in detail.recomendacoes)
    return json_object_stream(LOTE_CABECALHO.dump(detail.lote), "recomendacoes", chunks)


@blp.route(f"{R}/lotes/<uuid:lid>/recomendacoes", methods=["GET"])
@stock_auth_required()
@blp.arguments(AtivasQuery, location="query")
@blp.response(200, RecomendacaoOut(many=True))
@blp.alt_response(404, description="Lote não encontrado")
def lote_recomendacoes(query, lid):
    """Recomendações do lote; `ativas=true` omite as vetadas e as recusadas.

    Mesma ordem da lista geral. `limite`/`offset` paginam (um lote pode ter centenas de milhares).
    """
    rows = recommendations.lote_recomendacoes(
        lid, current_user, ativas=query["ativas"], limite=query.get("limite"), offset=query["offset"]
    )
    return json_response(RECOMENDACAO.dump_many(rows))


@blp.route(f"{R}/lotes/<uuid:lid>/fluxo", methods=["GET"])
@stock_auth_required()
@blp.response(200, NodoFluxo(many=True))
@blp.alt_response(404, description="Lote não encontrado")
def fluxo(lid):
    """Fluxo por nó das recomendações ativas do lote: CDs primeiro, depois lojas, por nome.

    Só aparecem nós que enviam ou recebem algo.
    """
    return batches.fluxo(lid, current_user)


@blp.route(f"{R}/lotes/<uuid:lid>/totais", methods=["GET"])
@stock_auth_required()
@blp.response(200, TotaisLote)
@blp.alt_response(404, description="Lote não encontrado")
def totais(lid):
    """Totais das recomendações ativas do lote (não vetadas, não recusadas)."""
    return json_response(TOTAIS.dump(batches.totais(lid, current_user)))


@blp.route(f"{R}/lotes/<uuid:lid>/recomendacoes/<uuid:rid>/vetar", methods=["POST"])
@stock_auth_required()
@blp.arguments(VetoRequest)
@blp.response(200, RecomendacaoOut)
@blp.alt_response(403, description="Papel sem permissão (planejador ou admin)")
@blp.alt_response(404, description="Lote ou recomendação não encontrados")
@blp.alt_response(409, description="Só `pendente` ou `aprovada` podem ser vetadas")
def vetar(body, lid, rid):
    """Vetar com um motivo: `vetado=true`, `motivoVeto`. Vetar de novo responde 200 sem mudança."""
    return decisions.vetar(lid, rid, current_user, body["motivo"])


@blp.route(f"{R}/lotes/<uuid:lid>/recomendacoes/<uuid:rid>/restaurar", methods=["POST"])
@stock_auth_required()
@blp.response(200, RecomendacaoOut)
@blp.alt_response(403, description="Papel sem permissão (planejador ou admin)")
@blp.alt_response(404, description="Lote ou recomendação não encontrados")
def restaurar(lid, rid):
    """Restaurar: limpa `vetado` e `motivoVeto`. Numa não vetada responde 200 sem mudança."""
    return decisions.restaurar(lid, rid, current_user)


@blp.route(f"{R}/regras", methods=["GET"])
@stock_auth_required()
@blp.response(200, RegrasPayload)
def get_regras():
    """Regras de transferência em vigor."""
    return rules.get_rules()


@blp.route(f"{R}/regras", methods=["PUT"])
@stock_auth_required("admin")
@blp.arguments(RegrasPayload)
@blp.response(200, RegrasPayload)
@blp.alt_response(403, description="Só admin altera as regras")
def put_regras(body):
    """Substituir as regras (campos ausentes voltam ao padrão). Só `admin`.

    Pesos inteiros 0–100 (pelo menos um maior que zero); `1 <= qtdMinima <= qtdMaxima`;
    `periodo` em "7", "14", "30", "60", "90"; `lojasBloqueadas` são ids de lojas existentes.
    As regras entre campos e as lojas inexistentes respondem 422, todas de uma vez.
    Valem a partir do próximo lote gerado.
    """
    return rules.update_rules(body, current_user)


@blp.route(f"{R}/config/cadence", methods=["GET"])
@stock_auth_required()
@blp.response(200, CadencePayload)
def get_cadence():
    """Cadência de geração de lotes e o dia em que o próximo é devido.

    `diaria` atualiza o lote da semana todo dia; `semanal` gera um por semana ISO;
    `quinzenal` a cada duas semanas; `mensal` uma vez por mês. `flask batches run-due` obedece.
    """
    return rules.get_cadence()


@blp.route(f"{R}/config/cadence", methods=["PUT"])
@stock_auth_required("admin")
@blp.arguments(CadencePayload)
@blp.response(200, CadencePayload)
@blp.alt_response(403, description="Só admin altera a cadência")
def put_cadence(body):
    """Alterar a cadência (`diaria`, `semanal`, `quinzenal`, `mensal`). Só `admin`."""
    return rules.set_cadence(body["cadence"], current_user)


@blp.route(f"{R}/metricas/kpis-dashboard", methods=["GET"])
@stock_auth_required()
@blp.response(200, KpisDashboard)
def kpis_dashboard():
    """Indicadores do painel: decisões em todos os lotes, o lote atual e os tamanhos em risco de ruptura."""
    return metrics.kpis_dashboard()


@blp.route(f"{R}/metricas/validacao", methods=["GET"])
@stock_auth_required()
@blp.response(200, Validacao)
def validacao():
    """Como as transferências executadas venderam no destino desde a execução."""
    return metrics.validacao()


@blp.route(f"{R}/metricas/efetividade-semanal", methods=["GET"])
@stock_auth_required()
@blp.response(200, EfetividadeSemanal)
def efetividade_semanal():
    """Por semana ISO (um lote cada): geradas, aprovadas, executadas, recusadas, vetadas,
    unidades movidas e rupturas evitadas."""
    return metrics.efetividade_semanal()


@blp.route(f"{R}/metricas/aprendizado", methods=["GET"])
@stock_auth_required()
@blp.response(200, Aprendizado)
def aprendizado():
    """Aceitação por rota, marca e categoria e o fator que ela aplica ao score do próximo lote."""
    return metrics.aprendizado()


@blp.route(f"{R}/metricas/resultado", methods=["GET"])
@stock_auth_required()
@blp.arguments(ResultadoQuery, location="query")
@blp.response(200, Resultado)
@blp.alt_response(404, description="`loteId` não existe")
def resultado(query):
    """Venda extra esperada (ESI) contra a realizada (ASI) das transferências executadas, por lote,
    rota, marca ou categoria (extensão à especificação).

    **ESI** de uma transferência: as unidades a mais que o motor previu vender no destino em 14 dias
    (`vendaExtraEsperada` gravada na geração), proporcional às unidades recebidas.
    **ASI** em 14 e 28 dias: unidades da célula (produto, cor, tamanho) vendidas no destino nos 14 (28)
    dias a partir do dia do recebimento (da execução enquanto não recebida), além do estoque próprio
    do destino: `clamp(vendas − estoque próprio restante no início − unidades de transferências
    anteriores do mesmo lote para a célula, 0, unidades movidas)`, o "vendido do movimentado". O
    estoque próprio vende primeiro, como na conta do motor, então o ASI não credita à transferência o
    que o destino venderia de qualquer forma.

    Uma janela ainda aberta (algum dia dela não é anterior a hoje) fica em `parciais`, com os dias
    decorridos, e nunca entra nas somas completas; `razao = ASI/ESI` e `pctVendido = ASI/unidades`
    usam só janelas completas (a razão, só as transferências com previsão). `agrupar` fora de
    `lote`, `rota`, `marca`, `categoria` responde 422. O `gerente_loja` vê só as transferências que
    saem ou chegam na sua loja; os demais papéis veem todas.
    """
    return outcome.resultado(current_user, query["agrupar"], query.get("lote_id"), query["limite"])


@blp.route(f"{R}/historico", methods=["GET"])
@stock_auth_required()
@blp.arguments(HistoricoQuery, location="query")
@blp.response(200, HistoricoItem(many=True))
def historico(query):
    """Recomendações decididas (aprovadas, executadas, recusadas ou vetadas), decisão mais recente primeiro.

    `usuario` é quem tomou a última decisão; `resultado` diz o que aconteceu depois (para executadas,
    unidades vendidas no destino desde a execução), com os números em `resultadoDetalhe`.
    O `gerente_loja` vê só as da sua loja.
    """
    return metrics.historico(current_user, query.get("status"), query["limite"])


@blp.route("/produtos/<uuid:pid>/grade", methods=["GET"])
@stock_auth_required()
@blp.arguments(GradeQuery, location="query")
@blp.response(200, GradeMatrix)
@blp.alt_response(404, description="Produto ou lote não encontrado")
def produto_grade(query, pid):
    """Grade de tamanhos do produto em todas as lojas e CDs (CDs primeiro, depois por nome).

    `delta` é o movimento líquido das recomendações ativas do lote (o mais recente sem `loteId`),
    `final = atual + delta`, `ruptura` quando `final <= 0`.
    """
    return json_response(GRADE.dump(grade.grade(pid, query.get("lote_id"))))
