"""The remanejamento domain: catalogue, rules, import, demo network, engine, batches."""
