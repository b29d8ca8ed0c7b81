// SPDX-License-Identifier: Apache-2.0
import CPamPatternLock
import PatternLock
import PatternLockWire
import Testing
import TestSupport

/// Tests/Contract/patterns.txt: whether a typed entry is a pattern, the answer
/// the daemon's `Pattern` and the module's `pl_pattern_check` must both give.
/// one_prompt hands anything the module calls "not a pattern" to the next
/// module unsent, so a pattern the module refused could never unlock.
@Suite("The contract: patterns")
struct PatternContractTests {
    static let records = ContractFiles.recordsOrNone("patterns.txt")

    /// One line: the typed bytes, the verdict word, the daemon's normalized dots.
    struct Entry {
        let bytes: [UInt8]
        let verdict: String
        let normalized: String?

        init(_ record: ContractFiles.Record) throws {
            bytes = try ContractFiles.unescape(record.key)
            let columns = record.value.split(separator: "\t", omittingEmptySubsequences: false)
            verdict = String(columns[0])
            normalized = columns.count > 1 ? String(columns[1]) : nil
        }
    }

    /// The whole file: loading every line once is faster than a test each.
    static func entries() throws -> [(ContractFiles.Record, Entry)] {
        // records() keeps two columns; the third (normalized dots) is read from the line again.
        let text = try String(contentsOf: ContractFiles.directory.appendingPathComponent("patterns.txt"), encoding: .utf8)
        var out: [(ContractFiles.Record, Entry)] = []
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            if line.isEmpty || line.hasPrefix("#") { continue }
            let columns = line.split(separator: "\t", maxSplits: 1, omittingEmptySubsequences: false)
            guard columns.count == 2 else {
                throw ContractFiles.FormatError(description: "patterns.txt:\(index + 1): no TAB")
            }
            let record = ContractFiles.Record(
                file: "patterns.txt", line: index + 1, key: String(columns[0]), value: String(columns[1]))
            out.append((record, try Entry(record)))
        }
        return out
    }

    static func reason(_ word: String) -> pl_reason? {
        switch word {
        case "valid": return PL_REASON_NONE
        case "empty": return PL_REASON_EMPTY
        case "not_a_dot": return PL_REASON_NOT_A_DOT
        case "repeated_dot": return PL_REASON_REPEATED_DOT
        case "too_short": return PL_REASON_TOO_SHORT
        default: return nil
        }
    }

    @Test("the file loads, and holds the cases that matter")
    func fileLoads() throws {
        let entries = try Self.entries()
        #expect(entries.count >= 9000)
        let keys = Set(entries.map(\.0.key))
        // Every entry of up to 4 dots, knight moves, pass-overs, 0, letters, 10+ bytes, non-ASCII.
        for needed in ["", "1", "16", "13", "1397", "2137", "1325", "0", "1230", "password", "1234567890", "\\xC3\\xA9"] {
            let present = keys.contains(needed)
            #expect(present, "patterns.txt lacks \(needed)")
        }
        for (record, entry) in entries {
            #expect(Self.reason(entry.verdict) != nil, "\(record.testDescription): unknown verdict \(entry.verdict)")
            #expect((entry.verdict == "valid") == (entry.normalized != nil), "\(record.testDescription)")
            #expect(!entry.bytes.contains(0), "\(record.testDescription): a C string holds no NUL")
        }
        #expect(Set(entries.map(\.1.verdict)) == ["valid", "empty", "not_a_dot", "repeated_dot", "too_short"])
    }

    @Test("the module tells a pattern as the file says, in either layout")
    func module() throws {
        for (record, entry) in try Self.entries() {
            let expected = try #require(Self.reason(entry.verdict))
            let got = (entry.bytes.map { CChar(bitPattern: $0) } + [0]).withUnsafeBufferPointer {
                pl_pattern_check($0.baseAddress)
            }
            #expect(got == expected, "\(record.testDescription)")
            // The same keys typed on the numeric keypad, mapped back, are the same pattern.
            let numpad = entry.bytes.map { b -> CChar in
                switch b {
                case 0x31...0x33: return CChar(b + 6)
                case 0x37...0x39: return CChar(b - 6)
                default: return CChar(bitPattern: b)
                }
            }
            let phone = (entry.bytes.map { CChar(bitPattern: $0) } + [0]).withUnsafeBufferPointer {
                pl_is_pattern($0.baseAddress, PL_LAYOUT_PHONE)
            }
            let keypad = (numpad + [0]).withUnsafeBufferPointer { pl_is_pattern($0.baseAddress, PL_LAYOUT_NUMPAD) }
            #expect(phone == (entry.verdict == "valid") && keypad == phone, "\(record.testDescription)")
        }
    }

    @Test("the daemon's Pattern agrees with the file, and with its INVALID reason")
    func daemon() throws {
        for (record, entry) in try Self.entries() {
            do {
                let pattern = try Pattern(typed: SecretBytes(entry.bytes))
                #expect(entry.verdict == "valid", "\(record.testDescription): the daemon accepts it")
                #expect(pattern.digits == entry.normalized, "\(record.testDescription)")
            } catch {
                #expect(InvalidReason(error).word == entry.verdict, "\(record.testDescription)")
            }
        }
    }

    @Test("NULL is not a pattern")
    func null() {
        #expect(pl_pattern_check(nil) == PL_REASON_EMPTY)
        #expect(!pl_is_pattern(nil, PL_LAYOUT_PHONE))
    }
}
