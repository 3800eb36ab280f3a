"""The host's side of the process boundary: its handle on the template process and on each run's process.

`template` starts the template, keeps a few run processes forked ahead and restarts it when it dies; `process`
is one run's process: its run sent, its host calls answered (`sandbox._conversation`), its end. Nothing here runs
beside the model's code.
"""
