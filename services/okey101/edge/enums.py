"""Unknown enum values in a request, found before it is forwarded.

The ``okey.v1`` enums are open (proto3): a binary body keeps a number no value names, and the
JSON codec, which ignores unknown fields for newer clients' sake, also drops an enum name it
does not know, leaving the field at its default (``TABLE_VISIBILITY_PRIVATE_TYPO`` read as an
unset visibility, a public table). The edge refuses both, for every request message, as a
service refuses an unknown number: INVALID_ARGUMENT ``BAD_FIELD`` with the field's path
(``rules.preset``, ``bots.level``: proto field names, no indices, as the services name them)
and the value sent.
"""

from __future__ import annotations

import functools
from typing import Any

from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message

#: Messages with a JSON form of their own (Struct, Value, Any, wrappers...): the protobuf
#: library reads them, and their only enum (NullValue) takes null alone.
_WELL_KNOWN = "google.protobuf."


def unknown_number(message: Message, prefix: str = "") -> tuple[str, str] | None:
    """The path and value of the first enum field of ``message`` (nested ones included) that
    holds a number its enum does not name, or None."""
    for field, value in message.ListFields():
        path = prefix + field.name
        if field.message_type is not None and field.message_type.GetOptions().map_entry:
            inner = field.message_type.fields_by_name["value"]
            found = _unknown_numbers(inner, list(value.values()), path)
        elif field.is_repeated:
            found = _unknown_numbers(field, list(value), path)
        else:
            found = _unknown_numbers(field, [value], path)
        if found is not None:
            return found
    return None


def _unknown_numbers(
    field: FieldDescriptor, values: list[Any], path: str
) -> tuple[str, str] | None:
    for value in values:
        if field.enum_type is not None:
            if value not in field.enum_type.values_by_number:
                return path, str(value)
        elif field.message_type is not None and not field.message_type.full_name.startswith(
            _WELL_KNOWN
        ):
            found = unknown_number(value, path + ".")
            if found is not None:
                return found
    return None


def unknown_name(value: object, descriptor: Descriptor, prefix: str = "") -> tuple[str, str] | None:
    """The path and value of the first enum name in ``value`` (a request's JSON, parsed) that
    its field's enum does not have, or None. Fields are looked up as the protobuf JSON parser
    does (JSON name, then proto name); what it would refuse anyway is left to it, and a number
    (or a number as a string) to ``unknown_number`` once parsed."""
    if not isinstance(value, dict) or descriptor.full_name.startswith(_WELL_KNOWN):
        return None
    by_name = _fields_by_key(descriptor)
    for key, item in value.items():
        field = by_name.get(key)
        if field is None or item is None:
            continue  # an unknown field (ignored) or null (the default)
        path = prefix + field.name
        if field.message_type is not None and field.message_type.GetOptions().map_entry:
            inner = field.message_type.fields_by_name["value"]
            items = list(item.values()) if isinstance(item, dict) else []
            found = _unknown_names(inner, items, path)
        elif field.is_repeated:
            found = _unknown_names(field, item if isinstance(item, list) else [], path)
        else:
            found = _unknown_names(field, [item], path)
        if found is not None:
            return found
    return None


@functools.cache
def _fields_by_key(descriptor: Descriptor) -> dict[str, FieldDescriptor]:
    """A message's fields by JSON name and by proto name (built once per message type: every
    JSON request is read through it)."""
    by_name = {field.name: field for field in descriptor.fields}
    by_name.update({field.json_name: field for field in descriptor.fields})
    return by_name


def _unknown_names(field: FieldDescriptor, items: list[Any], path: str) -> tuple[str, str] | None:
    for item in items:
        if field.enum_type is not None:
            if isinstance(item, str) and item not in field.enum_type.values_by_name:
                try:
                    int(item)
                except ValueError:
                    return path, item
        elif field.message_type is not None:
            found = unknown_name(item, field.message_type, path + ".")
            if found is not None:
                return found
    return None


__all__ = ["unknown_name", "unknown_number"]
