"""Red team: what `match` patterns and caught exceptions read past the attribute guard.

A class pattern reads the names in `__match_args__` and its keywords in C, and a dotted name in a pattern is
looked up in C: each is compiled to go through the guarded getattr (`sandbox/_runtime/matching.py`), so a pattern reads
exactly what `getattr` would hand out, or is refused with the guard's message. An `AttributeError` a lookup in
the standard library raised carries the looked-up object in `.obj` (the real `type` behind `typing.Type[int]`),
which the guard does not hand out. Every case states its exact outcome (see `redteam_kit`), in both modes.
"""

from __future__ import annotations

from redteam_kit import Value, case, guard, names_are_unique, policy, raised, runs

_FRAME_WALK = """
    def gen():
        match me:
            case G(frame):
                pass
        found = None
        while frame is not None:
            match frame:
                case F(back, glb):
                    if glb.get("__name__", "").startswith("sandbox"):
                        found = glb
                        break
                    frame = back
        yield found
    me = gen()
"""

CASES = [
    case(
        "match_args_of_an_own_abc_registered_for_generators",
        (
            """
            import collections, collections.abc
            Gi = collections.namedtuple("Gi", ["gi_frame"])
            Fr = collections.namedtuple("Fr", ["f_back", "f_globals"])
            class G(Gi, collections.abc.Hashable):
                pass
            class F(Fr, collections.abc.Hashable):
                pass
            """,
            _FRAME_WALK,
            """
            G.register(type(me))
            glb = next(me)
            return str(glb["__builtins__"]["__import__"]("os").getpid()) + "PW" + "NED"
            """,
        ),
        guard("`.register()` is not allowed in the sandbox: it changes the ABC's checks for the whole process"),
    ),
    case(
        "match_args_name_a_frame_attribute",
        """
        import collections
        class G(collections.namedtuple("Gi", ["gi_frame"])):
            pass
        match G(1):
            case G(frame):
                return frame
        """,
        guard("`.gi_frame` is not allowed: frames, code and the class hierarchy are hidden"),
    ),
    case(
        "match_keyword_send_drives_a_coroutine_by_hand",
        """
        import asyncio
        async def wait():
            await asyncio.sleep(1)
        c = wait()
        match c:
            case object(send=s):
                fut = s(None)
        loop = getattr(fut, "get_" + "loop")()
        return type(loop).__name__ + "PW" + "NED"
        """,
        guard("`.send()` is not allowed on a 'coroutine' in the sandbox: `await` it instead"),
    ),
    case(
        "match_keyword_reads_the_real_str_format",
        """
        def f():
            pass
        match "{0.__globals__[__builtins__][__import__]}":
            case object(format=fm):
                return fm(f) + "PW" + "NED"
        """,
        guard("`format` of a 'str' cannot be read by a class pattern in the sandbox"),
    ),
    case(
        "match_keyword_reads_a_shared_class_table",
        """
        import textwrap
        match textwrap.TextWrapper:
            case object(unicode_whitespace_trans=table):
                table[ord("e")] = ord(" ")
        return textwrap.fill("the free tree", 40)
        """,
        guard("`unicode_whitespace_trans` of a 'type' cannot be read by a class pattern in the sandbox"),
        then=("import textwrap\nreturn textwrap.fill('the free tree', 40)", "the free tree"),
    ),
    case(
        "match_dotted_value_names_a_private_attribute",
        """
        import re
        match 1:
            case re._compile:
                return "matched"
        """,
        guard("`._compile` is not allowed: names starting with `_` are private"),
    ),
    case(
        "match_dotted_class_of_a_module",
        """
        import collections.abc
        match {"a": 1}:
            case collections.abc.Sequence():
                return "sequence"
            case collections.abc.Mapping():
                return "mapping"
        """,
        Value("mapping"),
    ),
    case(
        "match_patterns_models_write",
        """
        import enum
        from dataclasses import dataclass
        class Color(enum.Enum):
            RED = 1
            BLUE = 2
        @dataclass
        class Point:
            x: int
            y: int
        def describe(v):
            match v:
                case Color.RED:
                    return "red"
                case {Color.BLUE.value: name}:
                    return f"blue {name}"
                case Point(0, y=y):
                    return f"y axis {y}"
                case Point(a, b) if a == b:
                    return f"diagonal {a}"
                case list(items) | tuple(items):
                    return f"seq {len(items)}"
                case str(s) | bool(s):
                    return f"self {s}"
                case 1 + 2j:
                    return "complex"
                case _:
                    return "other"
        values = [Color.RED, {2: "x"}, Point(0, 4), Point(3, 3), [1, 2], (1,), "hi", True, 1 + 2j, 5]
        return [describe(v) for v in values]
        """,
        Value(
            ["red", "blue x", "y axis 4", "diagonal 3", "seq 2", "seq 1", "self hi", "self True", "complex", "other"]
        ),
    ),
    case(
        "match_class_pattern_of_a_non_class",
        """
        x = 1
        match 1:
            case x.real():
                return 1
        """,
        raised("TypeError", "called match pattern must be a type"),
    ),
    case(
        "attributeerror_obj_is_the_real_type",
        """
        import typing
        try:
            typing.Type[int].nope
        except AttributeError as e:
            real_type = e.obj
        Meta = real_type("Meta", (real_type,), {"__instancecheck__": lambda cls, inst: True})
        return repr(Meta) + "PW" + "NED"
        """,
        guard("`.obj` of this AttributeError is not available in the sandbox; use `e.name` and `str(e)`"),
    ),
    case(
        "attributeerror_obj_is_the_real_bytes",
        """
        try:
            bytes.nope
        except AttributeError as e:
            real_bytes = getattr(e, "obj")
        return len(real_bytes(20_000_000))
        """,
        guard("`.obj` of this AttributeError is not available in the sandbox"),
    ),
    case(
        "attributeerror_obj_through_a_pattern_and_a_group",
        """
        try:
            bytes.nope
        except AttributeError as e:
            group = ExceptionGroup("g", [e])
        match group.exceptions[0]:
            case AttributeError(obj=o):
                return len(o(20_000_000))
        """,
        guard("`.obj` of this AttributeError is not available in the sandbox"),
    ),
    case(
        "exception_names_are_plain_strings",
        """
        out = []
        try:
            (1).nope
        except AttributeError as e:
            out.append(e.name)
        try:
            undefined_name
        except NameError as e:
            out.append(e.name)
        try:
            import nosuch
        except ImportError as e:
            out += [e.name, e.path]
        try:
            await raise_object_arg()
        except Exception as e:
            out.append([type(a).__name__ for a in e.args])
        return out
        """,
        Value(["nope", "undefined_name", None, None, ["str"]]),
    ),
    case(
        "exception_context_and_traceback",
        """
        try:
            try:
                1 / 0
            except ZeroDivisionError:
                raise ValueError("second")
        except ValueError as e:
            return getattr(e, "__context__")
        """,
        guard("`.__context__` is not allowed: dunder attributes are private in the sandbox"),
    ),
    case(
        "exception_traceback_attribute",
        "try:\n    1 / 0\nexcept ZeroDivisionError as e:\n    e.__traceback__",
        policy("`.__traceback__` is not allowed"),
    ),
]


test_patterns_and_exceptions_read_through_the_guard = runs(
    CASES, "Each technique is refused by the layer named in its outcome, or yields exactly the safe value."
)
test_case_names_are_unique = names_are_unique(CASES)
