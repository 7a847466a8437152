"""Notification e-mails through a real SMTP conversation: a local sink (aiosmtpd) receives what
``flask tracker send-notifications`` sends, one message per person per run; a server that is down
is reported, not fatal."""

from __future__ import annotations

import re
import socket

from tests.tracker.collab_support import comment, team
from tests.tracker.support import make_issue


def _send(runner) -> tuple[int, ...]:
    result = runner.invoke(args=["tracker", "send-notifications"])
    assert result.exit_code == 0, result.output
    # (messages, sent, skipped, retried, failed)
    return tuple(int(n) for n in re.findall(r"\d+", result.output))


def test_a_mention_and_an_assignment_reach_the_smtp_server_once(client, runner, smtp_sink):
    sink, _controller = smtp_sink
    owner, (member, other), project = team(client, "member", "member")
    sink.messages.clear()  # the invitations
    sink.recipients.clear()
    issue = make_issue(client, owner, project, title="Vitrine de verão", assignee_id=member.user_id)
    comment(client, owner, project, issue["key"], f"@{other.email} pode revisar?", who=owner)
    assert sink.messages == []  # nothing leaves inside a request

    counts = _send(runner)
    assert counts[0] == len(sink.messages) >= 1
    by_address = {message["To"]: message for message in sink.messages}
    assert member.email in by_address
    assert all(
        recipients == [message["To"]]
        for recipients, message in zip(sink.recipients, sink.messages, strict=True)
    )
    # Assigned, then a comment on the issue: one message for the burst.
    assert by_address[member.email]["Subject"] == "Giro: 2 novidades nas suas issues"
    assert f"/issues/{issue['key']}" in by_address[member.email].get_content()
    mentioned = by_address[other.email]
    assert mentioned["Subject"] == f"Giro: {issue['key']} Vitrine de verão"
    assert "pode revisar?" in mentioned.get_content() or "mencionou" in mentioned.get_content()
    assert _send(runner)[:2] == (0, 0)  # each notification is sent once
    assert len(sink.messages) == counts[0]


def test_a_server_that_is_down_is_reported_and_nothing_is_lost(app, client, runner, monkeypatch):
    owner, (member,), project = team(client, "member")
    make_issue(client, owner, project, title="Etiquetas novas", assignee_id=member.user_id)
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setitem(app.config, "SMTP_HOST", "127.0.0.1")
    monkeypatch.setitem(app.config, "SMTP_PORT", port)
    monkeypatch.setitem(app.config, "SMTP_STARTTLS", False)
    messages, sent, _skipped, retried, failed = _send(runner)
    assert (messages, sent) == (0, 0) and retried == 1 and failed == 0  # kept for a later run
