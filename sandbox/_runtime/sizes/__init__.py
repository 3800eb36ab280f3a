"""Size checks: no single operation of the model's code builds a value larger than `Limits.max_size`.

`operations` owns `SizeGuards` (operators, f-string widths, the padding and joining methods); `text` the
size-checked `str` and `bytes` methods and the `%` template reader; `growth` the methods that build from their
arguments (`extend`, `fromkeys`, `strftime`); `counts` the functions told how many items to make (`random`,
`heapq`); `transforms` the functions that turn text into more text (`repr`, `json.dumps`, `normalize`).
"""
