"""The usage ledger: every model call recorded, budgets checked before calls, reports."""
