"""From the model's source text to a code object: the compile policy and what runs before it.

`compile` owns the whole step (size checks, Markdown fences dropped by `fence`, the top-level wrapper,
`asyncio.run(main())` rewritten by `asyncio_run`, a cache); `policy` is RestrictedPython's transformer extended for
the Python models write, with its `match` half in `patterns` and the names both halves share with the runtime
guards in `names`. Nothing here runs the code: the compiler never imports the runtime, the host or the worker.
"""
