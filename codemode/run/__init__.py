"""One run of the model's code against a catalog, host side: what `CodeMode.execute` builds on.

`_runtime` (what `tools.<name>(...)`, `tools.search` and `tools.describe` do), `_helpers` (the other names on
`tools`), `_preflight` (calls certain to fail, found before any tool runs),
`_display` and `_text` (what the model reads of the run), `_observe` (events and tracing while it runs) and
`_persistence` (variables across the runs of a conversation).
"""
