// SPDX-License-Identifier: Apache-2.0
import Synchronization

/// One mutex per user name, created on demand and dropped when nobody holds or
/// waits for it: at most one evaluation per user is ever in flight, while
/// different users proceed in parallel.
final class UserLocks: Sendable {
    private final class Entry: Sendable {
        let mutex = Mutex<Void>(())
    }

    private let table = Mutex<[String: (entry: Entry, holders: Int)]>([:])

    func withLock<R: Sendable, E: Error>(_ user: String, _ body: () throws(E) -> R) throws(E) -> R {
        let entry = table.withLock { t -> Entry in
            if let slot = t[user] {
                t[user] = (slot.entry, slot.holders + 1)
                return slot.entry
            }
            let e = Entry()
            t[user] = (e, 1)
            return e
        }
        defer {
            table.withLock { t in
                if let slot = t[user] {
                    if slot.holders <= 1 { t[user] = nil } else { t[user] = (slot.entry, slot.holders - 1) }
                }
            }
        }
        return try entry.mutex.withLock { (_) throws(E) -> R in try body() }
    }
}
