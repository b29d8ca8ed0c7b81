// SPDX-License-Identifier: Apache-2.0
import CPatternLockShims
import PatternLock
#if canImport(Glibc)
import Glibc
#endif

/// Reads LF-terminated lines from a socket into one fixed buffer, which never
/// grows into a new allocation and is wiped as lines leave it and when the reader
/// goes: what a peer sent (a pattern) stays in no freed memory.
package final class LineReader {
    let fd: Int32
    private let buffer: UnsafeMutableBufferPointer<UInt8>
    private var count = 0

    package enum Outcome {
        case line(SecretBytes)
        case tooLong
        case closed
        case timedOut
    }

    /// - Parameters:
    ///   - capacity: the longest line `next` will be asked for, LF included.
    package init(fd: Int32, capacity: Int) {
        self.fd = fd
        buffer = .allocate(capacity: max(capacity, 1))
        buffer.initialize(repeating: 0)
    }

    deinit {
        if let base = buffer.baseAddress { pl_wipe(base, buffer.count) }
        buffer.deallocate()
    }

    /// The next line (without LF), waiting until `deadline`; at most `maxBytes`
    /// (no more than the capacity) including LF.
    package func next(maxBytes: Int, deadline: Double) -> Outcome {
        let limit = min(maxBytes, buffer.count)
        while true {
            if let nl = buffer[..<count].firstIndex(of: 0x0A) {
                if nl + 1 > limit { return .tooLong }
                let line = SecretBytes(UnsafeBufferPointer(rebasing: buffer[..<nl]))
                // Move what follows to the front and wipe the bytes it leaves.
                let rest = count - (nl + 1)
                if let base = buffer.baseAddress {
                    base.update(from: base + nl + 1, count: rest)
                    pl_wipe(base + rest, count - rest)
                }
                count = rest
                return .line(line)
            }
            if count >= limit { return .tooLong }
            guard Socket.waitReadable(fd, until: deadline), let base = buffer.baseAddress else { return .timedOut }
            let free = buffer.count - count
            switch Socket.retrying({ recv(fd, base + count, free, 0) }) {
            case .failure(let e) where e.rawValue == EAGAIN || e.rawValue == EWOULDBLOCK: continue
            case .failure, .success(0): return .closed
            case .success(let n): count += n
            }
        }
    }
}

package func pl_wipe_bytes(_ bytes: inout [UInt8]) {
    bytes.withUnsafeMutableBytes { raw in if let b = raw.baseAddress { pl_wipe(b, raw.count) } }
    bytes.removeAll()
}

/// Starts a detached thread with a small stack (connections are many and shallow).
package func spawnThread(stackSize: Int = 512 * 1024, _ body: @escaping @Sendable () -> Void) -> Bool {
    final class Box: @unchecked Sendable { let body: @Sendable () -> Void; init(_ b: @escaping @Sendable () -> Void) { body = b } }
    var attr = pthread_attr_t()
    pthread_attr_init(&attr)
    defer { pthread_attr_destroy(&attr) }
    pthread_attr_setdetachstate(&attr, Int32(PTHREAD_CREATE_DETACHED))
    pthread_attr_setstacksize(&attr, stackSize)
    let box = Unmanaged.passRetained(Box(body)).toOpaque()
    var tid = pthread_t()
    let rc = pthread_create(
        &tid, &attr,
        { arg in
            guard let arg else { return nil }
            let box = Unmanaged<Box>.fromOpaque(arg).takeRetainedValue()
            box.body()
            return nil
        }, box)
    if rc != 0 { Unmanaged<Box>.fromOpaque(box).release(); return false }
    return true
}
