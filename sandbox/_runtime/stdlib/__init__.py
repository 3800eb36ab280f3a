"""The standard-library modules the model's code may import, as facades: chosen names only, never the module.

`modules` is the import table and the facades of the plain modules; the rest are the facades with rules of their
own: `asyncio_facade` (tasks owned by the run) and `asyncio_sync` (locks, queues, timeouts taking plain numbers),
`decimal_context` (a run's own arithmetic context), `typehints` (`typing`), `regex` (`re`, `string.Template`),
`classgen` (`@dataclass`, `Enum(...)`), `copying` (`copy`) and `system` (`abc`, `sys`, `traceback`, `logging`).
"""
