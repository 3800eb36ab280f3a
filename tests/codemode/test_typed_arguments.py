# Snapshots hold the one-line messages the model reads verbatim, which are longer than a source line.
# ruff: noqa: E501
"""Python tools get their arguments converted to their annotations, and `ToolError` speaks to the model."""

from __future__ import annotations

import dataclasses
import datetime
import enum
from typing import TYPE_CHECKING, Annotated, Any, Literal

import pydantic
from inline_snapshot import snapshot
from typing_extensions import TypedDict  # pydantic reads `typing.TypedDict` only on Python 3.12+

from codemode import Catalog, CodeMode, ToolError

if TYPE_CHECKING:
    from codemode import ExecuteResult


class Seat(enum.Enum):
    WINDOW = "window"
    AISLE = "aisle"


class Passenger(pydantic.BaseModel):
    name: str
    age: int


@dataclasses.dataclass
class Address:
    street: str
    city: str


class Card(TypedDict):
    number: str
    expires: datetime.date


async def execute(code: str, catalog: Catalog, **options: object) -> ExecuteResult:
    """Run `code` once in a fresh inline `CodeMode` over `catalog`."""
    async with CodeMode(catalog, isolation="inline", **options) as cm:  # type: ignore[arg-type]  # options as the test passes them
        return await cm.execute(code, cm.new_state())


def booking_catalog(seen: list[object]) -> Catalog:
    catalog = Catalog()

    @catalog.tool
    async def book(
        passenger: Passenger, when: datetime.date, seat: Seat, address: Address | None = None
    ) -> dict[str, object]:
        """Book a seat on the flight of a day."""
        seen.append((passenger, when, seat, address))
        return {"passenger": passenger, "when": when, "seat": seat, "address": address}

    return catalog


async def test_arguments_reach_a_python_handler_as_its_annotated_types() -> None:
    """A pydantic model, a date, an Enum and a dataclass arrive converted, and come back as JSON data."""
    seen: list[object] = []
    code = (
        'return await tools.book(passenger={"name": "Ada", "age": 36}, when="2026-12-01", seat="window",'
        ' address={"street": "1 Main St", "city": "Oslo"})'
    )

    result = await execute(code, booking_catalog(seen))

    assert result.ok, result.text
    assert seen == [
        (
            Passenger(name="Ada", age=36),
            datetime.date(2026, 12, 1),
            Seat.WINDOW,
            Address(street="1 Main St", city="Oslo"),
        )
    ]
    assert result.run.value == {
        "passenger": {"name": "Ada", "age": 36},
        "when": "2026-12-01",
        "seat": "window",
        "address": {"street": "1 Main St", "city": "Oslo"},
    }


async def test_a_value_that_does_not_convert_fails_before_the_handler_runs() -> None:
    """`when="next tuesday"` is a validation error naming the parameter; the handler is never called."""
    seen: list[object] = []
    code = 'await tools.book(passenger={"name": "Ada", "age": 36}, when="next tuesday", seat="window")'

    result = await execute(code, booking_catalog(seen))

    assert seen == []
    assert result.run.error is not None
    assert result.run.error.message == snapshot(
        'ToolError: tools.book(): argument `when`: Input should be a valid date or datetime, invalid character in year (given "next tuesday"). Signature: book(*, passenger: Passenger, when: str, seat: Literal["window", "aisle"], address: Address | None = None) -> dict[str, Any] (line 1)'
    )


async def test_typeddict_literal_union_and_annotated_constraints_convert_and_check() -> None:
    """A TypedDict with a date inside, a Literal, a union and an `Annotated` bound: converted, and bounds enforced."""
    seen: list[object] = []
    catalog = Catalog()

    @catalog.tool
    def pay(
        card: Card,
        mode: Literal["now", "later"],
        amount: Annotated[float, pydantic.Field(gt=0, le=1000)],
        ref: int | str = 0,
    ) -> str:
        """Pay an amount with a card."""
        seen.append((card, mode, amount, ref))
        return "paid"

    ok = await execute(
        'return await tools.pay(card={"number": "4111", "expires": "2027-01-31"}, mode="now", amount=5, ref="x7")',
        catalog,
    )
    too_much = await execute(
        'await tools.pay(card={"number": "4111", "expires": "2027-01-31"}, mode="now", amount=5000)', catalog
    )
    bad_date = await execute(
        'await tools.pay(card={"number": "4111", "expires": "soon"}, mode="now", amount=5)', catalog
    )

    assert ok.ok, ok.text
    assert seen == [({"number": "4111", "expires": datetime.date(2027, 1, 31)}, "now", 5.0, "x7")]
    assert too_much.run.error is not None
    assert "argument `amount`" in too_much.run.error.message
    assert "1000" in too_much.run.error.message
    assert bad_date.run.error is not None
    assert bad_date.run.error.message.startswith(
        "ToolError: tools.pay(): argument `card.expires`: Input should be a valid date"
    )


async def test_a_tool_error_raised_by_a_handler_reaches_the_model_as_written() -> None:
    """`raise ToolError("...")` in a handler is the model's message, with no doubled prefix, even with `hide_errors`."""
    catalog = Catalog()

    @catalog.tool
    def refund(order_id: str) -> str:
        """Refund an order."""
        raise ToolError(f"order {order_id} was already refunded; look it up with get_order")

    shown = await execute('await tools.refund(order_id="A1")', catalog)
    hidden = await execute('await tools.refund(order_id="A1")', catalog, hide_errors=True)
    caught = await execute(
        'try:\n    await tools.refund(order_id="A1")\nexcept ToolError as e:\n    return str(e)', catalog
    )

    assert shown.run.error is not None
    assert shown.run.error.message == snapshot(
        "ToolError: order A1 was already refunded; look it up with get_order (line 1)"
    )
    assert hidden.run.error is not None
    assert hidden.run.error.message == shown.run.error.message
    assert caught.run.value == "order A1 was already refunded; look it up with get_order"


async def test_hide_errors_still_hides_other_exceptions() -> None:
    """Only `ToolError` is written for the model: a `KeyError`'s message stays hidden with `hide_errors`."""
    catalog = Catalog()

    @catalog.tool
    def lookup(key: str) -> str:
        """Look a key up."""
        raise KeyError("secret-internal-key")

    hidden = await execute('await tools.lookup(key="a")', catalog, hide_errors=True)

    assert hidden.run.error is not None
    assert hidden.run.error.message == snapshot("ToolError: KeyError (line 1)")


async def test_a_wrong_argument_name_gets_the_closest_parameter() -> None:
    """A misspelt keyword is refused with "did you mean" and the right name."""
    catalog = Catalog()

    @catalog.tool
    def get_customer(customer_id: str, include_orders: bool = False) -> str:
        """Get a customer."""
        return customer_id

    result = await execute('await tools.get_customer(customerid="c1")', catalog)

    assert result.run.error is not None
    assert result.run.error.message == snapshot(
        "ToolError: tools.get_customer(): unexpected argument `customerid`; did you mean `customer_id`? Signature: get_customer(*, customer_id: str, include_orders: bool = False) -> str (line 1)"
    )


async def test_var_keyword_parameters_untyped_or_any_take_any_keyword_and_the_stub_shows_them() -> None:
    """`**filters` and `**filters: Any` are `**kwargs: Any` in the stub, and the keywords reach the handler."""
    catalog = Catalog()

    @catalog.tool
    def filter_rows(**filters) -> dict[str, object]:  # type: ignore[no-untyped-def]  # untyped, as users write it
        """Filter rows by any column."""
        return {"filters": filters}

    @catalog.tool
    def filter_table(table: str, **filters: Any) -> dict[str, object]:
        """Filter a table by any column."""
        return {"table": table, "filters": filters}

    result = await execute(
        'return [await tools.filter_rows(city="Berlin", size=3), await tools.filter_table(table="t", city="Oslo"),\n'
        '        await tools.describe("filter_rows"), await tools.describe("filter_table")]',
        catalog,
    )

    assert result.ok, result.text
    assert result.run.value == [
        {"filters": {"city": "Berlin", "size": 3}},
        {"table": "t", "filters": {"city": "Oslo"}},
        snapshot('''\
async def filter_rows(**kwargs: Any) -> dict[str, Any]:
    """Filter rows by any column."""
    ...
'''),
        snapshot('''\
async def filter_table(*, table: str, **kwargs: Any) -> dict[str, Any]:
    """Filter a table by any column."""
    ...
'''),
    ]


class UserPatch(pydantic.BaseModel):
    email: str | None = None
    phone: str | None = None


class Shipping(TypedDict, total=False):
    street: str
    city: str


class Tags(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(extra="allow")
    color: str = ""


async def test_a_misspelt_key_inside_a_model_or_typeddict_argument_is_refused_with_did_you_mean() -> None:
    """`patch={"emial": ...}` fails naming the key and the right one; the handler never runs; `extra="allow"` takes it."""
    seen: list[object] = []
    catalog = Catalog()

    @catalog.tool
    def update_user(user_id: str, patch: UserPatch) -> str:
        """Update a user's contact details."""
        seen.append(patch)
        return "updated"

    @catalog.tool
    def set_shipping(order_id: str, address: Shipping, addresses: list[Shipping] | None = None) -> str:
        """Set an order's shipping address."""
        seen.append(address)
        return "set"

    @catalog.tool
    def tag(tags: Tags) -> dict[str, object]:
        """Tag a thing with any keys."""
        return tags.model_dump()

    model = await execute('await tools.update_user(user_id="u1", patch={"emial": "new@x"})', catalog)
    typeddict = await execute(
        'await tools.set_shipping(order_id="o1", address={"street": "Main", "citty": "Oslo"})', catalog
    )
    in_list = await execute(
        'await tools.set_shipping(order_id="o1", address={}, addresses=[{"city": "Oslo"}, {"zip": "1"}])', catalog
    )
    allowed = await execute('return await tools.tag(tags={"color": "red", "size": "L"})', catalog)

    assert seen == []
    assert [r.run.error.message if r.run.error else None for r in (model, typeddict, in_list)] == snapshot(
        [
            'ToolError: tools.update_user(): argument `patch`: unexpected key `emial`; did you mean `email`? (given {"emial": "new@x"}). Signature: update_user(*, user_id: str, patch: UserPatch) -> str (line 1)',
            'ToolError: tools.set_shipping(): argument `address`: unexpected key `citty`; did you mean `city`? (given {"street": "Main", "citty": "Oslo"}). Signature: set_shipping(*, order_id: str, address: Shipping, addresses: list[Shipping] | None = None) -> str (line 1)',
            'ToolError: tools.set_shipping(): argument `addresses.1`: unexpected key `zip`; the keys it takes: city, street (given {"zip": "1"}). Signature: set_shipping(*, order_id: str, address: Shipping, addresses: list[Shipping] | None = None) -> str (line 1)',
        ]
    )
    assert allowed.run.value == {"color": "red", "size": "L"}
