"""What the batch, decision, rule, metric and grade tests share.

Batches and recommendations written straight into the database come from
``tests.factories.make_lote``/``make_rec``, so the decision and metric tests do
not depend on the engine's choices.
"""

from __future__ import annotations

API = "/api/v1/remanejamento"
