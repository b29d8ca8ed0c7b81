// SPDX-License-Identifier: Apache-2.0
import CPamPatternLock
import Testing
import TestSupport

/// Every sentence the module shows, for every key of Tests/Contract/sentences.txt
/// and many values of its placeholders, compared in full with the table.
@Suite("The contract: sentences")
struct SentenceTests {
    /// The keys the checks below render: the table must hold exactly these.
    static let keys: Set<String> = [
        "prompt", "prompt.one", "prompt.numpad", "prompt.one.numpad", "prompt.compact", "prompt.one.compact",
        "grid.keys.phone", "grid.keys.numpad", "grid", "grid.rows.phone", "grid.rows.numpad", "wrong", "wrong.one", "wrong.last", "locked",
        "way_out.admin", "way_out.timed", "duration.minute", "duration.minutes", "duration.hour", "duration.hours",
        "duration.day", "duration.days", "invalid.too_short", "invalid.not_a_dot", "invalid.repeated_dot",
        "invalid.other", "weak", "unavailable", "unavailable.unknown", "prompt.password", "unused.locked",
        "unused.unavailable",
    ]
    static let users = ["alice", "b.o-b_2@x$", String(repeating: "a", count: 64)]
    static let waits = [
        0, -5, 1, 59, 60, 61, 90, 3599, 3600, 3601, 7140, 7199, 7200, 7201, 86_400, 172_799, 172_800, 172_801,
        31_536_000,
    ]
    /// Failures before a lock (docs/PROTOCOL.md, docs/ARCHITECTURE.md).
    static let maxAttempts = "5"

    @Test("the table holds every sentence the module uses, and no other")
    func sameKeys() throws {
        let table = try SentenceTable()
        #expect(Set(table.sentences.keys) == Self.keys)
    }

    @Test("the prompt")
    func prompt() throws {
        #expect(PL_PROMPT == (try SentenceTable().render("prompt")))
    }

    @Test(
        "the prompt in every form, either mode and either layout: the numpad's names it where no keys are on its line",
        arguments: [
            (PL_LAYOUT_PHONE, "grid.keys.phone", ""), (PL_LAYOUT_NUMPAD, "grid.keys.numpad", ".numpad"),
        ])
    func prompts(layout: pl_layout, keysKey: String, plainSuffix: String) throws {
        let table = try SentenceTable()
        let keys = try table.render(keysKey)
        #expect(String(cString: pl_layout_keys(layout)) == keys)
        #expect(PL_PROMPT_ONE == (try table.render("prompt.one")))
        #expect(PL_PROMPT_NUMPAD == (try table.render("prompt.numpad")))
        #expect(PL_PROMPT_ONE_NUMPAD == (try table.render("prompt.one.numpad")))
        for form in [PL_GRID_FULL, PL_GRID_NONE] {
            #expect(
                formatted { pl_format_prompt($0, $1, form, false, layout) } == (try table.render("prompt" + plainSuffix)))
            #expect(
                formatted { pl_format_prompt($0, $1, form, true, layout) }
                    == (try table.render("prompt.one" + plainSuffix)))
        }
        #expect(
            formatted { pl_format_prompt($0, $1, PL_GRID_COMPACT, false, layout) }
                == (try table.render("prompt.compact", ["keys": keys])))
        #expect(
            formatted { pl_format_prompt($0, $1, PL_GRID_COMPACT, true, layout) }
                == (try table.render("prompt.one.compact", ["keys": keys])))
    }

    @Test("the grid, in either layout", arguments: [(PL_LAYOUT_PHONE, "grid.rows.phone"), (PL_LAYOUT_NUMPAD, "grid.rows.numpad")])
    func grid(layout: pl_layout, rowsKey: String) throws {
        let table = try SentenceTable()
        let rows = try table.render(rowsKey)
        #expect(String(cString: pl_layout_rows(layout)) == rows)
        for user in Self.users {
            #expect(formatted { pl_format_grid($0, $1, user, layout) } == (try table.render("grid", ["user": user, "rows": rows])))
        }
    }

    @Test("a wrong pattern, with any attempts left and any wait", arguments: waits)
    func wrong(retryAfter: Int) throws {
        let table = try SentenceTable()
        for user in Self.users {
            for remaining in [0, 1, 2, 3, 4, 5, 10, 1000] {
                let expected: String
                switch remaining {
                case 0:
                    expected = try table.render(
                        "wrong.last",
                        ["user": user, "max": Self.maxAttempts, "way_out": try wayOut(table, user, retryAfter)])
                case 1: expected = try table.render("wrong.one", ["n": "1"])
                default: expected = try table.render("wrong", ["n": String(remaining)])
                }
                #expect(formatted { pl_format_wrong($0, $1, user, remaining, retryAfter) } == expected)
            }
        }
    }

    @Test("locked, with any wait", arguments: waits)
    func locked(retryAfter: Int) throws {
        let table = try SentenceTable()
        for user in Self.users {
            let expected = try table.render(
                "locked", ["user": user, "max": Self.maxAttempts, "way_out": try wayOut(table, user, retryAfter)])
            #expect(formatted { pl_format_locked($0, $1, user, retryAfter) } == expected)
        }
    }

    @Test("waits in minutes, hours and days", arguments: waits.filter { $0 > 0 })
    func duration(seconds: Int) throws {
        #expect(formatted { pl_format_duration($0, $1, seconds) } == (try Self.duration(SentenceTable(), seconds)))
    }

    @Test(
        "an invalid entry, for every reason",
        arguments: [
            (PL_REASON_TOO_SHORT, "invalid.too_short"), (PL_REASON_NOT_A_DOT, "invalid.not_a_dot"),
            (PL_REASON_REPEATED_DOT, "invalid.repeated_dot"), (PL_REASON_OTHER, "invalid.other"),
            (PL_REASON_NONE, "invalid.other"), (PL_REASON_CURRENT_REQUIRED, "invalid.other"),
        ])
    func invalid(reason: pl_reason, key: String) throws {
        #expect(pl_invalid_message(reason).map { String(cString: $0) } == (try SentenceTable().render(key)))
    }

    @Test("INVALID reason=empty says nothing")
    func empty() {
        #expect(pl_invalid_message(PL_REASON_EMPTY) == nil)
    }

    @Test("the advice after an unlock with a weak pattern")
    func weak() throws {
        #expect(String(cString: pl_weak_advice()) == (try SentenceTable().render("weak")))
    }

    @Test("the prompt while the pattern cannot be used")
    func passwordPrompt() throws {
        #expect(PL_PROMPT_PASSWORD == (try SentenceTable().render("prompt.password")))
    }

    @Test(
        "an entry shaped like a pattern that was not used",
        arguments: [(PL_UNUSED_LOCKED, "unused.locked"), (PL_UNUSED_UNAVAILABLE, "unused.unavailable")])
    func unused(why: pl_unused, key: String) throws {
        #expect(String(cString: pl_unused_message(why)) == (try SentenceTable().render(key)))
    }

    @Test("why the daemon cannot be used (debug)", arguments: ["cannot connect to /run/patternlock/socket: Connection refused", "", nil])
    func unavailable(why: String?) throws {
        let table = try SentenceTable()
        let shown = try why.flatMap { $0.isEmpty ? nil : $0 } ?? table.render("unavailable.unknown")
        #expect(formatted { pl_format_unavailable($0, $1, why) } == (try table.render("unavailable", ["why": shown])))
    }

    // MARK: - The table's composition rules, from README.md

    func wayOut(_ table: SentenceTable, _ user: String, _ retryAfter: Int) throws -> String {
        guard retryAfter > 0 else { return try table.render("way_out.admin", ["user": user]) }
        return try table.render("way_out.timed", ["duration": try Self.duration(table, retryAfter), "user": user])
    }

    /// Whole minutes rounded up; from 120 minutes hours, from 48 hours days, each rounded up.
    static func duration(_ table: SentenceTable, _ seconds: Int) throws -> String {
        func up(_ n: Int, _ unit: Int) -> Int { (n + unit - 1) / unit }
        let minutes = up(seconds, 60)
        let (n, unit) =
            minutes < 120 ? (minutes, "minute") : minutes < 48 * 60 ? (up(minutes, 60), "hour") : (up(up(minutes, 60), 24), "day")
        return try table.render("duration.\(unit)\(n == 1 ? "" : "s")", ["n": String(n)])
    }
}

/// Tests/Contract/sentences.txt: key → sentence, placeholders filled in by `render`.
struct SentenceTable {
    let sentences: [String: String]

    init() throws {
        var sentences: [String: String] = [:]
        for record in try ContractFiles.records("sentences.txt") {
            guard sentences[record.key] == nil else {
                throw ContractFiles.FormatError(description: "sentences.txt:\(record.line): \(record.key) twice")
            }
            let bytes = try ContractFiles.unescape(record.value)
            guard let text = String(validating: bytes, as: UTF8.self) else {
                throw ContractFiles.FormatError(description: "sentences.txt:\(record.line): not UTF-8")
            }
            sentences[record.key] = text
        }
        self.sentences = sentences
    }

    /// The sentence of key with every {name} replaced by values[name]. Throws for
    /// a key outside SentenceTests.keys, a placeholder without a value, or a value
    /// the sentence has no place for.
    func render(_ key: String, _ values: [String: String] = [:]) throws -> String {
        func fail(_ why: String) -> ContractFiles.FormatError {
            ContractFiles.FormatError(description: "sentence \(key): \(why)")
        }
        guard SentenceTests.keys.contains(key) else { throw fail("not a key the tests know") }
        guard let template = sentences[key] else { throw fail("missing from sentences.txt") }
        var out = ""
        var used = Set<String>()
        var rest = Substring(template)
        while let open = rest.firstIndex(of: "{") {
            guard let close = rest[open...].firstIndex(of: "}") else { throw fail("a { without }") }
            let name = String(rest[rest.index(after: open)..<close])
            guard let value = values[name] else { throw fail("no value for {\(name)}") }
            out += rest[..<open] + value
            used.insert(name)
            rest = rest[rest.index(after: close)...]
        }
        guard used == Set(values.keys) else { throw fail("values without a place: \(Set(values.keys).subtracting(used))") }
        return out + rest
    }
}
