"""Wire shapes of the remanejamento service (camelCase Portuguese)."""
