#!/usr/bin/env python3
"""The records' id index in two levels (issue 47; built on the branch `record-ids`): frames of WAL written a record.

    python3 bench/schema/record-ids.py [--before N0] [--records N] [--batch B] [--memory T] [--slices S] [--dir D]

A table `ids(hash, seq)` WITHOUT ROWID already holds N0 random 63-bit hashes (the keyed hashes of N0 ids). Then N
new ids arrive in commits of B, two ways, each on a fresh copy:
- at random, as `records`' `UNIQUE(id)` index is written today: each commit inserts its hashes into the table;
- in two levels: each commit appends (seq, hash) to `log` (rowid order) and holds the entry in memory; while memory
  holds more than T entries, the commit also moves the entries of one slice of the hash space (of S, in turn)
  into the table in hash order, and once every slice has moved, the log's moved prefix is deleted.
Frames are counted from the WAL's size before each checkpoint (4 KiB pages, a 32 MiB cache, as the writer's), in
both ways only over the ids after the first T (until memory is full, the levels move nothing: a start, not the
steady state).
Lookups are not simulated: both read one descent of the table (the levels also a memory table).
Only random ids are simulated: with ids in time order the `UNIQUE` index writes at its end and costs almost
nothing, while the levels still read a leaf of the table for each new id; the built branch lost there
(bench/schema/RESULTS.md), which this script cannot show.
"""

import argparse
import os
import random
import sqlite3
import time

FRAME = 4096 + 24


def fresh_table(path, before):
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(path + suffix):
            os.remove(path + suffix)
    db = sqlite3.connect(path, isolation_level=None)
    for pragma in ("page_size=4096", "journal_mode=WAL", "synchronous=OFF", "wal_autocheckpoint=0", "cache_size=-32768"):
        db.execute("PRAGMA " + pragma)
    db.execute("CREATE TABLE ids (hash INTEGER NOT NULL, seq INTEGER NOT NULL, PRIMARY KEY (hash, seq)) WITHOUT ROWID")
    db.execute("CREATE TABLE log (seq INTEGER PRIMARY KEY, hash INTEGER NOT NULL)")
    rng = random.Random(1)
    db.execute("BEGIN")
    db.executemany("INSERT INTO ids VALUES (?, ?)", sorted((rng.getrandbits(63), seq) for seq in range(before)))
    db.execute("COMMIT")
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return db


class FrameCount:
    """Frames the WAL held at each checkpoint, summed."""

    def __init__(self, db, path):
        self.db, self.wal, self.total = db, path + "-wal", 0

    def checkpoint(self):
        self.total += os.path.getsize(self.wal) // FRAME
        self.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")


def run(path, options, two_levels):
    db = fresh_table(path, options.before)
    frames = FrameCount(db, path)
    rng = random.Random(2)
    seq = options.before
    width = 2**63 // options.slices
    memory = [[] for _ in range(options.slices)]
    held, cursor, round_start = 0, 0, seq
    started = time.time()
    counted_from = options.memory // options.batch
    for commit in range(options.records // options.batch):
        if commit == counted_from:
            frames.checkpoint()
            frames.total = 0
        db.execute("BEGIN")
        for _ in range(options.batch):
            hash = rng.getrandbits(63)
            if two_levels:
                db.execute("INSERT INTO log VALUES (?, ?)", (seq, hash))
                memory[min(hash // width, options.slices - 1)].append((hash, seq))
                held += 1
            else:
                db.execute("INSERT INTO ids VALUES (?, ?)", (hash, seq))
            seq += 1
        while held > options.memory:
            entries = sorted(memory[cursor])
            memory[cursor] = []
            held -= len(entries)
            db.executemany("INSERT INTO ids VALUES (?, ?)", entries)
            cursor = (cursor + 1) % options.slices
            if cursor == 0:
                # Every slice moved since `round_start`: the log's entries before it are all in the table.
                db.execute("DELETE FROM log WHERE seq < ?", (round_start,))
                round_start = seq
        db.execute("COMMIT")
        if commit % 200 == 199:
            frames.checkpoint()
    frames.checkpoint()
    return frames.total / ((options.records // options.batch - counted_from) * options.batch), time.time() - started


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--before", type=int, default=4_000_000)
    parser.add_argument("--records", type=int, default=2_000_000)
    parser.add_argument("--batch", type=int, default=100)
    parser.add_argument("--memory", type=int, default=262_144)
    parser.add_argument("--slices", type=int, default=256)
    parser.add_argument("--dir", default="/tmp")
    options = parser.parse_args()
    for name, two_levels in (("at random", False), ("two levels", True)):
        per_record, seconds = run(os.path.join(options.dir, "record-ids.db"), options, two_levels)
        print(
            "%s: %.3f frames a record (%d ids after %d, commits of %d, memory %d, %d slices; %.0f s)"
            % (name, per_record, options.records, options.before, options.batch, options.memory, options.slices, seconds),
            flush=True,
        )
    for suffix in ("", "-wal", "-shm"):
        path = os.path.join(options.dir, "record-ids.db" + suffix)
        if os.path.exists(path):
            os.remove(path)


if __name__ == "__main__":
    main()
