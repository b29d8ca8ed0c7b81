// SPDX-License-Identifier: Apache-2.0
import CPatternLockShims
import Glibc

/// A typed password (or any typed answer) in one locked buffer of its own: kept
/// out of swap (`mlock`), never copied into a `String`, wiped on every clear and
/// when the field goes. Holds at most `capacity` bytes (PAM's own limit is 512).
public final class SecretField: @unchecked Sendable {
    public static let capacity = 1024
    private let storage: UnsafeMutableBufferPointer<UInt8>
    public private(set) var count = 0

    public init() {
        storage = .allocate(capacity: Self.capacity)
        storage.initialize(repeating: 0)
        if let base = storage.baseAddress { _ = mlock(base, Self.capacity) }
    }

    deinit {
        clear()
        if let base = storage.baseAddress { _ = munlock(base, Self.capacity) }
        storage.deallocate()
    }

    public var isEmpty: Bool { count == 0 }

    /// How many characters are typed (what the masked field shows as bullets).
    public var characters: Int {
        var n = 0
        for i in 0..<count where storage[i] & 0xC0 != 0x80 { n += 1 }
        return n
    }

    /// Appends UTF-8 bytes; false (and nothing added) when they do not fit.
    @discardableResult
    public func append(_ bytes: some Collection<UInt8>) -> Bool {
        guard count + bytes.count <= Self.capacity else { return false }
        for b in bytes {
            storage[count] = b
            count += 1
        }
        return true
    }

    /// Deletes the last character (all its UTF-8 bytes).
    public func deleteLast() {
        while count > 0 {
            count -= 1
            let b = storage[count]
            storage[count] = 0
            if b & 0xC0 != 0x80 { break }
        }
    }

    public func clear() {
        if let base = storage.baseAddress { pl_wipe(base, Self.capacity) }
        count = 0
    }

    /// The bytes, for the duration of `body` only.
    public func withBytes<R>(_ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        body(UnsafeBufferPointer(rebasing: storage[..<count]))
    }
}
