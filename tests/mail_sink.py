"""A real SMTP server on loopback for the tests (aiosmtpd): ``smtp_sink`` points the app at it
and collects every message it accepts."""

from __future__ import annotations

import email
import socket
from email.policy import default

import pytest
from aiosmtpd.controller import Controller


class Sink:
    """Collects every message accepted over SMTP."""

    def __init__(self) -> None:
        self.messages: list[email.message.EmailMessage] = []
        self.recipients: list[list[str]] = []

    async def handle_DATA(self, _server, _session, envelope):
        self.recipients.append(list(envelope.rcpt_tos))
        self.messages.append(email.message_from_bytes(envelope.original_content, policy=default))
        return "250 OK"


@pytest.fixture
def smtp_sink(app, monkeypatch):
    sink = Sink()
    with socket.socket() as probe:  # a free port: the controller checks its own by connecting
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    controller = Controller(sink, hostname="127.0.0.1", port=port)
    controller.start()
    monkeypatch.setitem(app.config, "SMTP_HOST", "127.0.0.1")
    monkeypatch.setitem(app.config, "SMTP_PORT", port)
    monkeypatch.setitem(app.config, "SMTP_STARTTLS", False)
    yield sink, controller
    controller.stop()
