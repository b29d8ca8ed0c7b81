// SPDX-License-Identifier: Apache-2.0
import Foundation
import Testing

/// The shared contract files in Tests/Contract (their format: Tests/Contract/README.md).
public enum ContractFiles {
    public static let directory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Contract")

    /// An escaped column as text.
    public static func text(_ column: String) throws -> String {
        String(decoding: try unescape(column), as: UTF8.self)
    }

    public struct FormatError: Error, CustomStringConvertible {
        public let description: String
        public init(description: String) { self.description = description }
    }

    /// One record: the first two TAB-separated columns of a line that is not a comment.
    public struct Record: Sendable, CustomTestStringConvertible {
        public let file: String
        public let line: Int
        public let key: String
        public let value: String
        /// Every column of the line (the first two are `key` and `value`).
        public let columns: [String]
        public init(file: String, line: Int, key: String, value: String, columns: [String]? = nil) {
            self.file = file
            self.line = line
            self.key = key
            self.value = value
            self.columns = columns ?? [key, value]
        }
        public var testDescription: String { "\(file):\(line) \(key)" }
    }

    /// The records of one file, in order. Throws on a line without a TAB.
    public static func records(_ file: String) throws -> [Record] {
        let text = try String(contentsOf: directory.appendingPathComponent(file), encoding: .utf8)
        var records: [Record] = []
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            if line.isEmpty || line.hasPrefix("#") { continue }
            let columns = line.split(separator: "\t", omittingEmptySubsequences: false)
            guard columns.count >= 2 else {
                throw FormatError(description: "\(file):\(index + 1): no TAB between the two columns")
            }
            records.append(
                Record(
                    file: file, line: index + 1, key: String(columns[0]), value: String(columns[1]),
                    columns: columns.map(String.init)))
        }
        return records
    }

    /// The records, or none when the file cannot be read; a test that calls
    /// `records` itself reports why.
    public static func recordsOrNone(_ file: String) -> [Record] {
        (try? records(file)) ?? []
    }

    /// The bytes an escaped column stands for: `\\`, `\n`, `\xHH`, and `\{N}`
    /// (the byte before, N times in all).
    public static func unescape(_ text: String) throws -> [UInt8] {
        let source = Array(text.utf8)
        var out: [UInt8] = []
        var i = 0
        func fail(_ why: String) -> FormatError { FormatError(description: "\(why) in \"\(text)\"") }
        while i < source.count {
            guard source[i] == UInt8(ascii: "\\") else {
                out.append(source[i])
                i += 1
                continue
            }
            guard i + 1 < source.count else { throw fail("a backslash at the end") }
            switch source[i + 1] {
            case UInt8(ascii: "\\"):
                out.append(UInt8(ascii: "\\"))
                i += 2
            case UInt8(ascii: "n"):
                out.append(0x0A)
                i += 2
            case UInt8(ascii: "x"):
                guard i + 3 < source.count,
                    let byte = UInt8(String(decoding: source[(i + 2)...(i + 3)], as: UTF8.self), radix: 16)
                else { throw fail("\\x without two hex digits") }
                out.append(byte)
                i += 4
            case UInt8(ascii: "{"):
                guard let close = source[(i + 2)...].firstIndex(of: UInt8(ascii: "}")),
                    let count = Int(String(decoding: source[(i + 2)..<close], as: UTF8.self)),
                    let last = out.last, count >= 1
                else { throw fail("\\{N} without a count or a byte before it") }
                out += [UInt8](repeating: last, count: count - 1)
                i = close + 1
            default:
                throw fail("an unknown escape")
            }
        }
        return out
    }
}
