// SPDX-License-Identifier: Apache-2.0
import PatternLock
#if canImport(Glibc)
import Glibc
#endif

/// Lines to stderr, which systemd sends to the journal. Under the journal
/// (`$JOURNAL_STREAM`) each line carries its syslog priority as `<N>`; stand-alone,
/// a timestamp. Patterns never reach a log line: callers log verbs, users, outcomes.
package enum Log {
    package enum Level: Int { case error = 3, warning = 4, info = 6, debug = 7 }
    private static let underJournal = getenv("JOURNAL_STREAM") != nil

    /// True within a task that set it (`Log.$isMuted.withValue(true) { … }`): its
    /// lines are dropped. Only for tests that send hundreds of thousands of requests
    /// whose lines nobody reads (CheckAgreesWithEnrollTests); the daemon never sets it.
    @TaskLocal package static var isMuted = false

    package static func write(_ level: Level, _ message: String) {
        guard !isMuted else { return }
        var line: String
        if underJournal {
            line = "<\(level.rawValue)>\(message)\n"
        } else {
            var t = time(nil)
            var tmv = tm()
            gmtime_r(&t, &tmv)
            var buf = [CChar](repeating: 0, count: 32)
            strftime(&buf, buf.count, "%Y-%m-%dT%H:%M:%SZ", &tmv)
            let stamp = String(decoding: buf.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            line = "\(stamp) patternlockd: \(message)\n"
        }
        _ = line.withUTF8 { Glibc.write(2, $0.baseAddress, $0.count) }
        line = ""
    }

    package static func info(_ m: String) { write(.info, m) }
    package static func warning(_ m: String) { write(.warning, m) }
    package static func error(_ m: String) { write(.error, m) }

    /// `key=value`, the value percent-encoded past letters, digits and `-._~/:@`:
    /// what a client sends (service, tty, rhost) can neither add a field, break
    /// the line, nor smuggle terminal or bidirectional controls into the journal.
    package static func field(_ key: String, _ value: String) -> String {
        var out = ""
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"), UInt8(ascii: "/"), UInt8(ascii: ":"), UInt8(ascii: "@"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                out += "%" + (byte < 16 ? "0" : "") + String(byte, radix: 16, uppercase: true)
            }
        }
        return "\(key)=\(out)"
    }
}
