"""Facades over the standard library code that writes classes from names: `@dataclass` and `Enum(...)`.

`@dataclass` pastes field names into source it execs with real builtins, and `Enum(...)` puts member names
into a class namespace. Both read the names through the code's own objects if allowed to: a `str` subclass
whose `__format__`, `isidentifier` or `startswith` lies, or an annotation mapping whose iteration and
`items()` disagree. So every name is converted to a plain `str` first and checked after, every mapping is
copied into a plain `dict`, and only the copies reach the standard library. The methods `@dataclass`
generates read and write attributes by field name without the guards, so they refuse objects that are not
instances of their class (called unbound on `uuid.NAMESPACE_DNS`, a frozen `__init__` would rewrite it).
"""

from __future__ import annotations

import dataclasses
import enum
import functools
from collections.abc import Mapping
from keyword import iskeyword
from typing import TYPE_CHECKING, Any

from sandbox._compiler.names import FORBIDDEN_ATTRIBUTES
from sandbox._runtime.signals import forbid
from sandbox._runtime.sizes.text import plain
from sandbox._runtime.stdlib.copying import deepcopy

if TYPE_CHECKING:
    from collections.abc import Callable

    from sandbox._runtime.guards import Guards

_DATACLASS_OPTIONS = frozenset("init repr eq order unsafe_hash frozen match_args kw_only slots weakref_slot".split())
_GENERATED = (
    "__init__ __repr__ __eq__ __lt__ __le__ __gt__ __ge__ __hash__ __setattr__ __delattr__ "
    "__getstate__ __setstate__".split()
)


def plain_name(name: object, what: str) -> str:
    """`name` as a plain `str` (the value of a subclass, never its methods), or a TypeError."""
    if not isinstance(name, str):
        raise TypeError(f"{what} must be a string, not {type(name).__name__!r}")
    return str(plain(name))


def _field_name(name: object) -> str:
    text = plain_name(name, "a dataclass field name")
    if not text.isidentifier() or iskeyword(text) or text.startswith("__") or text in FORBIDDEN_ATTRIBUTES:
        forbid(f"a dataclass field name must be a plain identifier not starting with `__`, not {text!r}")
    return text


def _plain_annotations(cls: type) -> None:
    """Replace the class's annotations with a plain dict of checked names (as `@dataclass` will read them)."""
    namespace = vars(cls)
    annotations = namespace.get("__annotations__", {})
    if not isinstance(annotations, dict):
        raise TypeError("a dataclass's `__annotations__` must be a dict")
    fields = {_field_name(name): kind for name, kind in dict.items(annotations)}
    type.__setattr__(cls, "__annotations__", fields)
    module = namespace.get("__module__")
    if isinstance(module, str) and type(module) is not str:
        type.__setattr__(cls, "__module__", plain_name(module, "`__module__`"))


def _instances_only(cls: type, name: str, method: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(method)
    def checked(self: Any, /, *args: Any, **kwargs: Any) -> Any:
        if not any(base is cls for base in type(self).__mro__):  # `is`: a metaclass's `__eq__` may lie
            raise TypeError(f"`{cls.__name__}.{name}()` takes a {cls.__name__!r} instance, not {type(self).__name__!r}")
        return method(self, *args, **kwargs)

    return checked


def _guard_generated(cls: type, guards: Guards) -> None:
    namespace = vars(cls)
    for name in _GENERATED:
        method = namespace.get(name)
        if callable(method) and not guards.is_own(method):  # the code's own methods keep their own rules
            type.__setattr__(cls, name, _instances_only(cls, name, method))


def make_dataclasses(guards: Guards) -> dict[str, Any]:
    """The `dataclasses` facade of one run."""

    def dataclass(cls: Any = None, /, **options: Any) -> Any:
        plain_options = {}
        for key, value in options.items():
            option = plain_name(key, "a `@dataclass` option")
            if option not in _DATACLASS_OPTIONS:
                raise TypeError(f"`@dataclass` takes no option {option!r}")
            plain_options[option] = bool(value)

        def make(target: Any) -> Any:
            if not guards.is_own(target):
                forbid("`@dataclass` works only on the code's own classes")
            if isinstance(target, type) and issubclass(target, type):  # its `__eq__` and `__hash__` would be a class's
                forbid("`@dataclass` cannot be a metaclass in the sandbox: classes compare by identity")
            _plain_annotations(target)
            made = dataclasses.dataclass(target, **plain_options)
            _guard_generated(made, guards)
            return made

        return make if cls is None else make(cls)

    members = {
        name: getattr(dataclasses, name)
        for name in "field fields replace is_dataclass FrozenInstanceError InitVar KW_ONLY MISSING".split()
    }
    return {**members, "dataclass": dataclass, "asdict": asdict, "astuple": astuple}


def _is_instance(obj: object) -> bool:
    return dataclasses.is_dataclass(obj) and not isinstance(obj, type)


def asdict(obj: Any, *, dict_factory: Callable[..., Any] = dict) -> Any:
    """`dataclasses.asdict`, copying leaves with the sandbox's `deepcopy` (the real one hands out its memo)."""
    if not _is_instance(obj):
        raise TypeError("asdict() should be called on dataclass instances")
    return _converted(obj, lambda pairs: dict_factory(pairs))


def astuple(obj: Any, *, tuple_factory: Callable[..., Any] = tuple) -> Any:
    """`dataclasses.astuple`, copying leaves with the sandbox's `deepcopy`."""
    if not _is_instance(obj):
        raise TypeError("astuple() should be called on dataclass instances")
    return _converted(obj, lambda pairs: tuple_factory(value for _, value in pairs))


def _converted(obj: Any, factory: Callable[[list[tuple[str, Any]]], Any]) -> Any:
    if _is_instance(obj):
        return factory([(f.name, _converted(getattr(obj, f.name), factory)) for f in dataclasses.fields(obj)])
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):
        return type(obj)(*[_converted(value, factory) for value in obj])
    if isinstance(obj, (list, tuple)):
        return type(obj)(_converted(value, factory) for value in obj)
    if isinstance(obj, dict):
        return type(obj)((_converted(k, factory), _converted(v, factory)) for k, v in obj.items())
    return deepcopy(obj)


def _member_names(names: Any) -> list[Any]:
    """Enum's `names` argument as a plain list of plain names, or of (plain name, value) pairs."""
    if isinstance(names, str):
        return str(plain(names)).replace(",", " ").split()
    if isinstance(names, Mapping):
        return [(plain_name(key, "an Enum member name"), names[key]) for key in list(names)]
    members: list[Any] = []
    for item in list(names):
        if isinstance(item, str):
            members.append(plain_name(item, "an Enum member name"))
        else:
            name, value = item
            members.append((plain_name(name, "an Enum member name"), value))
    return members


class _EnumType(enum.EnumType):
    """Enum's metaclass, but the functional API (`Enum("Color", names)`) takes only public, plain member names."""

    def __call__(cls, value: Any, names: Any = None, *args: Any, **kwargs: Any) -> Any:
        if names is None:
            return super().__call__(value, None, *args, **kwargs)
        options = {plain_name(key, "an Enum option"): option for key, option in kwargs.items()}
        if "module" in options or "qualname" in options:
            forbid("`Enum(..., module=, qualname=)` is not allowed in the sandbox")
        members = _member_names(names)
        for member in members:
            if (member if isinstance(member, str) else member[0]).startswith("_"):
                forbid("an Enum member name must not start with `_` in the sandbox")
        return super().__call__(plain_name(value, "an Enum's name"), members, *args, **options)


def _guarded_enum(base: type[enum.Enum]) -> type:
    return _EnumType(base.__name__, (base,), _EnumType.__prepare__(base.__name__, (base,)))


ENUMS: dict[str, Any] = {
    **{name: _guarded_enum(getattr(enum, name)) for name in ("Enum", "IntEnum", "StrEnum", "Flag", "IntFlag")},
    "auto": enum.auto,
    "unique": enum.unique,
}
"""The `enum` facade: the same for every run."""
