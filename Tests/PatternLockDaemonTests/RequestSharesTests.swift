// SPDX-License-Identifier: Apache-2.0
import PatternLock
import PatternLockDaemon
import PatternLockWire
import Testing

/// `RequestShares`: how many requests one caller, and one user name, may have in
/// hand at once, so that nobody keeps the daemon from answering another user.
@Suite("Shares of the requests in hand")
struct RequestSharesTests {
    static let alice: UInt32 = 1001, bob: UInt32 = 1002

    /// `admit`, outside `#expect` (which cannot call a mutating method).
    func take(_ shares: inout RequestShares, _ user: String, _ caller: UInt32) -> Bool {
        shares.admit(user: user, caller: caller)
    }

    @Test("One caller gets its share whichever users it asks about, then BUSY; another caller is still served")
    func oneCallerIsCappedAcrossUsers() {
        var shares = RequestShares()
        for i in 0..<RequestShares.perCaller {
            #expect(take(&shares, "victim\(i % 8)", Self.alice))
        }
        #expect(!take(&shares, "victim9", Self.alice), "over its share, about a user it had not asked about yet")
        #expect(shares.held(caller: Self.alice) == RequestShares.perCaller, "a refusal takes nothing")
        #expect(take(&shares, "carol", Self.bob))
        shares.release(user: "victim0", caller: Self.alice)
        #expect(take(&shares, "victim9", Self.alice), "a request answered gives its share back")
    }

    @Test("Requests about one user name from many callers get its share, then BUSY; other users are still served")
    func oneUserNameIsCappedAcrossCallers() {
        var shares = RequestShares()
        for i in 0..<RequestShares.perUser {
            #expect(take(&shares, "alice", 2000 + UInt32(i)))
        }
        #expect(!take(&shares, "alice", 3000))
        #expect(shares.held(user: "alice") == RequestShares.perUser)
        #expect(shares.held(caller: 3000) == 0, "a refusal takes nothing")
        #expect(take(&shares, "bob", 3000))
    }

    @Test("Root's own requests take no share and are never refused by one")
    func rootTakesNoShare() {
        var shares = RequestShares()
        for _ in 0..<RequestShares.perUser { #expect(take(&shares, "alice", Self.alice)) }
        #expect(!take(&shares, "alice", Self.bob))
        #expect(take(&shares, "alice", 0))
        #expect(shares.held(user: "alice") == RequestShares.perUser)
    }

    @Test("Giving every share back leaves nothing held")
    func releaseRestores() {
        var shares = RequestShares()
        for _ in 0..<5 { #expect(take(&shares, "alice", Self.alice)) }
        for _ in 0..<5 { shares.release(user: "alice", caller: Self.alice) }
        #expect(shares.held(user: "alice") == 0 && shares.held(caller: Self.alice) == 0)
    }

    @Test("A setuid program's request counts against the user who ran it; any other peer is its own caller")
    func theCallerIsWhoRanTheProgram() {
        let verify = Request.verify(
            user: "alice", pattern: SecretBytes("1397"), context: AttemptContext(service: "su", caller: Caller(uid: Self.alice)))
        #expect(RequestShares.subject(of: verify, peerUID: 0).map { [$0.user: $0.caller] } == ["alice": Self.alice])
        // A peer that is not root names itself, whatever caller it claims.
        #expect(RequestShares.subject(of: verify, peerUID: Self.bob).map { [$0.user: $0.caller] } == ["alice": Self.bob])
        let status = Request.status(user: "alice", caller: Caller(uid: 0))
        #expect(RequestShares.subject(of: status, peerUID: 0) == nil, "root's own request takes no share")
        #expect(RequestShares.subject(of: .remove(user: "alice", current: nil), peerUID: Self.alice)?.caller == Self.alice)
        #expect(RequestShares.subject(of: .ping, peerUID: Self.alice) == nil)
        #expect(RequestShares.subject(of: .list, peerUID: 0) == nil)
    }
}
