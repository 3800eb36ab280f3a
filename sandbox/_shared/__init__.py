"""What both sides of the process boundary use: the frames on the pipe, a host call, size checks, plain values.

The host (`sandbox._host`) and the worker processes (`sandbox._worker`, running `sandbox._runtime`) each import these
modules and never each other: `frames` encodes what crosses the pipe, `hostcall` is one call as both sides see it,
`budgets` the size checks both make in the same words, `confinement` what the template is asked for and what a run
process got, `repeat` a repeatable run's seed and clock, `slots` the in-flight cap of calls. Nothing here imports
the host, the worker, the runtime or the compiler.
"""
