"""The words of remanejamento notifications (pt-BR): one e-mail or push message for all that one
person is told in one run, and the weekly summary's e-mail (plain text and an HTML table that
reads well in common mail clients: no script, no external image, inline styles only)."""

from __future__ import annotations

from collections import defaultdict
from html import escape

from flask import current_app

from models.auth import User

SHOWN = 15  # lines per section; the rest is counted and linked

TITLES = {
    "lote_gerado": "Lote pronto",
    "separar": "Separar e enviar",
    "chegando": "A caminho da sua loja",
    "receber": "Enviado: receber na loja",
    "atrasada": "Em trânsito há tempo demais",
    "estoque_errado": "Recusada por estoque errado na origem",
    "problema": "Problema relatado numa transferência que você aprovou",
}


def _url(path: str) -> str:
    return f"{current_app.config['PUBLIC_URL']}{path}"


def _units(n: int) -> str:
    return f"{n:,}".replace(",", ".") + (" unidade" if n == 1 else " unidades")


def _transfers(n: int) -> str:
    return f"{n:,}".replace(",", ".") + (" transferência" if n == 1 else " transferências")


def _line(p: dict) -> str:
    return f"{p['quantidade']} × {p['produto']} {p['cor']} {p['tamanho']}: {p['origem']} → {p['destino']} (lote {p['semana']})"


def _link(kind: str, p: dict) -> str:
    """The page that acts on it: the problem's issue, the batch, or the store's receipts."""
    if "url" in p:
        return p["url"]
    if kind in ("receber", "atrasada"):
        return _url(f"/lojas/{p['loja_id']}/recebimentos")
    return _url(f"/lotes/{p['lote_id']}")


def sections(rows) -> list[tuple[str, str, list[str], str]]:
    """(kind, heading, lines, link) per kind, in a fixed order."""
    by_kind: dict[str, list[dict]] = defaultdict(list)
    for row in rows:
        by_kind[row.kind].append(row.payload)
    out = []
    for kind in TITLES:
        items = by_kind.get(kind)
        if not items:
            continue
        if kind == "lote_gerado":
            for p in items:
                heading = f"Lote {p['semana']} pronto"
                lines = [
                    f"{_transfers(p['recomendacoes'])}, {_units(p['unidades'])}",
                    f"{p['alta']} de prioridade alta; {p['destinos']} lojas recebem",
                ]
                out.append((kind, heading, lines, _link(kind, p)))
            continue
        units = sum(p["quantidade"] for p in items)
        heading = f"{TITLES[kind]}: {_transfers(len(items))}, {_units(units)}"
        if kind == "atrasada":
            # each route has its own alert (docs/batches.md): one figure only where they agree
            days = {p["dias"] for p in items}
            heading += f" (mais de {days.pop()} dias)" if len(days) == 1 else " (além do prazo de cada rota)"
        lines = [_line(p) for p in items[:SHOWN]]
        if len(items) > SHOWN:
            lines.append(f"e mais {len(items) - SHOWN}")
        out.append((kind, heading, lines, _link(kind, items[0])))
    return out


def email_message(user: User, rows, unsubscribe: str) -> tuple[str, str, str | None]:
    """Subject, plain text and (for the weekly summary) HTML of one person's message."""
    if rows[0].kind == "resumo_semanal":
        return summary_message(user, rows[0].payload, unsubscribe)
    parts = sections(rows)
    subject = "Giro: " + (
        "; ".join(heading for _k, heading, _l, _u in parts)
        if len(parts) <= 2
        else f"{len(rows)} avisos do remanejamento"
    )
    text = [f"Olá, {user.name}.", ""]
    for _kind, heading, lines, link in parts:
        text += [heading, *[f"  {line}" for line in lines], f"  {link}", ""]
    text += [
        "Para não receber mais estes avisos por e-mail, abra:",
        unsubscribe,
        f"(ou desligue “Avisos por e-mail” no seu perfil: {_url('/perfil')})",
    ]
    return subject[:200], "\n".join(text) + "\n", None


def push_message(user: User, rows) -> dict:
    """The notification a browser shows: a title, one line, where a click goes."""
    parts = sections(rows)
    if len(parts) == 1:
        _kind, heading, lines, link = parts[0]
        return {"title": heading, "body": lines[0] if lines else "", "url": link}
    return {
        "title": f"Giro: {len(rows)} avisos do remanejamento",
        "body": "; ".join(heading for _k, heading, _l, _u in parts)[:300],
        "url": parts[0][3],
    }


# --------------------------------------------------------------------------- weekly summary


def _bar(value: float, top: float, color: str) -> str:
    width = 0 if top <= 0 else max(1, round(160 * value / top))
    return (
        f'<table role="presentation" cellpadding="0" cellspacing="0"><tr>'
        f'<td style="background:{color};width:{width}px;height:12px;font-size:0;line-height:0">&nbsp;</td>'
        f"</tr></table>"
    )


def _shown(value) -> str:
    if value is None:
        return "—"
    text = f"{value:,.1f}" if isinstance(value, float) else f"{value:,}"
    return text.replace(",", "X").replace(".", ",").replace("X", ".")


def summary_message(user: User, p: dict, unsubscribe: str) -> tuple[str, str, str]:
    scope = p.get("escopo", "toda a rede")
    subject = f"Giro: resumo da semana {p['semana']} ({scope})"
    rows = [
        ("Vendas esperadas das transferências da semana passada (ESI)", p.get("esi")),
        ("Vendido do que foi movido, 14 dias (ASI)", p.get("asi")),
        ("Transferências no lote desta semana", p.get("recomendacoes")),
        ("Unidades no lote desta semana", p.get("unidades")),
        ("De prioridade alta", p.get("alta")),
        ("Em trânsito", p.get("em_transito")),
        ("Atrasadas em trânsito", p.get("atrasadas")),
    ]
    text = [f"Olá, {user.name}.", "", f"Resumo da semana {p['semana']} ({scope}):", ""]
    text += [f"- {label}: {_shown(value)}" for label, value in rows]
    text += [
        "",
        f"Lote desta semana: {_url(p['link'])}" if p.get("link") else "",
        "",
        "Para não receber mais este resumo:",
        unsubscribe,
    ]
    top = max(float(p.get("esi") or 0), float(p.get("asi") or 0))
    html_rows = "".join(
        f'<tr><td style="padding:4px 12px 4px 0">{escape(label)}</td>'
        f'<td style="padding:4px 0;text-align:right;font-weight:bold">{escape(_shown(value))}</td></tr>'
        for label, value in rows
    )
    bars = (
        '<table role="presentation" cellpadding="2" cellspacing="0" style="margin:12px 0">'
        f'<tr><td style="padding-right:8px">Esperado</td><td>{_bar(float(p.get("esi") or 0), top, "#94a3b8")}</td></tr>'
        f'<tr><td style="padding-right:8px">Vendido</td><td>{_bar(float(p.get("asi") or 0), top, "#0f766e")}</td></tr>'
        "</table>"
    )
    link = (
        f'<p><a href="{escape(_url(p["link"]))}">Abrir o lote desta semana</a></p>' if p.get("link") else ""
    )
    html = (
        '<!doctype html><html lang="pt-BR"><body style="font-family:Arial,Helvetica,sans-serif;color:#1f2937">'
        f'<p>Olá, {escape(user.name)}.</p><h2 style="font-size:18px">Resumo da semana {escape(p["semana"])} ({escape(scope)})</h2>'
        f'<table role="presentation" cellpadding="0" cellspacing="0">{html_rows}</table>{bars}{link}'
        f'<p style="font-size:12px;color:#6b7280"><a href="{escape(unsubscribe)}">Não quero mais este resumo</a></p>'
        "</body></html>"
    )
    return subject, "\n".join(text) + "\n", html
