// SPDX-License-Identifier: Apache-2.0
import CPatternLockShims

/// The bytes of a pattern, from the socket to the HMAC: one allocation of their
/// own, never copied into a `String` or a growing array, and wiped when the last
/// reference goes, on every path, valid or not (freed memory keeps no pattern).
///
/// Written only while it is made, read-only afterwards: that is why it may be
/// shared between threads.
public final class SecretBytes: @unchecked Sendable, Equatable, ExpressibleByStringLiteral, CustomStringConvertible {
    private let storage: UnsafeMutableBufferPointer<UInt8>
    /// How many of the allocated bytes hold the secret.
    public let count: Int

    /// Allocates `capacity` bytes and lets `fill` write into them; it returns how
    /// many it wrote, or nil to give up (what it wrote is wiped all the same).
    public init?(capacity: Int, fill: (UnsafeMutableBufferPointer<UInt8>) -> Int?) {
        storage = .allocate(capacity: max(capacity, 1))
        storage.initialize(repeating: 0)
        guard let n = fill(UnsafeMutableBufferPointer(rebasing: storage[..<capacity])), n <= capacity else {
            SecretBytes.release(storage)
            return nil
        }
        count = n
    }

    /// A copy of `bytes`; the caller wipes its own.
    public init(_ bytes: some Collection<UInt8>) {
        storage = .allocate(capacity: max(bytes.count, 1))
        storage.initialize(repeating: 0)
        var n = 0
        for b in bytes where n < storage.count {
            storage[n] = b
            n += 1
        }
        count = n
    }

    /// A client's or a test's pattern, which is a `String` already.
    public convenience init(_ text: String) { self.init(text.utf8) }

    public required convenience init(stringLiteral value: String) { self.init(value.utf8) }

    deinit { SecretBytes.release(storage) }

    private static func release(_ storage: UnsafeMutableBufferPointer<UInt8>) {
        if let base = storage.baseAddress { pl_wipe(base, storage.count) }
        storage.deallocate()
    }

    public var isEmpty: Bool { count == 0 }

    /// The bytes, for the duration of `body` only.
    public func withUnsafeBytes<R, E: Error>(_ body: (UnsafeBufferPointer<UInt8>) throws(E) -> R) throws(E) -> R {
        try body(UnsafeBufferPointer(rebasing: storage[..<count]))
    }

    public static func == (a: SecretBytes, b: SecretBytes) -> Bool {
        a.withUnsafeBytes { x in b.withUnsafeBytes { y in x.elementsEqual(y) } }
    }

    /// Never the bytes: a secret may end up in a log line or a test failure.
    public var description: String { "<\(count) secret bytes>" }
}
