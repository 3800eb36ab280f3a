"""Tool schemas: what a JSON Schema means, and what the model reads of it.

`_jsonschema` (what a schema means: `$ref`, `allOf`, nullability), `_validator` (the draft a schema is read under,
and its validator), `_typeexpr` and `_defkeys` (schemas as Python type expressions and TypedDicts), `stubs` (a
tool as the Python stub the model reads), `_errors` and `_argument_errors` (a validation error, and a call's wrong
arguments, as the model can act on them).
"""
