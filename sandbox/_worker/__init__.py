"""The sandbox's side of the process boundary: the template process and the run processes it forks.

`template` is the warm, confined process that imports everything a run needs and forks one process per run;
`main` is what each run process serves on its pipes (one run, through `sandbox._runtime.runner`); `probe` is the
template behind `python -m sandbox.probe`; `confine` puts up the OS-level layers. Nothing here runs in the host.
"""
