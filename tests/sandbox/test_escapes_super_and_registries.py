"""Red team: `super` objects, inherited dunders, ABC registries, caches and forged stop signals.

`super(C, x).name` skips methods, so it works only past the code's own classes and hands out what the guard hands
out for `x.name` (`sandbox/_runtime/supers.py`); an own class's inherited dunder (`U.__init__` of a `uuid.UUID`
subclass) works on the code's own instances only; `.register()` is refused on every ABC; `datetime.strptime` is
called with plain strings; only the sandbox's exact stop signal is believed. The `then` run proves nothing was
left behind for the next run (and, inline, the host). Every case states its exact outcome, in both modes.
"""

from __future__ import annotations

from redteam_kit import Value, case, guard, limit, names_are_unique, raised, runs

_SUPER_OWN = "`super(...)` works in the sandbox only inside the code's own classes"
_OWN_INSTANCES = "works only on an instance of the code's own class"

CASES = [
    case(
        "super_real_str_format_walks_to_the_environment",
        """
        class S(str):
            pass
        return super(S, S("{0.__func__.__globals__[inspect].os.environ}")).format(hasattr) + "PW" + "NED"
        """,
        guard("`.__func__` is not allowed: dunder attributes are private in the sandbox"),
    ),
    case(
        "super_real_str_ljust_is_size_checked",
        """
        class S(str):
            pass
        return len(super(S, S("x")).ljust(20_000_000))
        """,
        limit("memory", "this would create a string of length of about 20,000,000", "MemoryError"),
    ),
    case(
        "super_skips_the_timeout_facade",
        """
        import asyncio
        class Lying:
            def __lt__(self, other):
                return False
            def __gt__(self, other):
                return True
            def __le__(self, other):
                return True
            def __ge__(self, other):
                return False
            def __sub__(self, other):
                return 0.0
        W = Lying()
        t = asyncio.timeout(100)
        await super(type(t), t).__aenter__()
        super(type(t), t).reschedule(W)
        return "installed"
        """,
        guard(_SUPER_OWN),
        then=("import asyncio\nawait asyncio.sleep(0.01)\nreturn 'later run ok'", "later run ok"),
    ),
    case(
        "super_skips_the_chainmap_facade",
        """
        import collections, functools, typing
        class Evil:
            def __hash__(self):
                return hash(complex)
            def __eq__(self, other):
                return True
        cm = collections.ChainMap(typing.Optional)
        return repr(super(collections.ChainMap, cm).__getitem__(Evil()))
        """,
        guard(_SUPER_OWN),
        then=("import typing\nreturn repr(typing.Optional[complex])", "typing.Optional[complex]"),
    ),
    case(
        "super_without_an_object",
        "class S(str):\n    pass\nreturn super(S).upper",
        guard("`super(C)` without an object is not available in the sandbox"),
    ),
    case(
        "super_in_the_codes_own_classes",
        """
        class Base(dict):
            def __init__(self, **kw):
                super().__init__(**kw)
                self.made = True
            def get(self, key, default=None):
                return super().get(key, default)
        class Shout(str):
            def upper(self):
                return super().upper() + "!"
            def fill(self, n):
                return super().ljust(n, ".")
        class Child(Base):
            def get(self, key, default=None):
                return ["child", super().get(key, default)]
        c = Child(a=1)
        return [c.made, c.get("a"), Shout("hi").upper(), Shout("x").fill(3), str(super(Child, c).get("b", 2))]
        """,
        Value([True, ["child", 1], "HI!", "x..", "2"]),
    ),
    case(
        "inherited_init_reinitialises_shared_constants",
        """
        import uuid, calendar
        class U(uuid.UUID):
            pass
        U.__init__(uuid.NAMESPACE_DNS, "00000000-0000-0000-0000-000000000000")
        return str(uuid.NAMESPACE_DNS)
        """,
        guard("`U.__init__(obj, ...)` " + _OWN_INSTANCES),
        then=("import uuid\nreturn str(uuid.NAMESPACE_DNS)", "6ba7b810-9dad-11d1-80b4-00c04fd430c8"),
    ),
    case(
        "inherited_init_of_a_month_name_list",
        """
        import calendar
        class M(type(calendar.month_name)):
            pass
        M.__init__(calendar.month_name, "%b")
        return calendar.month_name[1]
        """,
        guard("`M.__init__(obj, ...)` " + _OWN_INSTANCES),
        then=("import calendar\nreturn calendar.month_name[1]", "January"),
    ),
    case(
        "inherited_init_through_super_of_a_class",
        """
        import uuid
        class U(uuid.UUID):
            pass
        super(U, U).__init__(uuid.NAMESPACE_DNS, "00000000-0000-0000-0000-000000000000")
        return str(uuid.NAMESPACE_DNS)
        """,
        guard("`U.__init__(obj, ...)` " + _OWN_INSTANCES),
    ),
    case(
        "inherited_init_on_the_codes_own_instance",
        """
        import uuid
        class U(uuid.UUID):
            def again(self):
                U.__init__(self, "00000000-0000-0000-0000-000000000001")
                return str(self)
        class E(ValueError):
            def __init__(self, msg):
                Exception.__init__(self, msg)
        return [U("6ba7b810-9dad-11d1-80b4-00c04fd430c8").again(), str(E("boom"))]
        """,
        Value(["00000000-0000-0000-0000-000000000001", "boom"]),
    ),
    case(
        "register_on_an_own_abc_poisons_mapping",
        """
        import collections.abc
        class M(collections.abc.Mapping):
            pass
        M.register(int)
        return isinstance(1, collections.abc.Mapping)
        """,
        guard("`.register()` is not allowed in the sandbox: it changes the ABC's checks for the whole process"),
        then=("import collections.abc\nreturn isinstance(7, collections.abc.Mapping)", False),
    ),
    case(
        "strptime_format_with_a_lying_hash",
        """
        import datetime, functools
        class Evil(str):
            def __hash__(self):
                return hash("%Y-%m-%d")
            def __eq__(self, other):
                return True
        return str(datetime.datetime.strptime("2024-31-12", Evil("%Y-%d-%m")).date())
        """,
        Value("2024-12-31"),
        then=('import datetime\nreturn str(datetime.datetime.strptime("2024-01-02", "%Y-%m-%d").date())', "2024-01-02"),
    ),
    *(
        case(
            f"forged_stop_signal_subclass_reports_{claim}",
            f"""
            import asyncio
            async def leave():
                exit(3)
            S = type((await asyncio.gather(leave(), return_exceptions=True))[0])
            class F(S):
                _sealed = True
                kind = "{kind}"
                message = "{message}"
                def __init__(self):
                    pass
            raise F()
            """,
            raised("F", "F"),
        )
        for claim, kind, message in (
            ("a_crash", "crashed", "the worker process died (it ran out of memory?)"),
            ("no_kind", "not-a-kind", "made up"),
        )
    ),
]


test_super_inheritance_and_shared_state = runs(
    CASES, "Each technique is refused by the layer named in its outcome, or yields exactly the safe value."
)
test_case_names_are_unique = names_are_unique(CASES)
