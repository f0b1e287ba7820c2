"""What the product writes for people investigating it: structured JSON events
(:mod:`.events`) and the redaction that keeps secrets and PII out of them (:mod:`.redaction`).
See docs/observability.md."""
