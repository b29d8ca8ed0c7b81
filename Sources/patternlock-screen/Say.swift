// SPDX-License-Identifier: Apache-2.0
import Glibc

/// Writes a line to stderr (fd 2) in one write: `patternlock-screen: ` and `text`.
func say(_ text: String) {
    var line = Array("patternlock-screen: \(text)\n".utf8)
    var done = 0
    while done < line.count {
        let n = line.withUnsafeBytes { raw -> Int in
            guard let base = raw.baseAddress else { return 0 }
            return write(2, base + done, raw.count - done)
        }
        if n < 0 && errno == EINTR { continue }
        if n <= 0 { break }
        done += n
    }
    line.removeAll()
}
