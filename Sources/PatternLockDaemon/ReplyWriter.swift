// SPDX-License-Identifier: Apache-2.0
import PatternLock
import PatternLockWire

/// Where a request's replies go, as a swift-nio handler writes through its
/// context: the request handler is handed one and writes each answer the moment
/// it has it (a right pattern before the bookkeeping after it), whatever the verb.
/// The daemon's writer is its connection (`ConnectionWriter`); a test's keeps the lines.
package protocol ReplyWriter: AnyObject {
    /// Sends `replies`, one line each, in order.
    func write(_ replies: [Reply])
}

/// Writes replies to a connected socket. Once a write fails (the peer left, or
/// did not read within the send timeout) nothing more is written, and the
/// connection is to be closed.
package final class ConnectionWriter: ReplyWriter {
    private let fd: Int32
    /// False once a write failed.
    package private(set) var isOpen = true

    package init(fd: Int32) { self.fd = fd }

    package func write(_ replies: [Reply]) {
        guard isOpen, !replies.isEmpty else { return }
        let text = replies.map { $0.line + "\n" }.joined()
        if case .failure = Socket.sendAll(fd, Array(text.utf8)) { isOpen = false }
    }
}
