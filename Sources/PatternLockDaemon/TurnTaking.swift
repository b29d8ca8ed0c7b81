// SPDX-License-Identifier: Apache-2.0
import PatternLock
#if canImport(Glibc)
import Glibc
#endif

/// Who goes next among the requests waiting to be read: the uids take turns, one
/// request each, in the order they first waited (round robin), so one uid's
/// queue of requests never stands between another uid's request and the daemon.
/// `slots` requests are worked on at once. A pure decision; `TurnTaking` runs it.
package struct TurnOrder: Sendable {
    package let slots: Int
    package private(set) var busy = 0
    /// Uids with requests waiting, in the order of their next turn.
    private var ring: [UInt32] = []
    /// Each uid's waiting tickets, oldest first.
    private var queues: [UInt32: [UInt64]] = [:]
    private var nextTicket: UInt64 = 0

    package init(slots: Int) { self.slots = max(1, slots) }

    /// A request of `uid` arrives: its ticket, and whether it may go now (a slot
    /// is free and nobody waits); otherwise it waits for `leave()` to name it.
    package mutating func arrive(_ uid: UInt32) -> (ticket: UInt64, now: Bool) {
        let ticket = nextTicket
        nextTicket += 1
        if busy < slots && ring.isEmpty {
            busy += 1
            return (ticket, true)
        }
        if queues[uid] == nil {
            ring.append(uid)
            queues[uid] = [ticket]
        } else {
            queues[uid]?.append(ticket)
        }
        return (ticket, false)
    }

    /// A request is done with its slot: the ticket it passes to (the first
    /// request of the uid whose turn it is, which then goes to the back of the
    /// line), or nil when nobody waits and the slot is free.
    package mutating func leave() -> UInt64? {
        guard !ring.isEmpty else {
            busy -= 1
            return nil
        }
        let uid = ring.removeFirst()
        var queue = queues[uid] ?? []
        let ticket = queue.removeFirst()
        if queue.isEmpty {
            queues[uid] = nil
        } else {
            queues[uid] = queue
            ring.append(uid)
        }
        return ticket
    }

    package var waiting: Int { queues.values.reduce(0) { $0 + $1.count } }
}

/// The daemon's turns (`TurnOrder`) for the work it does on a request line before
/// any hash and without any user's lock: parsing it, and answering PING and
/// CHECK (the policy's lookup), and a malformed line's error. Without turns, one
/// user's 32 connections of CHECKs were 32 threads against another user's one,
/// and that user's VERIFY took 0.4–1.5 s instead of 65 ms. With them that uid's
/// connections wait their turn, asleep, and its flood costs the machine one
/// slot. Replies are written after the turn ends, so a client that does not read
/// holds nobody's turn. One slot on a machine of 2 cores (half the cores): the
/// other half stays for the hashes, which every user's own lock already keeps
/// to one at a time per user.
package final class TurnTaking: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private var order: TurnOrder
    /// The waiting threads by ticket, each on a condition of its own, so that
    /// a turn given wakes the one thread it is given to.
    private var sleepers: [UInt64: UnsafeMutablePointer<pthread_cond_t>] = [:]
    private var granted: Set<UInt64> = []

    package init(slots: Int = TurnTaking.defaultSlots) {
        order = TurnOrder(slots: slots)
        mutex = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Half the processors online, at least one.
    package static var defaultSlots: Int { max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN)) / 2) }

    /// Runs `body` in `uid`'s turn.
    package func take<R>(_ uid: UInt32, _ body: () throws -> R) rethrows -> R {
        pthread_mutex_lock(mutex)
        let (ticket, now) = order.arrive(uid)
        if !now {
            let wake = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
            pthread_cond_init(wake, nil)
            sleepers[ticket] = wake
            while !granted.contains(ticket) { pthread_cond_wait(wake, mutex) }
            granted.remove(ticket)
            sleepers[ticket] = nil
            pthread_cond_destroy(wake)
            wake.deallocate()
        }
        pthread_mutex_unlock(mutex)
        defer {
            pthread_mutex_lock(mutex)
            if let next = order.leave() {
                granted.insert(next)
                if let wake = sleepers[next] { pthread_cond_signal(wake) }
            }
            pthread_mutex_unlock(mutex)
        }
        return try body()
    }
}
