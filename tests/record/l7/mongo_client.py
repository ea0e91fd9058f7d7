#!/usr/bin/python3
"""The MongoDB workload of tests/record/test_l7_binary.sh: pymongo against
tests/record/l7/mongo_server.py, with its own counts from pymongo's command monitoring:
"started NAME N" per command, "answered N" (acknowledged commands), "errors N" (failed commands
and replies carrying writeErrors or a writeConcernError).
  mongo_client.py PORT [zlib]
"""
import sys

import pymongo
from pymongo import monitoring
from pymongo.cursor import CursorType
from pymongo.write_concern import WriteConcern

started, errors, answered = {}, 0, 0


class Listener(monitoring.CommandListener):
    def started(self, event):
        started[event.command_name] = started.get(event.command_name, 0) + 1

    def succeeded(self, event):
        global errors, answered
        if event.reply.get("writeErrors") or event.reply.get("writeConcernError"):
            errors += 1
        # Unacknowledged (w: 0) writes get {"ok": 1} from the driver, not the server.
        if event.reply != {"ok": 1}:
            answered += 1

    def failed(self, event):
        global errors, answered
        errors += 1
        answered += 1


port = int(sys.argv[1])
opts = {"compressors": sys.argv[2]} if len(sys.argv) > 2 else {}
client = pymongo.MongoClient("127.0.0.1", port, event_listeners=[Listener()],
                             serverSelectionTimeoutMS=5000, **opts)
orders = client.shop.orders
for i in range(100):
    orders.insert_one({"_id": i, "item": "book", "qty": i})
try:
    orders.insert_one({"_id": 1})
except pymongo.errors.DuplicateKeyError:
    pass
for i in range(50):
    orders.find_one({"_id": i})
# 100 documents 10 a batch: find, then one getMore the server answers with 9 exhaust replies.
n = sum(1 for _ in orders.find({}, batch_size=10, cursor_type=CursorType.EXHAUST))
assert n == 100, n
try:
    orders.with_options(write_concern=WriteConcern(w=5)).update_one({"_id": 1},
                                                                   {"$set": {"qty": 0}})
except pymongo.errors.WriteConcernError:
    pass
try:
    client.shop.command("nosuchcmd")
except pymongo.errors.OperationFailure:
    pass
unack = orders.with_options(write_concern=WriteConcern(w=0))
for i in range(20):
    unack.insert_one({"_id": 1000 + i})
client.admin.command("ping")
orders.delete_many({"qty": {"$gt": 1000}})
client.close()
for k in sorted(started):
    print("started", k, started[k])
print("answered", answered)
print("errors", errors)
