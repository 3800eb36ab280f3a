"""OS-level confinement as the worker processes put it up on themselves: warm-up, layers, the seccomp filter.

`warm` loads everything a run may need while the disk is still there; `apply` puts up each layer (descriptors,
`no_new_privs`, namespaces, an unprivileged uid, Landlock, seccomp) on the template once and on each run process;
`seccomp` builds the filters. What is asked for and what was got are plain values both sides share
(`sandbox._shared.confinement`); only the worker processes import this package.
"""
