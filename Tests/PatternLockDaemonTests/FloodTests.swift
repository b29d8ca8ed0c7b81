// SPDX-License-Identifier: Apache-2.0
import Foundation
import PatternLock
import PatternLockDaemon
import PatternLockWire
import Synchronization
import Testing

/// What keeps one local user's flood of requests from the others: the turns the
/// uids take for the work before any hash (`TurnOrder`), and each uid's budget of
/// log lines (`LogBudget`).
@Suite("One user's flood")
struct FloodTests {
    static let flooder: UInt32 = 1001, other: UInt32 = 1002, third: UInt32 = 1003

    /// `arrive`, outside `#expect` (which cannot call a mutating method).
    func arrive(_ order: inout TurnOrder, _ uid: UInt32) -> (ticket: UInt64, now: Bool) { order.arrive(uid) }

    @Test("Another uid's request goes next, not after the flooding uid's queue")
    func anotherUIDGoesBeforeTheFloodDrains() {
        var order = TurnOrder(slots: 1)
        #expect(arrive(&order, Self.flooder).now, "a free slot is taken at once")
        let queued = (0..<31).map { _ in arrive(&order, Self.flooder).ticket }
        let theirs = arrive(&order, Self.other)
        #expect(!theirs.now)
        // The slot passes on: one of the flooder's, then the other uid's.
        var served: [UInt64] = []
        while let next = order.leave() { served.append(next) }
        #expect(served.count == 32)
        #expect(served.firstIndex(of: theirs.ticket) == 1, "served second of 32: \(served)")
        #expect(served.filter { $0 != theirs.ticket } == queued, "each uid's requests in the order they came")
        #expect(order.busy == 0 && order.waiting == 0)
    }

    @Test("Three uids take turns one request each, in the order they first waited")
    func uidsTakeTurns() {
        var order = TurnOrder(slots: 1)
        _ = arrive(&order, Self.flooder)
        var uidOf: [UInt64: UInt32] = [:]
        for uid in [Self.flooder, Self.flooder, Self.other, Self.flooder, Self.third, Self.other] {
            uidOf[arrive(&order, uid).ticket] = uid
        }
        var served: [UInt32] = []
        while let next = order.leave() { served.append(uidOf[next]!) }
        #expect(served == [Self.flooder, Self.other, Self.third, Self.flooder, Self.other, Self.flooder])
    }

    @Test("With slots free nobody waits; a slot given back with nobody waiting is free again")
    func freeSlotsAreTakenAtOnce() {
        var order = TurnOrder(slots: 2)
        #expect(arrive(&order, Self.flooder).now)
        #expect(arrive(&order, Self.flooder).now)
        #expect(!arrive(&order, Self.other).now)
        #expect(order.leave() != nil, "the waiting request gets the slot")
        #expect(order.leave() == nil && order.leave() == nil)
        #expect(order.busy == 0)
        #expect(arrive(&order, Self.third).now)
    }

    @Test("The turns are real: a thread of another uid runs before a flooding uid's waiting threads")
    func turnTakingRunsAnotherUIDNext() {
        let turns = TurnTaking(slots: 1)
        let log = Recorder()
        let release = Gate()
        var threads: [Thread] = []
        func start(_ uid: UInt32, _ name: String, hold: Bool = false) {
            let t = Thread {
                turns.take(uid) {
                    if hold { release.wait() }
                    log.append(name)
                }
                log.finished()
            }
            threads.append(t)
            t.start()
        }
        // The flooder holds the slot while its other requests and the other uid's queue up.
        start(Self.flooder, "flooder-0", hold: true)
        while !release.isWaiting { usleep(1000) }
        for i in 1...5 {
            start(Self.flooder, "flooder-\(i)")
            usleep(20_000)
        }
        start(Self.other, "other")
        usleep(50_000)
        release.open()
        while log.done < 7 { usleep(1000) }
        let lines = log.lines
        #expect(lines.count == 7)
        #expect(lines.firstIndex(of: "other").map { $0 <= 2 } == true, "\(lines)")
    }

    /// `admit`, outside `#expect`.
    func admit(_ budget: inout LogBudget, _ uid: UInt32, _ kind: LogBudget.Kind, at now: Double) -> Int? {
        budget.admit(uid: uid, kind: kind, now: now)
    }

    @Test("A uid writes its burst, then its lines are counted, and the next one written says how many")
    func aFloodIsCountedAndSaid() {
        var budget = LogBudget()
        let burst = Int(LogBudget.burst)
        for _ in 0..<burst { #expect(admit(&budget, Self.flooder, .information, at: 100) == 0) }
        for _ in 0..<1000 { #expect(admit(&budget, Self.flooder, .information, at: 100) == nil) }
        // Others are not touched: another uid, the same uid's warnings, root.
        #expect(admit(&budget, Self.other, .information, at: 100) == 0)
        #expect(admit(&budget, Self.flooder, .warning, at: 100) == 0)
        for _ in 0..<10_000 { #expect(admit(&budget, 0, .information, at: 100) == 0) }
        // Two seconds refill one line: it carries the count.
        #expect(admit(&budget, Self.flooder, .information, at: 102) == 1000)
        #expect(admit(&budget, Self.flooder, .information, at: 102) == nil)
    }

    @Test("Counts that no later line said are due, once each, and a quiet uid is forgotten")
    func unsaidCountsAreDue() {
        var budget = LogBudget()
        for _ in 0..<(Int(LogBudget.burst) + 7) { _ = admit(&budget, Self.flooder, .warning, at: 10) }
        let due = budget.due(now: 11)
        #expect(due.count == 1)
        #expect(due.first.map { $0.uid == Self.flooder && $0.kind == .warning && $0.suppressed == 7 } == true)
        #expect(budget.due(now: 11).isEmpty, "said once")
        #expect(admit(&budget, Self.flooder, .warning, at: 11.5) == nil, "still over its budget")
        #expect(budget.due(now: 11.5).first?.suppressed == 1)
        _ = budget.due(now: 10_000)
        #expect(admit(&budget, Self.flooder, .warning, at: 10_000) == 0, "refilled")
    }
}

/// A gate a thread waits at until the test opens it.
final class Gate: @unchecked Sendable {
    private let state = Mutex<(open: Bool, waiting: Bool)>((false, false))
    var isWaiting: Bool { state.withLock { $0.waiting } }
    func open() { state.withLock { $0.open = true } }
    func wait() {
        state.withLock { $0.waiting = true }
        while !state.withLock({ $0.open }) { usleep(1000) }
    }
}

/// Lines appended from several threads, in order.
final class Recorder: @unchecked Sendable {
    private let state = Mutex<(lines: [String], done: Int)>(([], 0))
    func append(_ line: String) { state.withLock { $0.lines.append(line) } }
    func finished() { state.withLock { $0.done += 1 } }
    var lines: [String] { state.withLock { $0.lines } }
    var done: Int { state.withLock { $0.done } }
}
