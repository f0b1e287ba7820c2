"""tenants."""
