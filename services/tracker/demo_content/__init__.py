"""What the tracker's demo writes: its three projects, their labels, about forty issues in
Portuguese with the steps each goes through (comments, moves, new assignees), and the
relations between them. ``services.tracker.demo`` writes them through the tracker's services.
Each project's issues are a module of their own.
"""

from __future__ import annotations

from services.tracker.demo_content import app, cd, web
from services.tracker.demo_content.issue import DemoIssue

__all__ = ["ISSUES", "LABELS", "PROJECTS", "RELATIONS", "DemoIssue"]

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

ISSUES: tuple[DemoIssue, ...] = web.ISSUES + app.ISSUES + cd.ISSUES
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
