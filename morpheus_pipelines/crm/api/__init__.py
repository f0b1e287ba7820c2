"""``morpheus serve``: the lead-intake API (docs/leads.md)."""
