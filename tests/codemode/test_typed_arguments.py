# Snapshots hold the one-line messages the model reads verbatim, which are longer than a source line.
# ruff: noqa: E501
"""Python tools get their arguments converted to their annotations, and `ToolError` speaks to the model."""

from __future__ import annotations

import dataclasses
import datetime
import enum
from typing import TYPE_CHECKING, Annotated, Literal

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
