#!/usr/bin/env python3
"""Prints the scalars of the TensorBoard event files in a directory as JSON:
{"reader": ..., "scalars": {tag: [[step, value], ...] in file order}}.

With the `tensorboard` package importable (pip install tensorboard; tools/tensorboard_check.sh)
the files are read by TensorBoard's own EventAccumulator, the reader its server uses. Without
it (CI installs from Debian's archive only, which has no TensorBoard) they are read by the
protobuf runtime (python3-protobuf) from a descriptor of tensorflow.Event's fields built here,
with every record's length and payload CRC32C checked (python3-crcmod): an independent decoder,
not a copy of the writer's encoding.
"""
import json
import os
import struct
import sys


def read_with_tensorboard(logdir):
    from tensorboard.backend.event_processing import event_accumulator
    accumulator = event_accumulator.EventAccumulator(logdir, size_guidance={event_accumulator.SCALARS: 0})
    accumulator.Reload()
    return {tag: [[e.step, e.value] for e in accumulator.Scalars(tag)]
            for tag in accumulator.Tags()["scalars"]}


def event_class():
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
    f = descriptor_pb2.FieldDescriptorProto
    file = descriptor_pb2.FileDescriptorProto(name="event_check.proto", package="check", syntax="proto3")

    def message(name, fields):
        m = file.message_type.add(name=name)
        for number, (field_name, kind, label, type_name) in enumerate(fields, 1):
            if field_name is None:
                continue
            m.field.add(name=field_name, number=number, type=kind, label=label, type_name=type_name)

    optional, repeated = f.LABEL_OPTIONAL, f.LABEL_REPEATED
    message("Value", [("tag", f.TYPE_STRING, optional, None), ("simple_value", f.TYPE_FLOAT, optional, None)])
    message("Summary", [("value", f.TYPE_MESSAGE, repeated, ".check.Value")])
    message("Event", [("wall_time", f.TYPE_DOUBLE, optional, None), ("step", f.TYPE_INT64, optional, None),
                      ("file_version", f.TYPE_STRING, optional, None), (None, None, None, None),
                      ("summary", f.TYPE_MESSAGE, optional, ".check.Summary")])
    pool = descriptor_pool.DescriptorPool()
    pool.Add(file)
    descriptor = pool.FindMessageTypeByName("check.Event")
    if hasattr(message_factory, "GetMessageClass"):
        return message_factory.GetMessageClass(descriptor)
    return message_factory.MessageFactory(pool).GetPrototype(descriptor)


def read_with_protobuf(logdir):
    import crcmod.predefined
    crc32c = crcmod.predefined.mkCrcFun("crc-32c")

    def masked(data):
        c = crc32c(data)
        return (((c >> 15) | (c << 17)) + 0xA282EAD8) & 0xFFFFFFFF

    Event = event_class()
    scalars = {}
    for name in sorted(os.listdir(logdir)):
        if "tfevents" not in name:
            continue
        data = open(os.path.join(logdir, name), "rb").read()
        at, first = 0, True
        while at < len(data):
            header = data[at:at + 12]
            assert len(header) == 12, f"{name}: a record cut short at byte {at}"
            length, length_crc = struct.unpack("<QI", header)
            assert length_crc == masked(header[:8]), f"{name}: bad length CRC at byte {at}"
            payload = data[at + 12:at + 12 + length]
            (payload_crc,) = struct.unpack("<I", data[at + 12 + length:at + 16 + length])
            assert payload_crc == masked(payload), f"{name}: bad payload CRC at byte {at}"
            at += 16 + length
            event = Event()
            event.ParseFromString(payload)
            if first:
                assert event.file_version == "brain.Event:2", f"{name}: first event is not the version event"
                first = False
            for value in event.summary.value:
                scalars.setdefault(value.tag, []).append([event.step, value.simple_value])
    return scalars


def main():
    logdir = sys.argv[1]
    try:
        import tensorboard  # noqa: F401
    except ImportError:
        reader, scalars = "protobuf runtime", read_with_protobuf(logdir)
    else:  # installed: its reader must work (a failure to import its parts is an error, not a fallback)
        reader, scalars = "tensorboard EventAccumulator", read_with_tensorboard(logdir)
    json.dump({"reader": reader, "scalars": scalars}, sys.stdout)


if __name__ == "__main__":
    main()
