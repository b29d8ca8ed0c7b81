import PatternLock
#if canImport(Glibc)
import Glibc
#endif

/// Lines to stderr, which systemd sends to the journal. Under the journal
/// (`$JOURNAL_STREAM`) each line carries its syslog priority as `<N>`; stand-alone,
/// a timestamp. Patterns never reach a log line: callers log verbs, users, outcomes.
enum Log {
    enum Level: Int { case error = 3, warning = 4, info = 6, debug = 7 }
    private static let underJournal = getenv("JOURNAL_STREAM") != nil

    static func write(_ level: Level, _ message: String) {
        var line: String
        if underJournal {
            line = "<\(level.rawValue)>\(message)\n"
        } else {
            var t = time(nil)
            var tmv = tm()
            gmtime_r(&t, &tmv)
            var buf = [CChar](repeating: 0, count: 32)
            strftime(&buf, buf.count, "%Y-%m-%dT%H:%M:%SZ", &tmv)
            let stamp = buf.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
            line = "\(stamp) patternlockd: \(message)\n"
        }
        _ = line.withUTF8 { Glibc.write(2, $0.baseAddress, $0.count) }
        line = ""
    }

    static func info(_ m: String) { write(.info, m) }
    static func warning(_ m: String) { write(.warning, m) }
    static func error(_ m: String) { write(.error, m) }

    /// `key=value` with the value quoted when it holds spaces or is empty.
    static func field(_ key: String, _ value: String) -> String {
        let clean = String(value.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7f ? "?" : Character($0) })
        return clean.isEmpty || clean.contains(" ") ? "\(key)=\"\(clean)\"" : "\(key)=\(clean)"
    }
}
