"""A small protocol-buffer runtime: the wire format and message objects with the Python protobuf API
that TF code uses on its messages (keyword construction, attribute access, ``HasField``,
``WhichOneof``, ``ClearField``, repeated fields with ``add``, ``SerializeToString`` / ``FromString`` /
``ParseFromString``, ``CopyFrom``, equality).

It exists so that event files read back as TF's ``Event`` messages without a protobuf dependency; a
message class only lists its fields (``_event_proto`` declares TF's). Semantics are proto3's: scalars
that are not in a oneof have no presence and are not written at their default; repeated numbers are
written packed and read packed or not; fields this runtime does not know are kept and written back.
"""
import operator
import struct

# Wire types.
_VARINT, _FIXED64, _BYTES, _FIXED32 = 0, 1, 2, 5


class ProtoDecodeError(ValueError):
    """Bytes that are not a valid encoding of the message being read."""


def _encode_varint(value, out):
    value &= (1 << 64) - 1  # negative int32/int64 are written as 10-byte two's complement
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)


def _decode_varint(data, pos):
    result, shift = 0, 0
    while True:
        if pos >= len(data):
            raise ProtoDecodeError("truncated varint")
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7
        if shift >= 70:
            raise ProtoDecodeError("varint longer than 10 bytes")


def _signed64(value):
    return value - (1 << 64) if value >= 1 << 63 else value


def _signed32(value):
    value = _signed64(value) & 0xFFFFFFFF
    return value - (1 << 32) if value >= 1 << 31 else value


class _Kind:
    """How one scalar type is written: its wire type, and for fixed-width types its struct code."""

    def __init__(self, name, wire_type, default, fixed=None, from_varint=None):
        self.name, self.wire_type, self.default = name, wire_type, default
        self.fixed, self.from_varint = fixed, from_varint


DOUBLE = _Kind("double", _FIXED64, 0.0, fixed="d")
FLOAT = _Kind("float", _FIXED32, 0.0, fixed="f")
INT64 = _Kind("int64", _VARINT, 0, from_varint=_signed64)
INT32 = _Kind("int32", _VARINT, 0, from_varint=_signed32)
ENUM = _Kind("enum", _VARINT, 0, from_varint=_signed32)
UINT64 = _Kind("uint64", _VARINT, 0, from_varint=lambda v: v)
UINT32 = _Kind("uint32", _VARINT, 0, from_varint=lambda v: v & 0xFFFFFFFF)
BOOL = _Kind("bool", _VARINT, False, from_varint=bool)
STRING = _Kind("string", _BYTES, "")
BYTES = _Kind("bytes", _BYTES, b"")


class Field:
    """One field of a message: its number, name, type (a kind above or a Message class), whether it
    is repeated, and the oneof it belongs to."""

    def __init__(self, number, name, kind, repeated=False, oneof=None):
        self.number, self.name, self.kind, self.repeated, self.oneof = number, name, kind, repeated, oneof

    @property
    def is_message(self):
        return isinstance(self.kind, type)

    def default(self):
        return self.kind() if self.is_message else self.kind.default

    def check(self, value):
        """``value`` as this field stores it; TypeError naming the field for a value of another type."""
        kind = self.kind
        if self.is_message:
            ok = isinstance(value, kind)
        elif kind is STRING:
            if isinstance(value, bytes):
                value = value.decode("utf-8")
            ok = isinstance(value, str)
        elif kind is BYTES:
            if isinstance(value, (bytearray, memoryview)):
                value = bytes(value)
            ok = isinstance(value, bytes)
        elif kind in (DOUBLE, FLOAT):
            ok = _is_number(value)
            value = float(value) if ok else value
        elif kind is BOOL:
            ok = _is_number(value)
            value = bool(value) if ok else value
        else:
            integer = _integer(value)
            ok = integer is not None
            value = integer if ok else value
        if not ok:
            expected = kind.__qualname__ if self.is_message else kind.name
            raise TypeError(f"field {self.name} takes a {expected}; got {type(value).__name__} {value!r}")
        return value


def _integer(value):
    """``value`` as an int when it is one (an int, a numpy integer, an integral float), else None."""
    try:
        return operator.index(value)
    except TypeError:
        pass
    if _is_number(value) and float(value).is_integer():
        return int(float(value))
    return None


def _is_number(value):
    try:
        float(value)
    except (TypeError, ValueError):
        return False
    return not isinstance(value, (str, bytes))


class RepeatedField(list):
    """A repeated field: a list whose elements are checked, with protobuf's ``add`` for messages."""

    __slots__ = ("_field", "_owner")

    def __init__(self, field, values=(), owner=None):
        super().__init__(field.check(v) for v in values)
        self._field = field
        self._owner = owner  # the message holding it, told of the first write (a lazily read one)

    def add(self, **fields):
        """Appends a new message built from ``fields`` and returns it (repeated message fields)."""
        if not self._field.is_message:
            raise AttributeError(f"add() is for repeated message fields; {self._field.name} holds "
                                 f"{self._field.kind.name}")
        message = self._field.kind(**fields)
        self._written()
        super().append(message)
        return message

    def append(self, value):
        value = self._field.check(value)
        self._written()
        super().append(value)

    def extend(self, values):
        values = [self._field.check(v) for v in values]
        self._written()
        super().extend(values)

    def _written(self):
        if self._owner is not None:
            store = self._owner._values
            if isinstance(store, _AttachOnWrite):
                store.attach()
            self._owner = None


class Message:
    """Base of every message class: subclasses set ``_fields`` to a tuple of ``Field``."""

    _fields = ()
    __slots__ = ("_values", "_unknown")

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls._by_name = {f.name: f for f in cls._fields}
        cls._by_number = {f.number: f for f in cls._fields}
        cls._oneofs = {}
        for f in cls._fields:
            if f.oneof is not None:
                cls._oneofs.setdefault(f.oneof, []).append(f.name)

    def __init__(self, *args, **fields):
        """Builds a message.

        Args:
          *args: field values in declaration order (a shorthand protobuf does not have).
          **fields: field values by name, as protobuf: sub-messages as messages, repeated fields as
            iterables.

        Raises:
          AttributeError: a name is not a field.
          TypeError: a value does not fit its field's type.
        """
        object.__setattr__(self, "_values", {})
        object.__setattr__(self, "_unknown", [])
        if len(args) > len(self._fields):
            raise TypeError(f"{type(self).__qualname__} takes at most {len(self._fields)} positional fields")
        for field, value in zip(self._fields, args):
            if field.name in fields:
                raise TypeError(f"{type(self).__qualname__} got field {field.name} twice")
            fields[field.name] = value
        for name, value in fields.items():
            if value is not None:
                setattr(self, name, value)

    def _field(self, name):
        field = self._by_name.get(name)
        if field is None:
            raise AttributeError(f"{type(self).__qualname__} has no field {name!r}")
        return field

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        field = self._field(name)
        values = self._values
        if name in values:
            return values[name]
        if field.repeated:
            return values.setdefault(name, RepeatedField(field, owner=self))
        if field.is_message:
            # Reading an unset sub-message gives an empty one that becomes present once written to,
            # as protobuf's does: kept aside until then.
            return _LazyMessage.of(self, field)
        return field.kind.default

    def __setattr__(self, name, value):
        field = self._field(name)
        if field.repeated:
            self._values[name] = RepeatedField(field, value)
            return
        value = field.check(value)
        if field.oneof is not None:
            for other in self._oneofs[field.oneof]:
                self._values.pop(other, None)
        self._values[name] = value

    def HasField(self, name):
        """Returns whether a sub-message, a oneof member or a oneof group is set.

        Args:
          name: a field or oneof group name.

        Raises:
          ValueError: ``name`` is a plain proto3 scalar or a repeated field (no presence).
        """
        if name in self._oneofs:
            return self.WhichOneof(name) is not None
        field = self._field(name)
        if field.repeated or (field.oneof is None and not field.is_message):
            raise ValueError(f'Protocol message {type(self).__qualname__} has no non-repeated submessage '
                             f'field "{name}" nor marked as optional')
        return name in self._values

    def WhichOneof(self, oneof_group):
        """Returns the name of the member of a oneof group that is set, or None.

        Args:
          oneof_group: the group's name, e.g. "what" of Event or "value" of Summary.Value.

        Raises:
          ValueError: no such group.
        """
        if oneof_group not in self._oneofs:
            raise ValueError(f'Protocol message has no oneof "{oneof_group}" field.')
        return next((n for n in self._oneofs[oneof_group] if n in self._values), None)

    def ClearField(self, name):
        """Unsets a field (or every member of a oneof group).

        Args:
          name: a field or oneof group name.
        """
        if name in self._oneofs:
            for member in self._oneofs[name]:
                self._values.pop(member, None)
        else:
            self._values.pop(self._field(name).name, None)

    def ListFields(self):
        """Returns (Field, value) of every field that is set, in field-number order."""
        return [(f, self._values[f.name]) for f in sorted(self._fields, key=lambda f: f.number)
                if f.name in self._values and self._written(f, self._values[f.name])]

    def CopyFrom(self, other):
        """Replaces the fields with a copy of another message's.

        Args:
          other: a message of the same type.
        """
        if not isinstance(other, type(self)):
            raise TypeError(f"CopyFrom takes a {type(self).__qualname__}; got {type(other).__name__}")
        self.ParseFromString(other.SerializeToString())

    def _written(self, field, value):
        if field.repeated:
            return len(value) > 0
        return field.oneof is not None or field.is_message or value != field.kind.default

    # -- the wire format ---------------------------------------------------------------------------

    def SerializeToString(self, deterministic=None):
        """Returns the message's encoding: fields in number order, unknown fields after them.

        Args:
          deterministic: accepted for protobuf code; the output is always deterministic.
        """
        del deterministic  # the output is always deterministic
        out = bytearray()
        self._encode(out)
        return bytes(out)

    def _encode(self, out):
        for field, value in self.ListFields():
            if field.repeated and not field.is_message and field.kind.wire_type != _BYTES:
                body = _packed(field.kind, value)
                _encode_varint(field.number << 3 | _BYTES, out)
                _encode_varint(len(body), out)
                out += body
            elif field.repeated:
                for element in value:
                    _encode_one(field, element, out)
            else:
                _encode_one(field, value, out)
        for raw in self._unknown:
            out += raw

    def ByteSize(self):
        """Returns the size of the encoding in bytes."""
        return len(self.SerializeToString())

    def ParseFromString(self, data):
        """Replaces the fields with those decoded from bytes.

        Args:
          data: the encoding.

        Returns:
          The number of bytes read.

        Raises:
          ProtoDecodeError: ``data`` is not an encoding of this message.
        """
        self._values.clear()
        self._unknown.clear()
        self._decode(memoryview(bytes(data)), 0, len(data))
        return len(data)

    def MergeFromString(self, data):
        """Merges the fields decoded from bytes into this message, as protobuf does.

        Args:
          data: the encoding.

        Returns:
          The number of bytes read.
        """
        self._decode(memoryview(bytes(data)), 0, len(data))
        return len(data)

    @classmethod
    def FromString(cls, data):
        """Returns a new message decoded from bytes.

        Args:
          data: the encoding.

        Raises:
          ProtoDecodeError: ``data`` is not an encoding of this message.
        """
        message = cls()
        message.ParseFromString(data)
        return message

    def _decode(self, data, pos, end):
        while pos < end:
            start = pos
            key, pos = _decode_varint(data, pos)
            number, wire_type = key >> 3, key & 7
            if number == 0:
                raise ProtoDecodeError("field number 0")
            field = self._by_number.get(number)
            value_start = pos
            pos = _skip(data, pos, wire_type, end)
            if field is None:
                self._unknown.append(bytes(data[start:pos]))
                continue
            self._decode_field(field, wire_type, data, value_start, pos)

    def _decode_field(self, field, wire_type, data, pos, end):
        kind = field.kind
        if wire_type == _BYTES:
            length, pos = _decode_varint(data, pos)
            payload = data[pos:end]
            if field.is_message:
                value = getattr(self, field.name) if not field.repeated and field.name in self._values else kind()
                value._decode(data, pos, end)
            elif kind is STRING:
                try:
                    value = bytes(payload).decode("utf-8")
                except UnicodeDecodeError as error:
                    raise ProtoDecodeError(f"field {field.name} is not UTF-8: {error}") from None
            elif kind is BYTES:
                value = bytes(payload)
            elif field.repeated:  # packed numbers
                getattr(self, field.name).extend(_unpacked(kind, payload))
                return
            else:
                raise ProtoDecodeError(f"field {field.name} ({kind.name}) has wire type {wire_type}")
        elif wire_type != getattr(kind, "wire_type", _BYTES):
            raise ProtoDecodeError(f"field {field.name} has wire type {wire_type}")
        elif kind.fixed is not None:
            value = struct.unpack_from("<" + kind.fixed, data, pos)[0]
        else:
            value = kind.from_varint(_decode_varint(data, pos)[0])
        if field.repeated:
            list.append(getattr(self, field.name), value)
        else:
            if field.oneof is not None:
                for other in self._oneofs[field.oneof]:
                    self._values.pop(other, None)
            self._values[field.name] = value

    # -- Python protocol ---------------------------------------------------------------------------

    def __eq__(self, other):
        if not isinstance(other, Message):
            return NotImplemented
        return type(self) is type(other) and self.SerializeToString() == other.SerializeToString()

    __hash__ = None  # mutable, like protobuf's messages

    def __repr__(self):
        return f"{type(self).__qualname__}({', '.join(f'{f.name}={v!r}' for f, v in self.ListFields())})"

    def __str__(self):
        """protobuf's text format, roughly: one ``name: value`` or ``name { … }`` per line."""
        lines = []
        for field, value in self.ListFields():
            for element in (value if field.repeated else [value]):
                if field.is_message:
                    inner = str(element).replace("\n", "\n  ").rstrip()
                    lines.append(f"{field.name} {{\n  {inner}\n}}" if inner else f"{field.name} {{\n}}")
                else:
                    lines.append(f"{field.name}: {_text(element)}")
        return "".join(line + "\n" for line in lines)

    def __reduce__(self):
        return (type(self).FromString, (self.SerializeToString(),))


class _LazyMessage:
    """An unset sub-message, read: empty, and set on its parent at the first write to it."""

    @staticmethod
    def of(parent, field):
        child = field.kind()
        object.__setattr__(child, "_values", _AttachOnWrite(parent, field, child))
        return child


class _AttachOnWrite(dict):
    """The field store of a lazily read sub-message: the first write attaches it to its parent."""

    __slots__ = ("_parent", "_field", "_child")

    def __init__(self, parent, field, child):
        super().__init__()
        self._parent, self._field, self._child = parent, field, child

    def __setitem__(self, key, value):
        super().__setitem__(key, value)
        self.attach()

    def setdefault(self, key, default=None):  # reading a repeated field is no write
        if key not in self:
            super().__setitem__(key, default)
        return self[key]

    def attach(self):
        if self._parent is not None:
            parent, field, child = self._parent, self._field, self._child
            self._parent = None
            setattr(parent, field.name, child)


def _text(value):
    if isinstance(value, str):
        return '"' + value.encode("unicode_escape").decode("ascii").replace('"', '\\"') + '"'
    if isinstance(value, bytes):
        return '"' + "".join(chr(b) if 32 <= b < 127 and b not in (34, 92) else f"\\{b:03o}" for b in value) + '"'
    if isinstance(value, bool):
        return "true" if value else "false"
    return repr(value)


def _skip(data, pos, wire_type, end):
    """The position after the value of ``wire_type`` at ``pos``."""
    if wire_type == _VARINT:
        pos = _decode_varint(data, pos)[1]
    elif wire_type == _FIXED64:
        pos += 8
    elif wire_type == _FIXED32:
        pos += 4
    elif wire_type == _BYTES:
        length, pos = _decode_varint(data, pos)
        pos += length
    else:
        raise ProtoDecodeError(f"unsupported wire type {wire_type}")
    if pos > end:
        raise ProtoDecodeError("a field runs past the end of its message")
    return pos


def _encode_one(field, value, out):
    kind = field.kind
    if field.is_message:
        body = value.SerializeToString()
    elif kind is STRING:
        body = value.encode("utf-8")
    elif kind is BYTES:
        body = value
    else:
        _encode_varint(field.number << 3 | kind.wire_type, out)
        if kind.fixed is not None:
            out += struct.pack("<" + kind.fixed, value)
        else:
            _encode_varint(int(value), out)
        return
    _encode_varint(field.number << 3 | _BYTES, out)
    _encode_varint(len(body), out)
    out += body


def _packed(kind, values):
    if kind.fixed is not None:
        return struct.pack(f"<{len(values)}{kind.fixed}", *values)
    body = bytearray()
    for value in values:
        _encode_varint(int(value), body)
    return bytes(body)


def _unpacked(kind, payload):
    if kind.fixed is not None:
        size = struct.calcsize(kind.fixed)
        if len(payload) % size:
            raise ProtoDecodeError(f"packed {kind.name} values of {len(payload)} bytes")
        return struct.unpack(f"<{len(payload) // size}{kind.fixed}", payload)
    values, pos = [], 0
    while pos < len(payload):
        value, pos = _decode_varint(payload, pos)
        values.append(kind.from_varint(value))
    return values
