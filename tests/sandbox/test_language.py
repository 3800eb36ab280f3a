"""Model-style scripts give the same printed output and value in the sandbox as in plain CPython.

Each script runs three times: in the inline sandbox, in a worker process, and in plain CPython wrapped as the
sandbox wraps it (the module body becomes an `async def`, so top-level `await` and `return` work, and a final
bare expression is the value). The CPython run keeps module semantics: names bound at top level are declared
`global`, so `global x` in a function and class names (and `__qualname__`) mean what they mean in a module.
"""

from __future__ import annotations

import ast
import asyncio
import contextlib
import io
import json
import textwrap
from dataclasses import dataclass
from typing import TYPE_CHECKING

import anyio.to_thread
import pytest

if TYPE_CHECKING:
    from sandbox import Sandbox

ISOLATIONS = ["inline", "process"]
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


@dataclass(frozen=True)
class Case:
    """A script and its name; the expected outcome is whatever plain CPython gives."""

    name: str
    code: str


def _bound_names(node: ast.AST, names: set[str]) -> None:
    """Collect the names a top-level statement binds in the module scope (not in nested scopes)."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        names.add(node.name)
        return
    if isinstance(node, ast.Lambda):
        return
    if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
        names.add(node.id)
    elif isinstance(node, ast.alias):
        names.add((node.asname or node.name).split(".")[0])
    elif isinstance(node, (ast.ExceptHandler, ast.MatchAs, ast.MatchStar)) and node.name:
        names.add(node.name)
    elif isinstance(node, ast.MatchMapping) and node.rest:
        names.add(node.rest)
    if isinstance(node, _COMPREHENSIONS):
        # Only a walrus inside a comprehension binds in the enclosing scope; the loop targets do not.
        for sub in ast.walk(node):
            if isinstance(sub, ast.NamedExpr):
                names.add(sub.target.id)
        return
    for child in ast.iter_child_nodes(node):
        _bound_names(child, names)


class _Unannotate(ast.NodeTransformer):
    """`x: T = v` -> `x = v` outside nested scopes (an annotated name cannot be declared global)."""

    def generic_visit(self, node: ast.AST) -> ast.AST:
        if isinstance(node, _SCOPES):
            return node
        return super().generic_visit(node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> ast.AST | None:
        if node.value is None:
            return None if isinstance(node.target, ast.Name) else ast.Expr(node.target)
        return ast.Assign(targets=[node.target], value=node.value)


def wrap_like_the_sandbox(code: str) -> ast.Module:
    """The script as the body of `async def __main__()`, with its last bare expression returned."""
    module = ast.parse(code)
    if module.body and isinstance(module.body[-1], ast.Expr):
        module.body[-1] = ast.Return(value=module.body[-1].value)
    names: set[str] = set()
    for statement in module.body:
        _bound_names(statement, names)
    body = [_Unannotate().visit(statement) for statement in module.body]
    body = [statement for statement in body if statement is not None]
    if names:
        body.insert(0, ast.Global(names=sorted(names)))
    main = ast.AsyncFunctionDef(
        name="__main__",
        args=ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[], defaults=[]),
        body=body or [ast.Pass()],
        decorator_list=[],
        returns=None,
    )
    return ast.fix_missing_locations(ast.Module(body=[main], type_ignores=[]))


def run_in_cpython(code: str) -> tuple[str, object]:
    """Run the script in plain CPython, as the sandbox would wrap it; return (stdout, JSON value)."""
    namespace: dict[str, object] = {"__name__": "__main__"}
    exec(compile(wrap_like_the_sandbox(code), "<script>", "exec"), namespace)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        value = asyncio.run(namespace["__main__"]())  # type: ignore[operator]
    return out.getvalue(), json.loads(json.dumps(value))


def case(name: str, code: str) -> Case:
    """A case with its code dedented."""
    return Case(name, textwrap.dedent(code).strip("\n") + "\n")


CASES = [
    case(
        "classes_that_compare_hash_and_decorate_as_models_write_them",
        """
        import abc, copy, dataclasses, functools

        def logged(method):
            @functools.wraps(method)
            def wrapper(self, *args):
                return method(self, *args)
            return wrapper

        class Point:
            def __init__(self, x, y):
                self.x, self.y = x, y
            @logged
            def __eq__(self, other):
                return isinstance(other, Point) and (self.x, self.y) == (other.x, other.y)
            def __hash__(self):
                return hash((self.x, self.y))
            def __lt__(self, other):
                return (self.x, self.y) < (other.x, other.y)
            @property
            def norm(self):
                return abs(self.x) + abs(self.y)
            @staticmethod
            def origin():
                return Point(0, 0)
            @classmethod
            def diagonal(cls, n):
                return cls(n, n)
            @logged
            def moved(self, dx):
                return Point(self.x + dx, self.y)

        class Key(str):
            def __eq__(self, other):
                return str.lower(self) == str.lower(other)
            def __hash__(self):
                return hash(str.lower(self))

        @dataclasses.dataclass(frozen=True, order=True)
        class Version:
            major: int
            minor: int = 0

        class Sized(abc.ABC):
            @abc.abstractmethod
            def __len__(self):
                ...

        class Three(Sized):
            def __len__(self):
                return 3

        class Registry(type):
            made = []
            def __init__(cls, name, bases, namespace):
                Registry.made.append(name)

        Plugin = Registry("Plugin", (), {"kind": "plugin"})
        Made = type("Made", (), {"__hash__": None, "n": 1})
        made = Made()
        twice = copy.copy(made)

        def scale(factor, value):
            return factor * value

        double = functools.partial(scale, 2)
        lengths = functools.partial(map, len)
        print(Point(1, 2) == Point(1, 2), Point(1, 2) != Point(2, 1), {Point(1, 2), Point(1, 2)} == {Point(1, 2)})
        print(sorted([Point(2, 0), Point(1, 5)])[0].x, Point(3, -4).norm, Point.origin().x, Point.diagonal(2).y)
        print(Point(1, 1).moved(2).x, Point.__eq__.__name__, {Key("A"): 1}.get(Key("a")), Key("B") == "b")
        print(Version(1, 2) < Version(2), hash(Version(1)) == hash(Version(1)), len(Three()), Registry.made)
        print(Plugin.kind, isinstance(Plugin, Registry), Made.__module__, twice is not made, twice.n)
        print(double(21), list(lengths(["ab", "c"])), double.func is scale, double.args, lengths.func is map)
        [Version(3).major, list(map(len, ["xyz"])), Made.__hash__ is None]
        """,
    ),
    case(
        "top_level_await_and_async_def",
        """
        import asyncio

        async def square(n):
            await asyncio.sleep(0)
            return n * n

        first = await square(3)
        print("first", first)
        first + 1
        """,
    ),
    case(
        "asyncio_gather_with_and_without_exceptions",
        """
        import asyncio

        async def work(n):
            await asyncio.sleep(0)
            if n == 3:
                raise ValueError(f"bad {n}")
            return n * 10

        ok = await asyncio.gather(*(work(i) for i in range(3)))
        mixed = await asyncio.gather(work(1), work(3), return_exceptions=True)
        print(ok, [repr(x) for x in mixed])
        try:
            await asyncio.gather(work(2), work(3))
        except ValueError as e:
            print("gather raised", e)
        return ok
        """,
    ),
    case(
        "asyncio_task_group_results_failures_and_the_blocks_own_error",
        """
        import asyncio

        async def work(n, delay=0.0):
            await asyncio.sleep(delay)
            if n % 3 == 0 and n:
                raise ValueError(f"bad {n}")
            return n * 10

        async with asyncio.TaskGroup() as tg:
            tasks = [tg.create_task(work(i)) for i in range(3)]
        print([t.result() for t in tasks], repr(tg)[:10])
        try:
            async with asyncio.TaskGroup() as tg:
                slow = tg.create_task(work(1, delay=5))
                for i in (3, 6):
                    tg.create_task(work(i))
        except ExceptionGroup as eg:
            print(eg.message, sorted(str(e) for e in eg.exceptions), slow.cancelled())
        try:
            async with asyncio.TaskGroup() as tg:
                pending = tg.create_task(work(1, delay=5))
                raise KeyError("the block")
        except ExceptionGroup as eg:
            print([repr(e) for e in eg.exceptions], pending.cancelled())
        group = asyncio.TaskGroup()
        try:
            group.create_task(None)  # refused before the argument is looked at
        except RuntimeError as e:
            print(str(e).split(" has ")[1])
        try:
            async with group:
                async with group:
                    pass
        except ExceptionGroup as eg:  # the inner block's error, which the outer group collects
            print([str(e).split(" has ")[1] for e in eg.exceptions])
        return len(tasks)
        """,
    ),
    case(
        "asyncio_wait_for_and_its_timeout",
        """
        import asyncio

        async def quick():
            await asyncio.sleep(0)
            return "quick"

        print(await asyncio.wait_for(quick(), timeout=5))
        try:
            await asyncio.wait_for(asyncio.sleep(10), timeout=0.01)
        except asyncio.TimeoutError:
            print("timed out")
        try:
            await asyncio.wait_for(asyncio.sleep(10), timeout=0.01)
        except TimeoutError:
            print("timed out again")
        """,
    ),
    case(
        "asyncio_as_completed_and_create_task",
        """
        import asyncio

        async def work(n):
            for _ in range(n):
                await asyncio.sleep(0)
            return n

        done = []
        for next_done in asyncio.as_completed([work(3), work(1), work(2)]):
            done.append(await next_done)
        task = asyncio.create_task(work(2))
        other = asyncio.create_task(work(1))
        both = [await task, await other]
        print(sorted(done), both, task.done(), task.result())
        sorted(done) + both
        """,
    ),
    case(
        "async_for_async_with_and_async_generators",
        """
        import asyncio

        async def ticks(n):
            for i in range(n):
                await asyncio.sleep(0)
                yield i

        class Session:
            def __init__(self):
                self.log = []

            async def __aenter__(self):
                self.log.append("open")
                return self

            async def __aexit__(self, *exc):
                self.log.append("close")
                return False

        got = [i async for i in ticks(3)]
        async with Session() as s:
            async for i in ticks(2):
                s.log.append(i)
        print(got, s.log)
        """,
    ),
    case(
        "asyncio_semaphore_and_lock_limit_concurrency",
        """
        import asyncio

        sem = asyncio.Semaphore(2)
        lock = asyncio.Lock()
        active = 0
        peak = 0

        async def job(n):
            global active, peak
            async with sem:
                active += 1
                peak = max(peak, active)
                await asyncio.sleep(0)
                active -= 1
            async with lock:
                return n

        print(await asyncio.gather(*[job(i) for i in range(6)]), peak)
        """,
    ),
    case(
        "top_level_return_from_inside_a_loop",
        """
        for i in range(10):
            if i * i > 20:
                print("found", i)
                return i
        return -1
        """,
    ),
    case(
        "final_bare_expression_is_the_value",
        """
        data = {"a": [1, 2, 3], "b": None}
        print("computing")
        {k: (sum(v) if v else 0) for k, v in data.items()}
        """,
    ),
    case(
        "no_return_gives_none_and_print_as_last_statement",
        """
        total = sum(range(5))
        print("total is", total)
        """,
    ),
    case(
        "f_strings_with_debug_conversions_and_nested_specs",
        """
        x = 3.14159
        w, p = 10, 3
        name = "Ada"
        n = 1234567
        items = ["a", "b"]
        d = {"k": "v"}
        print(f"{x=}")
        print(f"{x = :.2f}")
        print(f"{name!r} {name!s:>6} {name:*^9}")
        print(f"[{x:>{w}.{p}f}]")
        print(f"[{x:{'0'}>{w}.{p}f}]")
        print(f"{n:,} {n:_} {n:#x} {-5:+d} {0.256:.1%} {1234.5:10.2e} {3.0:g}")
        print(f"{d['k']} {len(items)} items {'nested ' + f'{n}'}")
        print(f"{{braces}} {1 + 1 = }")
        print(f'''multi
        {name.upper()}''')
        f"{name:<{w}}|"
        """,
    ),
    case(
        "comprehensions_of_every_kind",
        """
        words = ["apple", "bob", "kayak", "level", "python"]
        lengths = [len(w) for w in words]
        palindromes = [w for w in words if w == w[::-1]]
        by_len = {w: len(w) for w in words if len(w) > 3}
        letters = sorted({c for w in words for c in w if c in "aeiou"})
        matrix = [[i * j for j in range(3)] for i in range(3)]
        transposed = [list(row) for row in zip(*matrix)]
        total = sum(x * x for x in range(10) if x % 2)
        flags = (any(w.startswith("p") for w in words), all(len(w) > 2 for w in words))
        print(lengths, palindromes, by_len, letters, transposed, total, flags)
        [[c for c in w[:2]] for w in words]
        """,
    ),
    case(
        "generators_with_send_yield_from_and_expressions",
        """
        def countdown(n):
            while n > 0:
                yield n
                n -= 1

        def accumulator():
            total = 0
            while True:
                value = yield total
                if value is None:
                    return total
                total += value

        def chain(*iterables):
            for it in iterables:
                yield from it

        acc = accumulator()
        next(acc)
        sent = [acc.send(5), acc.send(10)]
        try:
            acc.send(None)
        except StopIteration as stop:
            print("finished with", stop.value)
        squares = (i * i for i in range(5))
        print(list(countdown(3)), sent, list(chain([1], (2, 3), "ab")), next(squares), sum(squares))
        """,
    ),
    case(
        "classes_with_dunder_methods_properties_and_classmethods",
        """
        class Vec:
            def __init__(self, x, y):
                self.x = x
                self.y = y

            def __repr__(self):
                return f"Vec({self.x}, {self.y})"

            def __eq__(self, other):
                return isinstance(other, Vec) and (self.x, self.y) == (other.x, other.y)

            def __hash__(self):
                return hash((self.x, self.y))

            def __add__(self, other):
                return Vec(self.x + other.x, self.y + other.y)

            def __mul__(self, k):
                return Vec(self.x * k, self.y * k)

            def __rmul__(self, k):
                return self * k

            def __lt__(self, other):
                return self.norm2 < other.norm2

            def __len__(self):
                return 2

            def __iter__(self):
                yield self.x
                yield self.y

            def __getitem__(self, i):
                return (self.x, self.y)[i]

            def __bool__(self):
                return bool(self.x or self.y)

            @property
            def norm2(self):
                return self.x**2 + self.y**2

            @classmethod
            def zero(cls):
                return cls(0, 0)

            @staticmethod
            def dims():
                return 2

        a, b = Vec(1, 2), Vec(3, 4)
        print(a + b, a == Vec(1, 2), a != b, Vec.zero(), b.norm2, Vec.dims())
        print(2 * a, a * 3, sorted([b, a]), len(a), list(a), a[1], bool(Vec.zero()), len({a, Vec(1, 2)}))
        print(str(a), [a], {"v": a})
        repr(a)
        """,
    ),
    case(
        "inheritance_and_super",
        """
        class Animal:
            sound = "..."

            def __init__(self, name):
                self.name = name

            def speak(self):
                return self.sound

            def describe(self):
                return f"{self.name} says {self.speak()}"

            def __str__(self):
                return f"<{self.name}>"

        class Dog(Animal):
            sound = "woof"

            def __init__(self, name, breed):
                super().__init__(name)
                self.breed = breed

            def describe(self):
                return super().describe() + f" ({self.breed})"

        class Puppy(Dog):
            def speak(self):
                return super().speak().upper()

        p = Puppy("Rex", "lab")
        print(p.describe(), isinstance(p, Animal), issubclass(Puppy, Dog), str(p), p)
        print(isinstance(p, (int, Dog)), isinstance(3, (int, float)), type(p) is Puppy, type(3) == int)
        """,
    ),
    case(
        "own_exception_classes_raised_and_caught",
        """
        class AppError(Exception):
            pass

        class ValidationError(AppError):
            def __init__(self, field, message):
                super().__init__(f"{field}: {message}")
                self.field = field

        try:
            raise ValidationError("age", "must be positive")
        except AppError as e:
            print("caught", e, e.field, repr(e), e.args)

        try:
            {}["missing"]
        except (IndexError, KeyError) as e:
            print("lookup", repr(e))

        try:
            raise AppError("plain")
        except ValueError:
            print("wrong handler")
        except Exception as e:
            print("generic", e, isinstance(e, AppError))
        """,
    ),
    case(
        "try_except_else_finally_ordering",
        """
        def risky(n):
            try:
                print("try", n)
                result = 10 / n
            except ZeroDivisionError as e:
                print("except", e)
                return None
            else:
                print("else", result)
                return result
            finally:
                print("finally", n)

        print(risky(2), risky(0))

        def nested():
            try:
                try:
                    raise KeyError("inner")
                finally:
                    print("inner finally")
            except KeyError as e:
                print("outer caught", e)
                raise RuntimeError("re-raised")

        try:
            nested()
        except RuntimeError as e:
            print(e)
        """,
    ),
    case(
        "raise_from_and_raise_from_none",
        """
        class ParseError(Exception):
            pass

        def parse(text):
            try:
                return int(text)
            except ValueError as e:
                raise ParseError(f"not a number: {text!r}") from e

        def lookup(d, k):
            try:
                return d[k]
            except KeyError:
                raise LookupError(f"no {k}") from None

        for attempt in (lambda: parse("x"), lambda: lookup({}, "k")):
            try:
                attempt()
            except Exception as e:
                print(repr(e))
        parse("42")
        """,
    ),
    case(
        "match_literal_sequence_mapping_class_and_guards",
        """
        from dataclasses import dataclass

        @dataclass
        class Point:
            x: int
            y: int

        def describe(value):
            match value:
                case 0 | 1:
                    return "tiny"
                case int(n) if n < 0:
                    return f"negative {n}"
                case int() | float():
                    return "number"
                case "quit":
                    return "bye"
                case str() as s:
                    return f"str {s}"
                case None:
                    return "none"
                case [x, y]:
                    return f"pair {x},{y}"
                case [first, *rest]:
                    return f"list {first}+{len(rest)}"
                case {"type": "user", "name": name}:
                    return f"user {name}"
                case {"type": kind, **others}:
                    return f"{kind} {sorted(others)}"
                case Point(x=0, y=y):
                    return f"on the y axis at {y}"
                case Point(a, b) if a == b:
                    return f"diagonal {a}"
                case Point():
                    return "point"
                case _:
                    return "other"

        values = [0, -4, 2.5, "quit", "hi", None, [1, 2], [1, 2, 3], (9,), {"type": "user", "name": "ann"},
                  {"type": "bot", "id": 1, "v": 2}, Point(0, 5), Point(3, 3), Point(1, 2), {1, 2}]
        [describe(v) for v in values]
        """,
    ),
    case(
        "annotated_assignments",
        """
        count: int = 0
        names: list[str] = []
        pending: dict[str, int]
        names.append("a")
        count += 1

        def repeat(a: int, b: str = "x") -> str:
            result: str = b * a
            return result

        class Config:
            retries: int = 3
            label: str = "cfg"

        print(count, names, repeat(2), Config.retries, Config().label)
        """,
    ),
    case(
        "augmented_assignment_on_items_and_attributes",
        """
        from collections import Counter

        class Box:
            def __init__(self):
                self.n = 0
                self.items = [1, 2]
                self.meta = {"hits": 0}

        counts = {}
        for word in "a b a c a b".split():
            counts[word] = counts.get(word, 0)
            counts[word] += 1
        grid = [[0, 0], [0, 0]]
        grid[1][0] += 5
        box = Box()
        box.n += 1
        box.n *= 10
        box.items[0] += 100
        box.meta["hits"] += 2
        tally = Counter()
        tally["x"] += 3
        s = "ab"
        s += "c"
        s *= 2
        x = 3
        x **= 2
        x //= 2
        x %= 3
        x <<= 4
        x |= 1
        lst = [1]
        lst += [2]
        lst *= 2
        print(counts, grid, box.n, box.items, box.meta, dict(tally), s, x, lst)
        """,
    ),
    case(
        "nonlocal_closures_and_global_in_functions",
        """
        def make_counter():
            n = 0

            def inc(step=1):
                nonlocal n
                n += step
                return n

            return inc

        total = 0

        def add(x):
            global total
            total += x

        def define_new():
            global created_later
            created_later = "made inside a function"

        counter = make_counter()
        counter()
        counter(5)
        add(3)
        add(4)
        define_new()
        print(counter(), total, created_later)
        """,
    ),
    case(
        "walrus_star_unpacking_and_swaps",
        """
        data = [3, 8, 1, 9, 4]
        if (n := len(data)) > 3:
            print("long", n)
        doubled = [y for x in data if (y := x * 2) > 5]
        print(doubled, y)
        first, *middle, last = range(6)
        head, (a, b), *tail = [0, (1, 2), 3, 4]
        a, b = b, a
        merged = [*data[:2], *"xy"]
        combined = {**{"a": 1, "b": 2}, **{"b": 3}, "c": 4}

        def f(*args, **kwargs):
            return args, sorted(kwargs.items())

        it = iter(data)
        chunks = []
        while (chunk := next(it, None)) is not None:
            chunks.append(chunk)
        print(first, middle, last, head, a, b, tail, merged, combined, f(*[1, 2], **{"k": 3}), chunks)
        for i, (k, v) in enumerate(sorted(combined.items()), start=1):
            print(i, k, v, sep=":")
        """,
    ),
    case(
        "print_with_sep_end_and_many_types",
        """
        print("a", "b", "c", sep="-", end="!\\n")
        print("no newline", end="")
        print(" then continued")
        print()
        print(*[1, 2, 3], sep=", ")
        print(1, 2.5, None, True, [1, "x"], {"k": (1,)}, ("t",), b"raw", 1e-7, 10**20, -0.0, 2 + 3j)
        print("tab\\tand\\nnewline", repr("quote's"), sep="|")
        print("x", sep="")
        """,
    ),
    case(
        "str_format_and_percent_formatting",
        """
        print("{} + {} = {}".format(1, 2, 3))
        print("{0}{1}{0}".format("ab", "cd"))
        print("{name} is {age}".format(name="Al", age=3))
        print("{:>8}|{:<6}|{:^7}|".format("r", "l", "c"))
        print("{:.3f} {:,} {:08.2f} {:x} {:b} {:e} {:.0%}".format(3.14159, 1234567, 3.14159, 255, 5, 12345.678, 0.5))
        print("{!r} {{literal}} {:{w}}|".format("s", "x", w=5))
        print("{a}-{b}".format_map({"a": 1, "b": 2}))
        print("%s=%d" % ("a", 5))
        print("%5.2f|%-5s|%05d|" % (3.14159, "ab", 42))
        print("%(name)s is %(age)d" % {"name": "Bo", "age": 7})
        print("%x %o %e %r %% %c" % (255, 8, 12345.678, "q", 65))
        print("%s" % [1, 2], "%s" % (("tuple",),))
        template = "%s and %s"
        pair = ("x", "y")
        template % pair
        """,
    ),
    case(
        "functools_lru_cache_cache_partial_reduce_and_wraps",
        """
        import functools
        from functools import lru_cache, partial, reduce, wraps

        @lru_cache(maxsize=None)
        def fib(n):
            return n if n < 2 else fib(n - 1) + fib(n - 2)

        @functools.lru_cache
        def square(n):
            return n * n

        @functools.cache
        def cube(n):
            return n**3

        def logged(fn):
            @wraps(fn)
            def wrapper(*args, **kwargs):
                print("calling with", args)
                return fn(*args, **kwargs)

            return wrapper

        @logged
        def add(a, b):
            return a + b

        def compare(a, b):
            return (a > b) - (a < b)

        power_of_two = partial(pow, 2)
        square(4)
        square(4)
        print(fib(80), fib.cache_info().hits > 0, square.cache_info(), cube(3), add(2, 3))
        print(power_of_two(10), reduce(lambda acc, x: acc * x, range(1, 6), 1))
        print(sorted(["bb", "a", "ccc"], key=functools.cmp_to_key(lambda a, b: compare(len(b), len(a)))))
        """,
    ),
    case(
        "functools_total_ordering_and_cached_property",
        """
        from functools import cached_property, total_ordering

        @total_ordering
        class Version:
            def __init__(self, text):
                self.parts = tuple(int(p) for p in text.split("."))

            def __eq__(self, other):
                return self.parts == other.parts

            def __lt__(self, other):
                return self.parts < other.parts

            @cached_property
            def label(self):
                print("computing label")
                return "v" + ".".join(map(str, self.parts))

        v1, v2 = Version("1.2.0"), Version("1.10.0")
        print(v1 < v2, v1 >= v2, v2 > v1, max(v1, v2).label, max(v1, v2).label)
        """,
    ),
    case(
        "dataclasses_fields_defaults_frozen_and_ordering",
        """
        import dataclasses
        from dataclasses import asdict, astuple, dataclass, field, replace

        @dataclass
        class Item:
            name: str
            price: float
            tags: list[str] = field(default_factory=list)
            qty: int = 1

            def __post_init__(self):
                self.name = self.name.strip()

            @property
            def total(self):
                return self.price * self.qty

        @dataclass(frozen=True, order=True)
        class Point:
            x: int
            y: int = 0

        item = Item("  pen ", 1.5, qty=4)
        item.tags.append("office")
        print(item, item.total, asdict(item), astuple(Point(1, 2)))
        print(replace(item, qty=1) == Item("pen", 1.5, ["office"]), sorted([Point(2), Point(1, 5), Point(1, 1)]))
        print([f.name for f in dataclasses.fields(Item)], dataclasses.is_dataclass(item))
        try:
            Point(1).x = 5
        except dataclasses.FrozenInstanceError as e:
            print("frozen:", e)
        asdict(item)
        """,
    ),
    case(
        "json_dumps_loads_and_decode_errors",
        """
        import json

        data = {"name": "caf\\u00e9", "nums": [1, 2.5, None, True], "nested": {"b": 1, "a": [{}]}}
        text = json.dumps(data, indent=2, sort_keys=True)
        print(text)
        print(json.dumps(data, ensure_ascii=False, separators=(",", ":")))
        print(json.dumps({"when": 3 + 4j}, default=str))
        print(json.loads('{"x": [1, {"y": null}]}'), json.loads("3.5"), json.loads('"s"'))
        try:
            json.loads("{bad json}")
        except json.JSONDecodeError as e:
            print("bad json at", e.pos, e.msg)
        json.loads(text)
        """,
    ),
    case(
        "math_functions_and_constants",
        """
        import math

        print(math.sqrt(16), math.floor(-2.5), math.ceil(2.1), math.gcd(12, 18), math.lcm(4, 6))
        print(math.isclose(0.1 + 0.2, 0.3), round(math.pi, 5), round(math.e, 5), math.inf > 1e308)
        print(math.log(8, 2), math.log10(1000), math.exp(0), math.hypot(3, 4), math.comb(10, 3), math.perm(5, 2))
        print(math.prod([1, 2, 3, 4]), math.fsum([0.1] * 10), math.trunc(-3.7), math.copysign(1, -0.0))
        print(math.degrees(math.pi), math.sin(math.pi / 2), math.factorial(20), math.isqrt(99), math.isnan(math.nan))
        print(math.dist((0, 0), (3, 4)), math.modf(3.25), math.frexp(8.0), math.pow(2, 0.5))
        """,
    ),
    case(
        "re_findall_sub_groups_and_flags",
        """
        import re

        text = "Contact: ann@example.com, bob@test.org; dates 2024-01-15 and 2023-12-31."
        print(re.findall(r"\\d+", text))
        print(re.sub(r"(\\w+)@(\\w+)", r"\\2 at \\1", text))
        print(re.sub(r"[aeiou]", lambda m: m.group(0).upper(), "banana"))
        pattern = re.compile(r"(?P<year>\\d{4})-(?P<month>\\d\\d)-(?P<day>\\d\\d)")
        m = pattern.search(text)
        print(m.group("year"), m.groupdict(), m.groups(), m.span(), m.group(0), pattern.pattern)
        print([m.group() for m in pattern.finditer(text)], re.split(r"[,;]\\s*", "a, b;c"))
        print(re.fullmatch(r"[a-z]+", "abc") is not None, re.match("x", "abc"), re.escape("a.b*c"))
        print(re.findall(r"^\\w", "one\\ntwo", flags=re.MULTILINE), re.search("HELLO", "say hello", re.I).start())
        print(re.subn(r"o", "0", "foo boo"), re.compile(r"\\s+").split("a  b   c"))
        """,
    ),
    case(
        "datetime_arithmetic_parsing_and_formatting",
        """
        from datetime import date, datetime, time, timedelta, timezone

        d = date(2024, 2, 28)
        later = d + timedelta(days=2)
        print(later, later.isoformat(), later.strftime("%A %d %B %Y"), later.weekday(), repr(later))
        dt = datetime(2024, 1, 1, 12, 30, tzinfo=timezone.utc)
        print(dt.isoformat(), dt.timestamp(), dt + timedelta(hours=36), dt.date(), dt.time())
        parsed = datetime.fromisoformat("2024-03-05T10:00:00")
        print(parsed, datetime.strptime("05/03/2024", "%d/%m/%Y"), (parsed - datetime(2024, 1, 1)).days)
        gap = timedelta(hours=36, minutes=5)
        print(gap, gap.total_seconds(), str(timedelta(days=-1)), time(9, 30).isoformat(), d < later)
        print(f"{d:%Y/%m/%d}", date.fromordinal(738000), dt.astimezone(timezone(timedelta(hours=2))).hour)
        later.isoformat()
        """,
    ),
    case(
        "collections_counter_defaultdict_namedtuple_deque_ordereddict",
        """
        import collections
        from collections import Counter, OrderedDict, defaultdict, deque, namedtuple

        words = "the cat and the hat and the bat".split()
        counts = Counter(words)
        print(counts.most_common(2), counts["missing"], counts.total(), sorted(counts.elements())[:3])
        print(Counter("aab") + Counter("bc"), Counter("aab") - Counter("a"))
        groups = defaultdict(list)
        for w in words:
            groups[len(w)].append(w)
        freq = defaultdict(int)
        for w in words:
            freq[w] += 1
        print(dict(groups), dict(freq))
        Point = namedtuple("Point", ["x", "y"])
        p = Point(1, y=2)
        print(p, p._asdict(), p._replace(x=5), Point._fields, Point._make([7, 8]), p.x + p[1])
        dq = deque([1, 2, 3], maxlen=4)
        dq.append(4)
        dq.append(5)
        dq.appendleft(0)
        dq.rotate(1)
        print(list(dq), dq.popleft(), dq.maxlen)
        od = OrderedDict(a=1, b=2, c=3)
        od.move_to_end("a")
        print(list(od), od.popitem(last=False))
        chain = collections.ChainMap({"a": 1}, {"a": 2, "b": 3})
        print(chain["a"], chain["b"], sorted(chain))
        p._asdict()
        """,
    ),
    case(
        "itertools_combinatorics_and_iterators",
        """
        import itertools
        from itertools import accumulate, chain, groupby, islice, product

        print(list(chain([1, 2], "ab")), list(chain.from_iterable([[1], [2, 3]])))
        print([(k, list(g)) for k, g in groupby(sorted("aabbbc"))])
        print(list(product("ab", repeat=2)), list(itertools.permutations([1, 2, 3], 2))[:4])
        print(list(itertools.combinations("abcd", 2)), list(itertools.combinations_with_replacement("ab", 2)))
        print(list(accumulate([1, 2, 3, 4])), list(accumulate([3, 1, 4], max)))
        print(list(islice(itertools.count(10, 5), 3)))
        print(list(islice(itertools.cycle("xy"), 5)), list(itertools.repeat(7, 3)), list(itertools.pairwise("abc")))
        print(list(itertools.starmap(pow, [(2, 3), (3, 2)])))
        print(list(itertools.takewhile(lambda x: x < 3, [1, 2, 5, 1])))
        print(list(itertools.dropwhile(lambda x: x < 3, [1, 2, 5, 1])))
        print(list(itertools.zip_longest("ab", "c", fillvalue="-")))
        print(list(itertools.compress("abcd", [1, 0, 1, 0])), list(itertools.filterfalse(lambda x: x % 2, range(6))))
        a, b = itertools.tee([1, 2])
        print(list(a), list(b))
        """,
    ),
    case(
        "statistics_summaries",
        """
        import statistics

        data = [2, 4, 4, 4, 5, 5, 7, 9]
        print(statistics.mean(data), statistics.median(data), statistics.mode(data))
        print(statistics.median_low([1, 3, 5, 7]))
        print(statistics.pstdev(data), round(statistics.stdev(data), 6), statistics.variance(data))
        print(statistics.multimode("aabbc"), statistics.quantiles(data, n=4), statistics.fmean([1, 2]))
        print(statistics.harmonic_mean([40, 60]), statistics.median_high([1, 3, 5, 7]))
        """,
    ),
    case(
        "random_seeded_instance_and_module_seed",
        """
        import random

        rng = random.Random(1)
        print([rng.randint(1, 100) for _ in range(5)], rng.random(), rng.choice("abcdef"))
        deck = list(range(10))
        rng.shuffle(deck)
        print(deck, rng.sample(range(100), 3), round(rng.uniform(1, 2), 6), rng.choices("ab", k=4))
        random.seed(3)
        first = random.random()
        random.seed(3)
        print(first == random.random(), random.randint(1, 6))
        random.seed(3)
        random.random()
        """,
    ),
    case(
        "string_constants_template_and_capwords",
        """
        import string
        from string import Template

        print(string.ascii_lowercase, string.ascii_uppercase, string.digits, string.hexdigits)
        print(string.punctuation, repr(string.whitespace), len(string.printable), string.octdigits)
        t = Template("$who likes ${what}!")
        print(t.substitute(who="tim", what="pie"), t.safe_substitute(who="ann"), t.template)
        print(Template("$x costs $$5").substitute({"x": "it"}), string.capwords("hello   big world"))
        """,
    ),
    case(
        "textwrap_wrap_fill_dedent_indent_shorten",
        """
        import textwrap

        text = "The quick brown fox jumps over the lazy dog and keeps on running far away."
        print(textwrap.wrap(text, width=20))
        print(textwrap.fill(text, width=30))
        print(textwrap.dedent("    a\\n      b\\n    c"))
        print(textwrap.indent("x\\ny", "> "))
        print(textwrap.shorten(text, width=30, placeholder="..."))
        wrapper = textwrap.TextWrapper(width=15, initial_indent="* ", subsequent_indent="  ")
        print(wrapper.fill(text))
        """,
    ),
    case(
        "decimal_arithmetic_quantize_and_local_context",
        """
        import decimal
        from decimal import ROUND_HALF_UP, Decimal

        print(Decimal("0.1") + Decimal("0.2"), Decimal(1) / Decimal(7), Decimal("1.10").normalize())
        print(Decimal("2.675").quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))
        print(Decimal("3.14159").quantize(Decimal("0.01")))
        with decimal.localcontext() as ctx:
            ctx.prec = 5
            print(Decimal(1) / Decimal(3))
        print(Decimal(1) / Decimal(3), sum([Decimal("0.10")] * 3), int(Decimal("3.7")), Decimal("2") ** 10)
        print(Decimal("1.5") * 2, Decimal("7") % Decimal("3"), Decimal("-7") // Decimal("2"), repr(Decimal("0.5")))
        str(Decimal("19.99") * 3)
        """,
    ),
    case(
        "fractions_arithmetic",
        """
        from fractions import Fraction

        a = Fraction(1, 3) + Fraction(1, 6)
        print(a, Fraction("3/4") * 2, Fraction(0.75), Fraction(3.14159).limit_denominator(100), repr(a))
        print(a.numerator, a.denominator, float(Fraction(1, 4)), Fraction(2, 3) ** 2)
        print(Fraction(5, 3) // 1, Fraction(7, 2) % 1)
        [str(Fraction(1, n)) for n in range(1, 4)]
        """,
    ),
    case(
        "base64_hashlib_and_uuid5",
        """
        import base64
        import hashlib
        import json
        import uuid

        raw = json.dumps({"a": 1}).encode()
        encoded = base64.b64encode(raw).decode()
        print(encoded, base64.b64decode(encoded), base64.urlsafe_b64encode(b"\\xfb\\xff"), base64.b32encode(b"hi"))
        print(base64.b16encode(b"hi"), base64.urlsafe_b64decode("-_8="))
        print(hashlib.sha256(b"abc").hexdigest(), hashlib.md5(b"abc").hexdigest(), hashlib.sha1(b"abc").hexdigest())
        h = hashlib.sha256()
        h.update(b"a")
        h.update(b"bc")
        print(h.hexdigest() == hashlib.sha256(b"abc").hexdigest(), hashlib.blake2b(b"x", digest_size=8).hexdigest())
        print(hashlib.sha512(b"abc").hexdigest()[:16], len(hashlib.sha256(b"").digest()))
        u = uuid.uuid5(uuid.NAMESPACE_DNS, "example.com")
        print(u, u.hex, u.version, uuid.uuid3(uuid.NAMESPACE_URL, "https://x.org"), uuid.UUID(int=1))
        str(uuid.UUID("12345678123456781234567812345678"))
        """,
    ),
    case(
        "heapq_and_bisect",
        """
        import bisect
        import heapq

        data = [5, 1, 8, 3, 9, 2]
        heap = list(data)
        heapq.heapify(heap)
        heapq.heappush(heap, 0)
        print([heapq.heappop(heap) for _ in range(3)], heapq.nlargest(2, data))
        print(heapq.nsmallest(2, data, key=lambda x: -x))
        print(heapq.heappushpop(heap, 4), list(heapq.merge([1, 4], [2, 3])))
        tasks = []
        heapq.heappush(tasks, (2, "write"))
        heapq.heappush(tasks, (1, "read"))
        print(heapq.heappop(tasks))
        sorted_data = sorted(data)
        print(bisect.bisect_left(sorted_data, 5), bisect.bisect_right(sorted_data, 5), bisect.bisect(sorted_data, 4))
        bisect.insort(sorted_data, 4)
        print(sorted_data, bisect.bisect_left([{"k": 1}, {"k": 5}], 3, key=lambda d: d["k"]))
        """,
    ),
    case(
        "typing_annotations_typeddict_and_namedtuple",
        """
        from typing import Any, Callable, Dict, List, Literal, NamedTuple, Optional, TypedDict, Union

        class Movie(TypedDict):
            title: str
            year: int

        class Pair(NamedTuple):
            left: int
            right: int = 0

        Mode = Literal["fast", "slow"]

        def first(items: List[int], default: Optional[int] = None) -> Optional[int]:
            return items[0] if items else default

        def apply(x: Union[int, str], fn: Callable[[Any], Any] = str, mode: Mode = "fast") -> Dict[str, Any]:
            return {"x": fn(x), "mode": mode}

        movie: Movie = {"title": "Heat", "year": 1995}
        p = Pair(1)
        print(first([3, 4]), first([], -1), movie["title"], p, p.left + p.right, p._asdict(), Pair(2, 3) > p)
        print(apply(5), Movie(title="X", year=1), isinstance(movie, dict))
        apply("y", str.upper)
        """,
    ),
    case(
        "builtins_sorted_min_max_enumerate_zip_map_filter",
        """
        people = [{"name": "bo", "age": 31}, {"name": "al", "age": 25}, {"name": "cy", "age": 31}]
        print(sorted(people, key=lambda p: (-p["age"], p["name"])))
        print(sorted(["b", "A", "c"], key=str.lower), sorted([3, 1, 2], reverse=True))
        print(min(people, key=lambda p: p["age"])["name"], max([], default="empty"), max(3, 7, 5))
        scores = {"a": 3, "b": 9, "c": 1}
        print(max(scores, key=scores.get), min(scores.items(), key=lambda kv: kv[1]))
        print(list(enumerate("xy", start=1)), list(zip([1, 2, 3], "ab")), list(map(str.upper, ["a", "b"])))
        print(list(filter(None, [0, 1, "", "x", None])), list(map(lambda a, b: a + b, [1, 2], [10, 20])))
        print(list(reversed([1, 2, 3])), list(range(10, 0, -3)), sum([1, 2], 10), any([]), all([]))
        print(divmod(17, 5), pow(2, 10), pow(3, 4, 5), abs(-2.5), round(2.675, 2), round(2.5), round(3.5), round(-0.5))
        print(chr(65), ord("a"), bin(10), hex(255), oct(8), int("ff", 16), int("0b101", 0), float("1e-3"))
        print(len("héllo"), ascii("héllo"), bool([]), list("abc"), tuple([1]), set([1, 1]), frozenset([2]) | {3})
        print(callable(len), hasattr(people, "append"), iter([1]) is not None, next(iter([]), "done"))
        """,
    ),
    case(
        "getattr_setattr_and_hasattr_on_own_objects",
        """
        class Settings:
            def __init__(self):
                self.color = "red"
                self._private = "mine"

            def describe(self):
                return f"color={self.color}"

        s = Settings()
        setattr(s, "size", 3)
        names = ["color", "size", "missing"]
        print([getattr(s, n, None) for n in names], hasattr(s, "color"), hasattr(s, "nope"))
        print(getattr(s, "describe")(), s._private, getattr(s, "_private"))
        delattr(s, "size")
        print(hasattr(s, "size"))
        method = getattr("text", "upper")
        method()
        """,
    ),
    case(
        "dict_and_set_operations",
        """
        d = {"a": 1, "b": 2}
        d.update(c=3)
        d.setdefault("d", 4)
        d.setdefault("a", 100)
        popped = d.pop("b")
        missing = d.pop("zz", None)
        merged = d | {"e": 5}
        merged |= {"a": 0}
        del merged["c"]
        print(d, popped, missing, merged, list(d.keys()), list(d.values()), "a" in d, d.get("x", "dflt"))
        print(dict.fromkeys("ab", 0), dict(zip("xy", [1, 2])), d.copy() == d, d.popitem(), len(d))
        s1, s2 = {1, 2, 3}, {3, 4}
        print(s1 | s2, s1 & s2, s1 - s2, s1 ^ s2, s1.issubset({1, 2, 3, 4}), {1}.isdisjoint(s2))
        s1.add(10)
        s1.discard(1)
        s1.discard(99)
        print(sorted(s1), sorted(s1.union([7], (8,))), frozenset({1, 2}) == {1, 2})
        sorted({"b", "a"} | {"c"})
        """,
    ),
    case(
        "slicing_and_slice_assignment",
        """
        nums = list(range(10))
        print(nums[2:5], nums[-3:], nums[::2], nums[::-1], nums[8:2:-2], nums[:0], nums[100:])
        text = "Hello, World"
        print(text[7:], text[-5:-1], text[::-1], (1, 2, 3, 4)[1:3], text[slice(0, 5)])
        nums[1:3] = ["a", "b", "c"]
        del nums[-2:]
        nums[::3] = [0] * len(nums[::3])
        del nums[0]
        print(nums)
        nums[:2]
        """,
    ),
    case(
        "string_methods",
        """
        s = "  Hello, World! Hello!  "
        print(s.strip(), s.lstrip(), s.rstrip(" !"), s.split(), "a,b,,c".split(","), "a b c".split(" ", 1))
        print("a-b-c".rsplit("-", 1), "-".join(["x", "y"]), s.replace("Hello", "Bye", 1), s.upper(), s.lower())
        print("hello world".title(), "hello".capitalize(), "HeLLo".swapcase(), "ß".casefold(), s.count("Hello"))
        print(s.find("World"), s.rfind("Hello"), s.index("W"), "abc".startswith(("x", "a")), "abc".endswith("bc"))
        print("42".zfill(5), "ab".center(6, "*"), "ab".ljust(4, "."), "ab".rjust(4), "k=v=w".partition("="))
        print("k=v=w".rpartition("="), "l1\\nl2\\r\\nl3".splitlines(), "123".isdigit(), "abc".isalpha(), " ".isspace())
        print("prefix_name".removeprefix("prefix_"), "file.txt".removesuffix(".txt"))
        print("abc".translate(str.maketrans("ab", "xy")))
        print("café".encode("utf-8"), b"caf\\xc3\\xa9".decode(), "a\\tb".expandtabs(4))
        print("x".isidentifier(), "Ab1".isalnum())
        " | ".join(word[::-1] for word in "one two".split())
        """,
    ),
    case(
        "int_and_float_edge_cases",
        """
        a, b = -7, 2
        big = 2**100
        print(big, a // b, a % 3, 7 % -3, a % b, -a // b, divmod(a, b), 10**20 // 3, big.bit_length())
        print(0.1 + 0.2, 1 / 3, 5 / 2, 5 // 2.0, 2**-1, 3**0.5, (-8) ** (1 / 3), 1e16 + 1, 1e308 * 10)
        print(float("inf") > 1e308, float("nan") != float("nan"), int(-3.9), int(1e20), str(1e20), repr(1e-7))
        print((255).to_bytes(2, "big"), int.from_bytes(b"\\x01\\x00", "little"), abs(-0.0), 1_000_000, 0x1F, 0o17, 0b11)
        print(True + True, (1.5).as_integer_ratio(), (4.0).is_integer(), complex(1, 2) * 2)
        print(max(1, 2.0), sum([0.1] * 10))
        print(len(str(3**2000)), str(2**1000)[:10], int("  42 "), float(" -1.5 "), round(123.456, -1), round(1e-10, 3))
        x = 12
        y = 5
        print(x * y, x**y, x << 3, x >> 1, x % y, x & y, x | y, x ^ y, ~x, -x, +x, x / y, x // y)
        [big % 1000, 2**63, -(2**63), 1.5e300, -0.0]
        """,
    ),
    case(
        "size_guarded_operators_keep_their_meaning_on_every_type",
        """
        from datetime import timedelta
        from decimal import Decimal
        from fractions import Fraction

        class Money:
            def __init__(self, cents):
                self.cents = cents

            def __mul__(self, k):
                return Money(self.cents * k)

            def __rmul__(self, k):
                return Money(self.cents * k)

            def __mod__(self, k):
                return Money(self.cents % k)

            def __pow__(self, k):
                return Money(self.cents**k)

            def __repr__(self):
                return f"Money({self.cents})"

        n, s, l, t = 3, "ab", [1], (2,)
        print(n * s, s * n, l * n, n * t, Money(5) * n, n * Money(5), Money(7) % n, Money(2) ** n)
        print(Decimal("1.5") * n, Fraction(1, 3) * n, timedelta(hours=1) * n, 2.5 * n, True * n, n * 1.5)
        print(n**2, 2.0**n, Decimal(2) ** n, Fraction(2, 3) ** n, (-n) ** 3, n**-1, pow(n, 2), 0**0)
        print(n << 2, True << n, "%s-%s" % (n, s), "%d%%" % n, n % 2, -n % 5, 7.5 % 2, Decimal(7) % n)
        b, ba = b"xy", bytearray(b"z")
        print(b * 2, ba * 2, b"%d" % n, [[0] * 2] * 2)
        """,
    ),
    case(
        "underscore_loop_variable_and_private_names",
        """
        total = 0
        for _ in range(3):
            total += 1
        _cache = {}
        _cache["k"] = total

        def _helper(x):
            return x * 2

        print(total, _cache, _helper(4), [0 for _ in range(2)])
        """,
    ),
    case(
        "enums_dataclasses_wraps_and_generic_bases",
        """
        import enum
        import functools
        from dataclasses import dataclass, field
        from typing import Generic, TypeVar

        class Color(enum.Enum):
            RED = 1
            GREEN = 2

            def label(self):
                return self.name.lower()

        class Perm(enum.IntFlag):
            R = 4
            W = 2

        Size = enum.Enum("Size", "S M L")

        @dataclass(frozen=True)
        class Item:
            name: str
            tags: list = field(default_factory=list)

        def logged(fn):
            @functools.wraps(fn)
            def inner(*args):
                return fn(*args)

            return inner

        @logged
        def double(x):
            return 2 * x

        T = TypeVar("T")

        class Shape(Generic[T]):
            def __init__(self):
                self._sides = 0

            def sides(self):
                return self._sides

        class Square(Shape):
            def __init__(self, side):
                super().__init__()
                self._sides, self.side = 4, side

            def area(self):
                return self.side**2

        print(Color.RED.label(), Color(2).name, [c.value for c in Color], int(Perm.R | Perm.W), Size.M.value)
        print(Item("a"), Item("b", ["x"]) == Item("b", ["x"]), double(21))
        print(Square(3).area(), Square(3).sides())
        """,
    ),
    # -- idioms models write every day (issue 12) -----------------------------------------------------------------
    case(
        "gather_return_exceptions_then_isinstance",
        """
        import asyncio

        async def fetch(i: int) -> dict:
            await asyncio.sleep(0)
            if i % 2:
                raise ValueError(f"item {i} failed")
            return {"id": i}

        results = await asyncio.gather(*(fetch(i) for i in range(4)), return_exceptions=True)
        ok = [r for r in results if not isinstance(r, Exception)]
        errors = [f"{type(r).__name__}: {r}" for r in results if isinstance(r, Exception)]
        print(len(ok), errors)
        {"ok": ok, "errors": errors}
        """,
    ),
    case(
        "fstring_self_documenting_expressions",
        """
        x, name, ratio = 3, "widgets", 0.125
        print(f"{x=}", f"{x * 2 = }", f"{name=!r}", f"{ratio=:.1%}", f"{len(name)=}")
        """,
    ),
    case(
        "dataclasses_with_asdict_fields_and_post_init",
        """
        from dataclasses import asdict, dataclass, field, fields
        from typing import Optional

        @dataclass
        class LineItem:
            sku: str
            qty: int = 1

        @dataclass
        class Order:
            id: int
            items: list[LineItem] = field(default_factory=list)
            note: Optional[str] = None
            total: int = 0

            def __post_init__(self):
                self.total = sum(item.qty for item in self.items)

        order = Order(7, [LineItem("a", 2), LineItem("b")])
        print(order, [f.name for f in fields(Order)])
        asdict(order)
        """,
    ),
    case(
        "wait_for_with_except_asyncio_timeout_error",
        """
        import asyncio

        async def slow():
            await asyncio.sleep(5)
            return "done"

        try:
            result = await asyncio.wait_for(slow(), timeout=0.01)
        except asyncio.TimeoutError:
            result = "timed out"
        try:
            await asyncio.wait_for(slow(), 0.01)
        except TimeoutError as e:
            print("builtin too:", type(e).__name__)
        result
        """,
    ),
    case(
        "percent_and_format_method",
        """
        name, count, ratio = "widgets", 42, 0.12345
        print("%s: %d items (%.1f%%)" % (name, count, ratio * 100))
        print("%(n)s=%(c)05d" % {"n": name, "c": count}, "%-6s|%6.2f|" % ("ab", 3.14159))
        print("{}: {:>5} items, {:.2%}".format(name, count, ratio), "{0}{1}{0}".format("a", "b"))
        print("{name} has {count:,}".format(name=name, count=1234567), "{:08.3f}".format(-3.5))
        e = KeyError("k")
        print("{0.__class__.__name__}: {0}".format(e), "{0.__name__}".format(len))
        print("{f.__qualname__}".format(f=str.upper))
        """,
    ),
    case(
        "typing_annotations_on_helpers",
        """
        from typing import Any, Callable, Dict, List, Literal, Optional, Tuple, TypedDict, Union

        class Row(TypedDict):
            name: str
            score: float

        Mode = Literal["fast", "slow"]

        def top(rows: List[Dict[str, Any]], key: str = "score", n: int = 2) -> List[Dict[str, Any]]:
            return sorted(rows, key=lambda r: r[key], reverse=True)[:n]

        def parse(value: Union[str, int]) -> Optional[int]:
            try:
                return int(value)
            except (TypeError, ValueError):
                return None

        def run(mode: Mode = "fast", hook: Callable[[str], str] | None = None) -> Tuple[str, int]:
            return (hook or str.upper)(mode), len(mode)

        rows: list[Row] = [{"name": "a", "score": 1.0}, {"name": "b", "score": 3.0}, {"name": "c", "score": 2.0}]
        print(top(rows), parse("12"), parse("x"), run(), run("slow", str.title))
        """,
    ),
    case(
        "itemgetter_counter_most_common_and_groupby",
        """
        import itertools
        from collections import Counter, defaultdict
        from operator import attrgetter, itemgetter

        rows = [{"city": "Paris", "temp": 18}, {"city": "Oslo", "temp": 5}, {"city": "Paris", "temp": 21}]
        rows.sort(key=itemgetter("temp"))
        counts = Counter(r["city"] for r in rows)
        words = Counter("the cat and the hat and the bat".split())
        print(counts.most_common(1), words.most_common(2), list(map(itemgetter("city", "temp"), rows)))
        by_city = defaultdict(list)
        for r in rows:
            by_city[r["city"]].append(r["temp"])
        for city, group in itertools.groupby(sorted(rows, key=itemgetter("city")), key=itemgetter("city")):
            print(city, [g["temp"] for g in group])
        print(dict(by_city), sorted([3 + 4j, 1 + 1j], key=attrgetter("imag")), attrgetter("__name__")(len))
        """,
    ),
    case(
        "datetime_strptime_and_timedelta",
        """
        from datetime import date, datetime, timedelta, timezone

        start = datetime.strptime("2024-03-15 10:30", "%Y-%m-%d %H:%M")
        later = start + timedelta(days=3, hours=2)
        print(later.isoformat(), later.strftime("%A %d %B %Y"), (later - start).total_seconds())
        print(date(2024, 1, 31) + timedelta(days=1), date.fromisoformat("2024-02-29").weekday())
        print(datetime(2024, 5, 1, tzinfo=timezone.utc).astimezone(timezone(timedelta(hours=2))).isoformat())
        deadline = datetime(2024, 1, 1) - timedelta(weeks=1)
        print(deadline.date(), timedelta(minutes=90) // timedelta(hours=1), str(timedelta(seconds=3725)))
        """,
    ),
    case(
        "error_and_function_names_through_dunders",
        """
        class APIError(Exception):
            \"\"\"An API call failed.\"\"\"

            def __init__(self, status: int, message: str):
                super().__init__(f"{status}: {message}")
                self.status = status

        class NotFound(APIError):
            pass

        class ValidationError(Exception):
            def __init__(self, field, message):
                Exception.__init__(self, f"{field}: {message}")
                self.field = field

        def risky(n):
            \"\"\"Fails for small n.\"\"\"
            if n == 0:
                raise ValueError("zero")
            if n == 1:
                raise NotFound(404, "missing")
            if n == 2:
                raise ValidationError("age", "negative")
            return 1 / (n - 3)

        seen = {}
        for n in range(4):
            try:
                risky(n)
            except Exception as e:
                seen[n] = type(e).__name__
                print(f"{n}: {e.__class__.__name__} {e.__class__.__qualname__} {e!r} {type(e).__module__}")
        print(seen, risky.__name__, risky.__qualname__, risky.__doc__, risky.__module__)
        print(APIError.__name__, APIError.__doc__, NotFound.__doc__, NotFound.__module__, ValueError.__name__)
        print(type(seen).__name__, seen.__class__.__name__, (1).__class__ is int, [].__class__ is list)
        print(type(None).__name__, type(len).__name__, len.__name__, print.__name__, str.upper.__qualname__)
        print(getattr(risky, "__name__", "?"), getattr(3, "__name__", "no name"), hasattr(risky, "__doc__"))
        print(isinstance(NotFound(1, "x"), APIError.__class__), list.__doc__ == [].__doc__, list.__name__)
        """,
    ),
    case(
        "names_of_methods_nested_functions_and_classes",
        """
        import functools

        class Inventory:
            \"\"\"Holds items.\"\"\"

            class Entry:
                pass

            def add(self, name: str) -> "Inventory":
                return self

            def __repr__(self):
                return f"{self.__class__.__name__}()"

        def outer():
            def inner():
                pass

            return inner

        def timed(fn):
            @functools.wraps(fn)
            async def wrapper(*args, **kwargs):
                print(f"calling {fn.__name__}")
                return await fn(*args, **kwargs)

            return wrapper

        @timed
        async def load(n: int) -> list:
            \"\"\"Load n things.\"\"\"
            return list(range(n))

        print(Inventory(), Inventory.__qualname__, Inventory.add.__qualname__, Inventory.Entry.__qualname__)
        print(outer().__qualname__, outer.__name__, Inventory.add.__name__, Inventory().add.__name__)
        print(await load(3), load.__name__, load.__qualname__, load.__doc__)
        print([f.__name__ for f in (outer, timed, load)], Inventory.__module__, Inventory().__module__)
        """,
    ),
    case(
        "main_guard_runs",
        """
        async def main():
            return sum(range(5))

        if __name__ == "__main__":
            print("main:", await main())
        print(__name__)
        """,
    ),
    case(
        "retry_helper_with_exception_names",
        """
        import asyncio

        attempts = 0

        async def flaky(x: int) -> int:
            global attempts
            attempts += 1
            if attempts < 3:
                raise ConnectionError(f"attempt {attempts} refused")
            return x * 10

        async def with_retry(fn, *args, retries: int = 4, delay: float = 0.0, **kwargs):
            last: Exception | None = None
            for attempt in range(1, retries + 1):
                try:
                    return await fn(*args, **kwargs)
                except (ConnectionError, TimeoutError) as e:
                    last = e
                    print(f"{fn.__name__} attempt {attempt} failed with {e.__class__.__name__}: {e}")
                    await asyncio.sleep(delay * attempt)
            raise RuntimeError(f"{fn.__name__} failed after {retries} retries") from last

        print(await with_retry(flaky, 4))
        try:
            attempts = -5
            await with_retry(flaky, 1, retries=2)
        except RuntimeError as err:
            print("gave up:", err, type(err).__name__)
        """,
    ),
    case(
        "abc_abstract_base_class",
        """
        from abc import ABC, abstractmethod

        class Shape(ABC):
            @abstractmethod
            def area(self) -> float: ...

            def describe(self):
                return f"{type(self).__name__} of area {self.area()}"

        class Square(Shape):
            def __init__(self, side):
                self.side = side

            def area(self):
                return self.side**2

        try:
            Shape()
        except TypeError as e:
            print("refused:", e)
        print(Square(3).describe(), isinstance(Square(1), Shape))
        """,
    ),
    case(
        "logging_below_the_level_prints_nothing",
        """
        import logging

        logger = logging.getLogger("sandbox_language_case")
        logger.debug("hidden %s", 1)
        logger.info("hidden too")
        print(logger.isEnabledFor(logging.DEBUG), logger.getEffectiveLevel(), logging.INFO, logging.ERROR)
        """,
    ),
    case(
        "traceback_format_exc_in_an_except_block",
        """
        import traceback

        def parse(text):
            return int(text)

        try:
            parse("twelve")
        except ValueError:
            lines = traceback.format_exc().splitlines()
            print(lines[0])
            print(lines[-1])
        try:
            {}["missing"]
        except KeyError as e:
            print(traceback.format_exception_only(e)[-1].strip(), traceback.format_exception(e)[-1].strip())
        print(repr(traceback.format_exc()))
        """,
    ),
    case(
        "sys_constants_and_stdout_write",
        """
        import sys

        sys.stdout.write("progress: 1/2\\n")
        sys.stdout.flush()
        print(sys.maxsize > 2**31, sys.version_info >= (3, 8), sys.version_info.major)
        print(sys.byteorder in ("little", "big"))
        n = sys.stdout.write("done\\n")
        n
        """,
    ),
    case(
        "json_encoder_subclass_with_default",
        """
        import json
        from datetime import date

        class Encoder(json.JSONEncoder):
            def default(self, o):
                if isinstance(o, (set, frozenset)):
                    return sorted(o)
                if isinstance(o, date):
                    return o.isoformat()
                return super().default(o)

        print(json.dumps({"tags": {"b", "a"}, "when": date(2024, 5, 1)}, cls=Encoder, sort_keys=True))
        try:
            json.dumps({"x": object()}, cls=Encoder)
        except TypeError as e:
            print("TypeError:", e)
        json.dumps([{1, 2}], cls=Encoder, indent=2)
        """,
    ),
    case(
        "vars_and_format_fields_with_attributes",
        """
        class Point:
            def __init__(self, x, y, **extra):
                self.x, self.y = x, y
                for key, value in extra.items():
                    setattr(self, key, value)

        p = Point(1, 2, label="A")
        print(vars(p), sorted(vars(p)))
        print("{0.x},{0.y} {0.label}".format(p), "{.x}/{.y}".format(p, p), "{.real} {[1]}".format(5, "ab"))
        print("{p.label}: {p.x}".format(p=p), "{:>{}}|".format("r", 3))
        try:
            "{0} {}".format(1, 2)
        except ValueError as e:
            print(e)
        vars(p)
        """,
    ),
    case(
        "tasks_and_main_take_turns_as_in_cpython",
        """
        import asyncio

        order = []

        async def worker(n):
            order.append(f"start {n}")
            await asyncio.sleep(0)
            order.append(f"end {n}")
            return n

        first = asyncio.create_task(worker(1))
        order.append("main before")
        await asyncio.sleep(0)
        order.append("main after one turn")
        second = asyncio.create_task(worker(2))
        done = await first
        order.append(f"first gave {done}")
        print(await second, order)
        """,
    ),
    case(
        "tasks_inherit_the_mains_decimal_context",
        """
        import asyncio
        import decimal

        async def third():
            return str(decimal.Decimal(1) / 3)

        with decimal.localcontext() as ctx:  # not the inherited context itself: plain CPython shares it
            ctx.prec = 5
            inherited = await asyncio.create_task(third())
            with decimal.localcontext(prec=3):
                inner = await asyncio.gather(third())
        [inherited, inner, str(decimal.Decimal(2) / 3)]
        """,
    ),
    case(
        "int_arithmetic_fast_paths_give_cpython_values_and_errors",
        """
        def show(label, f):
            try:
                print(label, repr(f()))
            except Exception as e:
                print(label, type(e).__name__, e)

        i, j, big, neg, flag, half = 7, 3, 2**70, -5, True, 2.5
        edge = 1073741822
        show("mod", lambda: (i % j, big % j, neg % j, i % half, 7 % j, 7.5 % j, flag % 2))
        show("mod by zero", lambda: i % 0)
        show("mod of a str name", lambda: (lambda t: t % i)("%03d"))
        show("mul", lambda: (i * i, i * j, neg * edge, edge * edge, -edge * edge, big * big, i * big))
        show("mul literal", lambda: (i * 3, 3 * i, edge * 1073741822, i * 1073741823, i * 2.0, 0.5 * i))
        show("mul bool", lambda: (flag * i, i * flag, flag * flag))
        show("mul str", lambda: (i * "ab", "ab" * j))
        show("mul str by float", lambda: "ab" * 2.0)
        show("mul list by float literal", lambda: 2.0 * [1])
        show("add", lambda: (i + j, i + big, big + i, i + half, i + 1, 1.5 + i, flag + flag))
        show("add int and str", lambda: i + "a")
        show("add str and int literal", lambda: (lambda s: s + 1)("a"))
        show("add list and int literal", lambda: 1 + [1])
        t = 0
        for k in range(-3, 2000, 7):
            if k % 3:
                t += k * k
        print("loop", t)
        x = 1.5
        x += 2
        y = 2**40
        y += y
        z = flag
        z += 1
        s = "a"
        s += "b" * 2
        items = [1]
        items += (2, 3)
        items += range(2)
        print("iadd", x, y, z, s, items)
        try:
            items += 1
        except TypeError as e:
            print("iadd list and int", e)
        try:
            s += 1
        except TypeError as e:
            print("iadd str and int", e)
        try:
            undefined_name * 2
        except NameError as e:
            print("unbound", e)
        [t, x, y, s, items]
        """,
    ),
    case(
        "augmented_add_evaluates_like_cpython",
        """
        def rebinding():
            t = 1
            seen = []

            def bump():
                nonlocal t
                seen.append(t)
                t = 100
                return 5

            t += bump()
            return t, seen

        calls = []

        def once(n):
            calls.append(n)
            return n * 2

        total = 10
        total += once(3)
        total += once(total) * once(1)

        class Acc:
            def __init__(self):
                self.n = 0

            def __iadd__(self, other):
                self.n += other
                return self

            def __radd__(self, other):
                return f"radd {other}"

            def __rmul__(self, other):
                return f"rmul {other}"

            def __rmod__(self, other):
                return f"rmod {other}"

        acc = Acc()
        acc += 2
        acc += 3
        four = 4
        print(rebinding(), total, calls, acc.n, four + Acc(), four * Acc(), four % Acc(), 2.0 * Acc(), 3 % Acc())

        class Body:
            n = 3
            n += n * n
            m = n % 5 + n

        print(Body.n, Body.m)
        [total, acc.n, Body.n]
        """,
    ),
    case(
        "for_targets_unpack_like_cpython",
        """
        for a, (b, *c) in [(1, (2, 3, 4)), (5, (6,))]:
            print(a, b, c)
        print([x + y for x, y in zip(range(3), range(3, 6))], {k: v for k, v in {"a": 1}.items()})
        print(sum(a * b for a, b in enumerate(range(2000))), [*(v for _, v in enumerate("ab"))])
        for bad in ([(1, 2, 3)], [(1,)], [5]):
            try:
                for a, b in bad:
                    pass
            except (ValueError, TypeError) as e:
                print(type(e).__name__, e)
        try:
            for x in 5:
                pass
        except TypeError as e:
            print(e)
        it = iter(range(10))
        for x in it:
            if x == 3:
                break
        print(list(it))

        def gen():
            yield 1
            yield 2

        for i, v in enumerate(gen()):
            print(i, v)
        for i in range(3):
            pass
        else:
            print("else", i)
        n = 0
        while n < 5:
            n += 1
        [a, b, list(it), n]
        """,
    ),
    case(
        "tuple_assignment_evaluates_its_value_once",
        """
        calls = []

        def pair():
            calls.append(len(calls))
            return [1, 2]

        a, b = c, d = pair()
        x = y, z = pair()
        first, *middle, last = range(5)
        (p, q), r = "ab", 3
        box = {}

        class Point:
            pass

        point = Point()
        box["k"], point.x, [s, t] = 1, 2, (3, 4)
        a, b = b, a
        print(calls, a, b, c, d, x, y, z, first, middle, last, p, q, r, box, point.x, s, t)
        for bad in ([1], [1, 2, 3], 5):
            try:
                u, v = bad
            except (ValueError, TypeError) as e:
                print(type(e).__name__, e)
        [calls, a, b, x, middle]
        """,
    ),
    case(
        "yield_from_keeps_send_throw_and_close",
        """
        def inner():
            got = []
            try:
                while True:
                    value = yield len(got)
                    got.append(value)
            except KeyError as e:
                yield f"caught {e}"
            finally:
                print("inner closed", got)
            return "inner done"

        def outer(source):
            result = yield from source
            print("delegated returned", result)
            yield "after"

        g = outer(inner())
        print(next(g), g.send("a"), g.send("b"), g.throw(KeyError("k")), next(g), next(g, "end"))
        g = outer(inner())
        next(g)
        g.close()

        class Echo:
            def __init__(self):
                self.n = 0
            def __iter__(self):
                return self
            def __next__(self):
                self.n += 1
                if self.n > 3:
                    raise StopIteration(self.n)
                return self.n
            def send(self, value):
                return f"echo {value}"

        g = outer(Echo())
        print(next(g), g.send("x"), list(g))

        def over(source):
            try:
                yield from source
            except ValueError as e:
                yield f"outer caught {e}"
            finally:
                print("over closed")

        for source in (range(3), [4, 5], "ab", (6,), {7: 0}.keys(), {8}, b"9", iter([10, 11])):
            print(list(over(source)))
        g = over(range(10))
        print(next(g), next(g), g.throw(ValueError("v")), next(g, "done"))
        g = over(iter("xyz"))
        next(g)
        g.close()
        g = over(range(5))
        next(g)
        try:
            g.send(None)
            g.send(1)
        except AttributeError as e:
            print("AttributeError", e)
        try:
            list(over(5))
        except TypeError as e:
            print("TypeError", e)

        def chained():
            yield from (yield from over(range(2)))
        try:
            list(chained())
        except TypeError as e:
            print("TypeError", e)
        total = 0
        def countdown(n):
            yield from range(n, 0, -1)
        [list(countdown(4)), sum(countdown(100)), max(over(range(7)))]
        """,
    ),
    case(
        "lazy_builtins_are_classes_and_iterators_have_their_names",
        """
        import itertools

        it = iter([1, 2])
        m = map(abs, [-1, -2])
        names = [
            type(x).__name__
            for x in (it, reversed([1]), iter("ab"), iter(range(3)), iter({}), iter({1}), iter((1,)), iter(b"x"))
        ]
        names += [type(x).__name__ for x in (reversed("ab"), reversed(range(2)), iter(int, 1), m, zip(), enumerate(""))]
        names += [type(x).__name__ for x in (itertools.count(), itertools.chain([1]), itertools.repeat(1, 2))]
        names += [type(x).__name__ for x in (itertools.cycle("a"), itertools.permutations("ab"), itertools.product())]
        print(names)
        print(isinstance(m, map), isinstance(filter(None, []), filter), isinstance(zip(), zip), isinstance(it, map))
        print(isinstance(enumerate([]), enumerate), isinstance(reversed("ab"), reversed))
        print(isinstance(reversed([1]), reversed), isinstance(reversed(range(1)), reversed))
        print(isinstance(m, (filter, map)), isinstance(3, map), issubclass(type(m), map), issubclass(bool, map))
        print(isinstance(m, type(m)), type(it) is type(iter([3])), iter(it) is it, type(zip()).__name__)
        print(map, filter, zip, enumerate, reversed, type(it), map.__name__, zip.__qualname__, enumerate.__module__)
        print(list(m), list(filter(None, [0, 1])), list(zip("ab", [1, 2])), list(enumerate("ab", start=1)))
        print(list(enumerate(iterable="x")), list(reversed("ab")), list(zip("ab", "c", strict=False)), next(it))
        print(sorted(map(len, ["ab", "c"])), dict(enumerate("xy")), list(map(pow, [2, 3], [2, 2])))
        for bad in (lambda: map(), lambda: map(abs), lambda: filter(None), lambda: enumerate(), lambda: reversed(3)):
            try:
                bad()
            except TypeError as e:
                print("TypeError", e)
        for make in (lambda: type(iter([]))(), lambda: type(reversed([1]))([1]), lambda: zip("a", "bc", strict=True)):
            try:
                list(make())
            except (TypeError, ValueError) as e:
                print(type(e).__name__, e)
        names
        """,
    ),
    case(
        "text_transforms_and_date_formats",
        """
        import datetime
        import hashlib
        import json
        import time
        import unicodedata
        import urllib.parse

        s = "a" + chr(92) + "b" + chr(39) + chr(34) + "é" + chr(0x1F600) + chr(7)
        print(repr(s), ascii(s), f"{s!r}", f"{s!a:>30}", "{!r} {!a}".format(b"x", s), repr(bytearray(b"'")))
        print(repr(chr(39)), repr(chr(39) * 3 + chr(34)), ascii(b"\\xff"), f"{[s]!r}", repr(s * 50000)[-20:])
        print(json.dumps(s), json.dumps(s, ensure_ascii=False), json.dumps([1, {"a": [2]}], indent=2))
        print(json.dumps({"k": [1, 2]}, indent="--"), json.dumps("x", indent=4), len(json.dumps(s * 50000)))
        print(unicodedata.normalize("NFKD", "ﬁé"), unicodedata.normalize("NFC", "e" + chr(0x301)), len(s * 50000))
        print(urllib.parse.quote("a b/é"), urllib.parse.quote_plus("a b&c"), urllib.parse.quote(b"x y", safe=""))
        d = datetime.datetime(2020, 1, 2, 3, 4, 5)
        print(d.strftime("%Y-%m-%d %H:%M"), time.strftime("%Y", time.gmtime(0)), f"{d:%b %d}", format(d.date(), "%A"))
        print(datetime.datetime.strftime(d, "%S"), datetime.time(1, 2).strftime(format="%H-%M"), "{:%y}".format(d))
        print(hashlib.new("shake_128", b"x").hexdigest(4), len(hashlib.new("shake_256").digest(length=7)))
        import re

        p = re.compile(r"(\\w)(\\d)")
        print(re.sub("", "-", "abc"), re.subn("b*", "+", "abc", count=2), p.sub(r"\\2\\1", "a1 b2"), p.subn("#", "a1"))
        print(re.sub("x", lambda m: m.group(0).upper(), "axbx"), re.sub(b"a", b"-", b"cab"), p.sub(r"\\g<1>", "c3"))
        try:
            unicodedata.normalize("XX", "a")
        except ValueError as e:
            print("ValueError", e)
        [repr(s), ascii(s), json.dumps(s)]
        """,
    ),
    case(
        "star_unpacking_everywhere",
        """
        r = range(3)
        a = [*r, *"ab"]
        t = (*r,)
        s = {*r, *[5]}
        first, *rest = [*a]
        def f(*args, **kwargs):
            return args, kwargs
        print(a, t, s, first, rest, f(*r, *t, x=1), max(*r), [*{1: 2}], [*(i for i in r)], print(*r, sep="-"))
        [a, f(*a, **{"k": [*r]})]
        """,
    ),
    case(
        "collections_from_lazy_sources_and_mappings",
        """
        import collections
        import collections.abc

        class M(collections.abc.Mapping):
            def __iter__(self):
                return iter(["a", "b"])
            def __len__(self):
                return 2
            def __getitem__(self, k):
                return 3

        def gen(n):
            yield from range(n)

        d = {"x": 1, "y": 2}
        print(dict(collections.Counter(M())), collections.OrderedDict(M()), list(M()), sorted(set(d.items())))
        print(tuple(d.values()))
        print(list(gen(3)), tuple(map(str, gen(2))), frozenset(filter(None, gen(3))), sorted(gen(3), reverse=True))
        print(bytes(gen(3)), bytearray(x for x in b"ab"), collections.deque(gen(5), maxlen=2), list(zip(gen(2), "ab")))
        print(collections.Counter(c for c in "abca"), collections.UserList(gen(2)), list(collections.deque(gen(3))))
        [list(gen(4)), sorted(collections.Counter("hello").items())]
        """,
    ),
    case(
        "growing_methods_and_itertools_copies",
        """
        import collections
        import itertools

        a = [1]
        a.extend((2, 3))
        list.extend(a, range(4, 6))
        a += range(2)
        d = collections.deque([1], maxlen=3)
        d.extend(range(5))
        d.extendleft("ab")
        d += [7]
        c = collections.Counter("ab")
        c.update("abb")
        c.update({"z": 2}, y=1)
        s = {1}
        s.update(range(3), [9])
        u = collections.UserList([0])
        u.extend(range(2))
        class D(dict):
            pass
        print(a, d, sorted(c.items()), s, u, dict.fromkeys("ab", 0), D.fromkeys(range(2)), {0}.union(range(3)))
        print(sorted({1, 2}.symmetric_difference(range(3))), collections.OrderedDict.fromkeys("xy", 1))
        print(list(itertools.permutations(iter([1, 2, 3]), 2)), list(itertools.combinations(range(4), r=2)))
        print(list(itertools.combinations_with_replacement("ab", 3)), list(itertools.product(range(2), iter("xy"))))
        print(list(itertools.permutations([], 0)), list(itertools.combinations("a", 5)))
        print(list(itertools.permutations("ab")))
        try:
            itertools.combinations("ab")
        except TypeError as e:
            print("TypeError", e)
        try:
            itertools.permutations("ab", -1)
        except ValueError as e:
            print("ValueError", e)
        [a, list(d), len(list(itertools.product("ab", repeat=3)))]
        """,
    ),
    case(
        "slice_assignment_that_grows_shrinks_or_keeps_size",
        """
        import itertools
        x = list(range(6))
        x[len(x):] = x
        x[:0] = (9, 8)
        x[2:5] = []
        x[1:1] = range(3)
        x[10:2] = [7]
        x[-100:1] = iter("ab")
        x[::2] = [0] * len(x[::2])
        x[::-3] = itertools.repeat(5, len(x[::-3]))
        x[len(x):] += [1, 2]
        print(x)
        b = bytearray(b"abc")
        b[1:2] = b"xyz"
        b[len(b):] = b
        b[::-1] = bytes(range(len(b)))
        print(b)
        class L(list):
            pass
        lst = L([1, 2])
        lst[1:] = (3, 4)
        print(lst, type(lst).__name__)
        e = []
        e[::-1] = []
        e[5:] = (i for i in range(3))
        errors = []
        for target, key, value in ((x, slice(None, None, 2), [1]), (x, slice(0, 1), 5), (x, slice(0, 1, 0), [])):
            try:
                target[key] = value
            except (ValueError, TypeError) as err:
                errors.append(f"{type(err).__name__}: {err}")
        try:
            x[::2] = [1]
        except ValueError as err:
            errors.append(str(err))
        try:
            x[0:1] = 5
        except TypeError as err:
            errors.append(str(err))
        try:
            b[0:1] = "s"
        except TypeError as err:
            errors.append(str(err))
        [x, list(b), e, errors]
        """,
    ),
    case(
        "random_and_heapq_counts_as_in_cpython",
        """
        import heapq, random
        random.seed(5)
        print(random.choices("abc", k=5), random.choices(range(9), weights=[1] * 9, k=3), random.sample(range(100), 4))
        print(random.sample(population="abcdef", k=2), random.getrandbits(40), random.randbytes(3).hex())
        r = random.Random(3)
        print(r.choices("xy", k=4), r.sample(range(50), k=3), r.getrandbits(9), random.Random.getrandbits(r, 5))
        print(random.choices([1]), r.randrange(10**6), r.randint(1, 6), r.choice("pqr"))
        rows = [("a", 3), ("b", 1), ("c", 3), ("d", 2)]
        print(heapq.nlargest(2, rows, key=lambda row: row[1]), heapq.nsmallest(3, rows, key=lambda row: row[1]))
        print(heapq.nlargest(10, [5, 1, 4]), heapq.nsmallest(2, (n * n for n in range(-3, 3))))
        print(heapq.nlargest(3, range(10**5)), heapq.nsmallest(1, "hello"), heapq.nlargest(0, [1]))
        try:
            random.choices("ab", k="2")
        except TypeError as err:
            print("TypeError", err)
        try:
            random.sample(range(3), 5)
        except ValueError as err:
            print("ValueError", err)
        heapq.nlargest(2, {"x": 1, "y": 2, "z": 0})
        """,
    ),
    case(
        "percent_templates_with_reprs_as_in_cpython",
        """
        s = "it's"
        print("%r %a %s" % (s, "é", b"b\\\\x"), "%(k)r|%(k)s|%(n)5d" % {"k": s, "n": 42}, "%%r %r" % (1,))
        print("%5.3r|%-6a|%*r" % ("abcdef", "ü", 4, "x"), b"%r %a %s" % ("é", b"q", b"raw"), "%r" % [s])
        print("%s" % {"a": 1}, "%r" % ({"a": 1},), "%(a)s" % {"a": b"\\\\"})
        errors = []
        for template, args in (("%(a)r", (1,)), ("%r %r", (1,)), ("%(a)r", {}), ("%r", ()), ("%(a)r", "xyz")):
            try:
                template % args
            except (TypeError, KeyError, ValueError) as err:
                errors.append(f"{type(err).__name__}: {err}")
        errors
        """,
    ),
    case(
        "json_encoder_and_separators_as_in_cpython",
        """
        import json
        data = {"b": [1, 2, {"c": None}], "a": "é\\\\", "n": []}
        print(json.JSONEncoder(indent=2).encode(data))
        print(json.JSONEncoder(indent="--", sort_keys=True).encode(data))
        print("".join(json.JSONEncoder(separators=(",", ":")).iterencode(data)), json.JSONEncoder().encode("é"))
        print(json.dumps(data, separators=(";", "="), indent=1), json.dumps([1, 2], separators=[" ,", " : "]))
        class E(json.JSONEncoder):
            def default(self, o):
                return sorted(o)
        e = E(indent=1)
        print(e.encode({"s": {3, 1}}), json.dumps({"s": {2}}, cls=E), e.indent, isinstance(e, json.JSONEncoder))
        print(json.JSONEncoder(ensure_ascii=False).encode(["é"]), json.JSONEncoder().encode(1.5))
        try:
            json.JSONEncoder().encode({1j: 1})
        except TypeError as err:
            print("TypeError", err)
        type(json.JSONEncoder()).__name__
        """,
    ),
    case(
        "re_sub_with_a_function_as_in_cpython",
        """
        import re
        words = "one two three"
        print(re.sub(r"\\w+", lambda m: m.group(0).upper(), words), re.subn("o", lambda m: "0", words))
        print(re.compile(rb"(a)(b)?").sub(lambda m: m.group(1) * 3, b"ab a"), re.sub("x*", lambda m: "-", "abc"))
        print(re.compile("e").subn(lambda m: "", words, count=1), re.sub("t", lambda m: "TT", words, 1))
        try:
            re.sub("o", lambda m: 1, words)
        except TypeError as err:
            print("TypeError", err)
        re.sub("(?P<w>\\\\w)", lambda m: m["w"] + ".", "ab")
        """,
    ),
    case(
        "decimal_class_as_in_cpython",
        """
        import decimal, json
        from decimal import Decimal
        class Money(Decimal):
            pass
        m = Money("1.25")
        d = Decimal("2.50")
        print(type(d) is Decimal, type(d + 1) is Decimal, type(m).__name__, type(m + 1) is Decimal)
        print(isinstance(m, Decimal), isinstance(d, Money))
        print(issubclass(Money, Decimal), repr(Decimal), Decimal.__name__, str(Decimal.from_float(0.5)), repr(m))
        print(str(Decimal(value="3", context=None)), Decimal((1, (1, 5), -1)))
        print(json.loads("[1.10]", parse_float=Decimal))
        print(sorted(["1.5", "1e3", "-2"], key=Decimal), list(map(Decimal, ["7", "8.0"])), type(d)("9") + 1)
        match d:
            case Decimal():
                print("a Decimal")
        print(int(Decimal("1e20")), format(Decimal("1e-5"), "f"), str(Decimal("1e999999")), Decimal("NaN").is_nan())
        [str(m * 2), isinstance(d, (int, Decimal)), decimal.getcontext().Emax, decimal.Context().Emin]
        """,
    ),
]


@pytest.mark.parametrize("isolation", ISOLATIONS)
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
async def test_script_prints_and_returns_what_cpython_does(sb: Sandbox, case: Case) -> None:
    """The sandbox's stdout and value equal plain CPython's for the same script."""
    expected_stdout, expected_value = await anyio.to_thread.run_sync(run_in_cpython, case.code)
    try:
        result = await sb.run(case.code)
    except BaseException as exc:  # noqa: BLE001  # a run must never raise into the host
        pytest.fail(f"run raised instead of returning a result: {exc!r}")
    assert result.error is None, f"{result.error!r}\n{result.error.traceback if result.error else ''}"
    assert result.stdout == expected_stdout
    assert result.value == expected_value


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_reference_wrapper_runs_every_script(case: Case) -> None:
    """Every script runs cleanly in plain CPython, so a sandbox failure is the sandbox's."""
    run_in_cpython(case.code)
