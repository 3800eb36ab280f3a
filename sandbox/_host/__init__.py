"""The host's side of the process boundary: the template and run processes' handles, and one run's conversation.

`template` starts the template, keeps a few run processes forked ahead and restarts it when it dies; `process`
is one run's process: its run sent, its host calls answered, its end. `conversation` is what happens on the pipe
during one run, over `replies` (each frame checked or encoded) and `pipe` (bytes and frames); `dispatch` calls the
host functions (for both isolations), `distrust` checks whatever a worker sends, and `jsontext` is a host
function's result encoded once. Nothing here imports what runs beside the model's code (`sandbox._runtime`,
`sandbox._compiler`, `sandbox._worker`).
"""
