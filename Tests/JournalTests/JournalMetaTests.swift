import AttributionJoin
import JournalStore
import TestSupport
import Testing

/// The journal's `meta` by typed keys (issue #33): what the fleet stores there without writing SQL.
@Suite struct JournalMetaTests {
    static let count = MetaKey<Int64>("test_count")
    static let name = MetaKey<String>("test_name")

    @Test func typedKeysReadBackWhatWasSetAndSetIfAbsentKeepsTheFirst() throws {
        let scratch = ScratchDirectory("journal-meta")
        let path = scratch.file("j.db")
        let writer = try JournalWriter(path: path, durability: .normal, schema: .migrate)
        try writer.updatingMeta { meta in
            #expect(try !meta.contains(Self.count) && meta.value(Self.count) == nil)
            try meta.set(Self.count, to: 41)
            try meta.set(Self.count, to: 42)
            try meta.setIfAbsent(Self.name, to: "first")
            try meta.setIfAbsent(Self.name, to: "second")
        }
        let reader = try ReadOnlyJournal(path: path)
        #expect(try reader.meta.value(Self.count) == 42)
        #expect(try reader.meta.value(Self.name) == "first")
        #expect(try reader.meta.text(Self.count) == "42")
        // A text that is not a value of the key's type reads as absent through `value`, present through `text`.
        try writer.updatingMeta { try $0.set(MetaKey<String>("test_count"), to: "forty-two") }
        #expect(try reader.meta.value(Self.count) == nil && reader.meta.contains(Self.count))
    }

    @Test func aFailedTransactionStoresNothing() throws {
        let scratch = ScratchDirectory("journal-meta-rollback")
        let path = scratch.file("j.db")
        let writer = try JournalWriter(path: path, durability: .normal, schema: .migrate)
        struct Stop: Error {}
        #expect(throws: Stop.self) {
            try writer.updatingMeta { meta in
                try meta.set(Self.count, to: 7)
                throw Stop()
            }
        }
        #expect(try ReadOnlyJournal(path: path).meta.contains(Self.count) == false)
    }
}
