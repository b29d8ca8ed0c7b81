// SPDX-License-Identifier: Apache-2.0
import Glibc

/// Writes `program: text` and a newline to stderr in one write (retried after
/// EINTR and a short write), as the lock screen and the setup window say things.
public func sayLine(_ program: String, _ text: String) {
    var line = Array("\(program): \(text)\n".utf8)
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
