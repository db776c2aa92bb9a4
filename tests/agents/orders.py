"""The orders desk the framework agents in tests/agents serve: an in-memory
orders table and its two tools, shared by every agent here.

Each conversation gets its own `OrderBook` (a fresh copy of the table), so a
cancellation in one conversation leaves the next one's orders as they were.
The tools answer JSON text; a refusal is an `{"error": ...}` object, not an
exception, so the model sees it as the tool's output.
"""

import copy
import json

ORDERS = {
    "#A1001": {
        "status": "pending",
        "items": "2 x merino hiking socks",
        "total": "$24.00",
        "placed": "2026-11-21",
    },
    "#A1002": {
        "status": "shipped",
        "items": "1 x trail lantern",
        "total": "$39.00",
        "placed": "2026-11-17",
        "carrier": "Parcelink",
        "tracking_number": "PL4471902",
    },
    "#A1003": {
        "status": "delivered",
        "items": "1 x down blanket",
        "total": "$89.00",
        "placed": "2026-11-10",
        "delivered_on": "2026-11-20",
    },
    "#A1004": {
        "status": "pending",
        "items": "1 x camp stove",
        "total": "$64.50",
        "placed": "2026-11-23",
    },
    "#A1005": {
        "status": "cancelled",
        "items": "3 x tent pegs",
        "total": "$9.00",
        "placed": "2026-11-05",
        "refund": "$9.00 to the original card",
    },
}

# The tools' JSON schemas, as function parameters (OpenAI's shape).
GET_ORDER_STATUS = {
    "name": "get_order_status",
    "description": "The status of an order: pending, shipped (with carrier and tracking number), delivered (with the day) or cancelled.",
    "parameters": {
        "type": "object",
        "properties": {
            "order_id": {"type": "string", "description": "The order's id, e.g. #A1001."}
        },
        "required": ["order_id"],
        "additionalProperties": False,
    },
}
CANCEL_ORDER = {
    "name": "cancel_order",
    "description": "Cancel an order and refund it to the original card. Only a pending order can be cancelled.",
    "parameters": {
        "type": "object",
        "properties": {
            "order_id": {"type": "string", "description": "The order's id, e.g. #A1001."},
            "reason": {"type": "string", "description": "Why the customer cancels, in their words."},
        },
        "required": ["order_id", "reason"],
        "additionalProperties": False,
    },
}
TOOLS = [GET_ORDER_STATUS, CANCEL_ORDER]

INSTRUCTIONS = (
    "You are the orders desk of Lantern & Loom. Identify the customer's order, "
    "look it up with get_order_status, and cancel it with cancel_order only when "
    "the customer asks and the order is pending. Tell the customer what the tools "
    "answered."
)


class OrderBook:
    """One conversation's copy of the orders table and the two tools over it."""

    def __init__(self):
        self.orders = copy.deepcopy(ORDERS)

    def get_order_status(self, order_id: str) -> str:
        order = self.orders.get(order_id.strip())
        if order is None:
            return json.dumps({"error": f"no order {order_id!r}; order ids look like #A1001"})
        return json.dumps({"order_id": order_id.strip(), **order})

    def cancel_order(self, order_id: str, reason: str) -> str:
        order_id = order_id.strip()
        order = self.orders.get(order_id)
        if order is None:
            return json.dumps({"error": f"no order {order_id!r}; order ids look like #A1001"})
        if order["status"] != "pending":
            return json.dumps(
                {"error": f"order {order_id} is {order['status']}; only a pending order can be cancelled"}
            )
        if not reason.strip():
            return json.dumps({"error": "a reason is required to cancel an order"})
        order["status"] = "cancelled"
        order["cancel_reason"] = reason
        order["refund"] = f"{order['total']} to the original card"
        return json.dumps(
            {
                "order_id": order_id,
                "status": "cancelled",
                "refund": order["refund"],
                "confirmation": "CX-" + order_id.lstrip("#A"),
            }
        )

    def call(self, name: str, arguments: str) -> str:
        """Run a tool by name with its JSON arguments; errors are the output."""
        try:
            args = json.loads(arguments or "{}")
        except json.JSONDecodeError as e:
            return json.dumps({"error": f"arguments are not JSON: {e}"})
        if not isinstance(args, dict):
            return json.dumps({"error": "arguments must be a JSON object"})
        try:
            if name == "get_order_status":
                return self.get_order_status(str(args["order_id"]))
            if name == "cancel_order":
                return self.cancel_order(str(args["order_id"]), str(args["reason"]))
        except KeyError as e:
            return json.dumps({"error": f"missing argument {e}"})
        return json.dumps({"error": f"no tool {name!r}; tools: get_order_status, cancel_order"})
