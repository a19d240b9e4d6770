"""What each AgentDojo tool does, declared as a tool author would: effect, sensitive arguments.

AgentDojo's environment functions carry no effect class, so the benchmark declares one per
tool, from what the function does to the world — the metadata any execgraph tool carries
(``tool_spec(effect=..., sensitive_args=...)``). Nothing here names a task or an attack:

- ``read``: looks only (a search, a listing, fetching a page).
- ``write``: changes the user's own data and can be undone (a calendar event, a file).
- ``irreversible``: money, messages or data leave the user, or something is destroyed or
  given away (a payment, an email, a share, a deleted file, a changed password).

``sensitive`` are the arguments that decide *where* an effect goes or *what* it destroys
(a recipient, an account, a URL, an id to delete): the ones whose value must not be chosen
by data the run read. ``shares`` are arguments that, when not empty, send the user's data
to other people (a calendar event's participants): the call is then irreversible,
whatever the tool's base effect (the effect is the call's, not only the tool's).
``own_data`` marks tools whose output is the user's own account data (their IBAN, their
profile, today's date), not content a third party could have written; ``secrets`` names
the fields of it that must not leave unless the user asks (a passport or card number).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["DECLARATIONS", "Declared"]


@dataclass(frozen=True)
class Declared:
    """One tool's declared metadata."""

    effect: str = "read"
    sensitive: tuple[str, ...] = ()
    shares: tuple[str, ...] = ()
    own_data: bool = False
    secrets: tuple[str, ...] = ()


_R = Declared()
_OWN = Declared(own_data=True)


def _irr(*sensitive: str) -> Declared:
    return Declared("irreversible", sensitive)


def _write(*sensitive: str, shares: tuple[str, ...] = ()) -> Declared:
    return Declared("write", sensitive, shares)


_EMAIL = _irr("recipients", "cc", "bcc")
_CALENDAR_EVENT = _write("participants", shares=("participants",))

DECLARATIONS: dict[str, dict[str, Declared]] = {
    "workspace": {
        "send_email": _EMAIL,
        "delete_email": _irr("email_id"),
        "get_unread_emails": _R,
        "get_sent_emails": _R,
        "get_received_emails": _R,
        "get_draft_emails": _R,
        "search_emails": _R,
        "search_contacts_by_name": _R,
        "search_contacts_by_email": _R,
        "get_current_day": _OWN,
        "search_calendar_events": _R,
        "get_day_calendar_events": _R,
        "create_calendar_event": _CALENDAR_EVENT,
        "cancel_calendar_event": _write("event_id"),
        "reschedule_calendar_event": _write("event_id"),
        "add_calendar_event_participants": _write(
            "event_id", "participants", shares=("participants",)
        ),
        "append_to_file": _write("file_id"),
        "search_files_by_filename": _R,
        "create_file": _write(),
        "delete_file": _irr("file_id"),
        "get_file_by_id": _R,
        "list_files": _R,
        "share_file": _irr("file_id", "email"),
        "search_files": _R,
    },
    "travel": {
        "get_user_information": Declared(
            own_data=True,
            secrets=("ID Number", "Passport Number", "Bank Account Number", "Credit Card Number"),
        ),
        "get_all_hotels_in_city": _R,
        "get_hotels_prices": _R,
        "get_rating_reviews_for_hotels": _R,
        "get_hotels_address": _R,
        "get_all_restaurants_in_city": _R,
        "get_cuisine_type_for_restaurants": _R,
        "get_restaurants_address": _R,
        "get_rating_reviews_for_restaurants": _R,
        "get_dietary_restrictions_for_all_restaurants": _R,
        "get_contact_information_for_restaurants": _R,
        "get_price_for_restaurants": _R,
        "check_restaurant_opening_hours": _R,
        "get_all_car_rental_companies_in_city": _R,
        "get_car_types_available": _R,
        "get_rating_reviews_for_car_rental": _R,
        "get_car_fuel_options": _R,
        "get_car_rental_address": _R,
        "get_car_price_per_day": _R,
        "create_calendar_event": _CALENDAR_EVENT,
        "search_calendar_events": _R,
        "get_day_calendar_events": _R,
        "cancel_calendar_event": _write("event_id"),
        "reserve_hotel": _irr("hotel"),
        "reserve_car_rental": _irr("company"),
        "reserve_restaurant": _irr("restaurant"),
        "get_flight_information": _R,
        "send_email": _EMAIL,
    },
    "banking": {
        "get_iban": _OWN,
        "send_money": _irr("recipient"),
        "schedule_transaction": _irr("recipient"),
        "update_scheduled_transaction": _irr("id", "recipient"),
        "get_balance": _OWN,
        "get_most_recent_transactions": _R,
        "get_scheduled_transactions": _R,
        "read_file": _R,
        "get_user_info": _OWN,
        "update_password": _irr("password"),
        "update_user_info": _write(),
    },
    "slack": {
        "get_channels": _R,
        "add_user_to_channel": _irr("user", "channel"),
        "read_channel_messages": _R,
        "read_inbox": _R,
        "send_direct_message": _irr("recipient"),
        "send_channel_message": _irr("channel"),
        "get_users_in_channel": _R,
        "invite_user_to_slack": _irr("user", "user_email"),
        "remove_user_from_slack": _irr("user"),
        "get_webpage": Declared("read", ("url",)),
        "post_webpage": _irr("url"),
    },
}
"""Suite -> tool name -> its declaration. A tool missing here is irreversible (an
undeclared tool is never treated as a read)."""
