"""The CRM data layer (docs/data-layer.md, "The CRM tables"): sellers, contacts, activities,
calls, sales reps, configs, follow-up tasks, email campaigns, target emails and phone numbers,
their repositories and the round-robin helpers. Ownership and lead intake stand on it."""
