"""The tracker's domain: tenancy, issues, relations, plans and administration."""
