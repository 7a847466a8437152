"""Wire shapes of the tracker (snake_case); the source of its OpenAPI document."""
