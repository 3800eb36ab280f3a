"""What runs beside the model's code: the runner, the guards the policy's rewritten code calls, and its world.

Inside a worker process, or inline in the host's own process for `isolation="inline"` (the root's
`sandbox.sandbox` calls `runner.run_code` directly; nothing under `sandbox._host` imports this package).
`runner` runs one compiled piece of code and makes its `RunResult`; `namespace` puts its globals together from
`builtins`, the `guards` and the host-function proxies (`calls`); the budget is `ticks` (operations), `ticking`
(lazy iterators) and `deadlines` (the inline wall clock); the classes the code sees and makes are `classes`,
`dunders`, `supers` and `comparing`. The guards' building blocks never import the guards. Two families have
packages of their own: `sizes` (no single operation builds past `max_size`) and `stdlib` (the standard-library
modules the code may import, as facades).
"""
