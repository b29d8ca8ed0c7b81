import CPamPatternLock
import Testing

@Suite("Reply parser")
struct ReplyParserTests {
    @Test("exactly OK is success")
    func ok() throws {
        let reply = try #require(parsedReply("OK"))
        #expect(reply.verb == PL_VERB_OK)
        #expect(reply.weak == 0)
    }

    @Test("OK weak=1: success, and the enroll policy would refuse the pattern today",
          arguments: [("OK weak=1", 1), ("OK weak=0", 0)])
    func okWeak(line: String, weak: Int32) throws {
        let reply = try #require(parsedReply(line))
        #expect(reply.verb == PL_VERB_OK)
        #expect(reply.weak == weak)
    }

    /// The one reply that grants access must be the whole line "OK".
    @Test(
        "anything else that looks like OK is rejected",
        arguments: [
            "OKAY", "OK ", " OK", "OK x", "OK iterations=600000", "ok", "Ok", "OK\r", "OK\t",
            "OK\n", "OK\u{0}", "OK\u{0}x", "\u{0}OK", "O K", "OK=1", "OKOK", "OK  ", "",
            "OK weak=2", "OK weak=", "OK weak=11", "OK weak=1 ", "OK weak=1 weak=1", "OK  weak=1",
            "OK weak=1 x=1", "OK x=1 weak=1", "OK Weak=1", "OK weak=%31", "OK weak", "OK weak=-1",
        ])
    func notOK(line: String) {
        #expect(parsedReply(line) == nil)
    }

    @Test("FAIL carries the attempts left", arguments: [("FAIL remaining=3", 3), ("FAIL remaining=0", 0), ("FAIL remaining=1", 1)])
    func fail(line: String, remaining: Int) throws {
        let reply = try #require(parsedReply(line))
        #expect(reply.verb == PL_VERB_FAIL)
        #expect(reply.remaining == remaining)
    }

    @Test(
        "FAIL without a usable count is rejected",
        arguments: [
            "FAIL", "FAIL remaining=", "FAIL remaining=abc", "FAIL remaining=-1", "FAIL remaining=+1",
            "FAIL remaining=1.5", "FAIL remaining= 3", "FAIL remaining=3 ", "FAIL  remaining=3",
            "FAIL remaining=3 remaining=2", "FAIL remaining=12345678901", "FAIL remaining",
            "FAIL =3", "FAIL Remaining=3", "FAIL remaining=%33",
        ])
    func badFail(line: String) {
        #expect(parsedReply(line) == nil)
    }

    @Test("LOCKED with and without retry_after")
    func locked() throws {
        let admin = try #require(parsedReply("LOCKED retry_after=0"))
        #expect(admin.verb == PL_VERB_LOCKED)
        #expect(admin.retry_after == 0)
        let timed = try #require(parsedReply("LOCKED retry_after=900"))
        #expect(timed.retry_after == 900)
        let bare = try #require(parsedReply("LOCKED"))
        #expect(bare.verb == PL_VERB_LOCKED)
        #expect(bare.retry_after == 0)
        #expect(parsedReply("LOCKED retry_after=soon") == nil)
    }

    @Test(
        "INVALID names its reason",
        arguments: [
            ("INVALID reason=too_short", PL_REASON_TOO_SHORT),
            ("INVALID reason=not_a_dot", PL_REASON_NOT_A_DOT),
            ("INVALID reason=repeated_dot", PL_REASON_REPEATED_DOT),
            ("INVALID reason=empty", PL_REASON_EMPTY),
            ("INVALID reason=current_required", PL_REASON_CURRENT_REQUIRED),
            ("INVALID reason=something_new", PL_REASON_OTHER),
        ])
    func invalid(line: String, reason: pl_reason) throws {
        let reply = try #require(parsedReply(line))
        #expect(reply.verb == PL_VERB_INVALID)
        #expect(reply.reason == reason)
    }

    @Test("INVALID without a reason is rejected", arguments: ["INVALID", "INVALID reason=", "INVALID why=too_short"])
    func invalidWithoutReason(line: String) {
        #expect(parsedReply(line) == nil)
    }

    @Test("a full STATUS line is understood")
    func status() throws {
        let line = "STATUS user=alice enrolled=1 failures=2 remaining=3 locked=0 locked_since=0 "
            + "retry_after=0 iterations=600000 corrupt=0 recent=1700000000,0,sudo,%2Fdev%2Fpts%2F0,;1700000001,1000,login,tty1,"
        let reply = try #require(parsedReply(line))
        #expect(reply.verb == PL_VERB_STATUS)
        #expect(reply.enrolled == 1)
        #expect(reply.locked == 0)
        #expect(reply.remaining == 3)
        #expect(reply.retry_after == 0)
    }

    @Test("a locked STATUS with a timed unlock")
    func lockedStatus() throws {
        let reply = try #require(parsedReply("STATUS user=bob enrolled=1 failures=5 remaining=0 locked=1 retry_after=120 recent="))
        #expect(reply.locked == 1)
        #expect(reply.retry_after == 120)
    }

    @Test(
        "STATUS without enrolled or locked, or with odd values, is rejected",
        arguments: [
            "STATUS", "STATUS user=alice", "STATUS user=alice enrolled=1", "STATUS user=alice locked=0",
            "STATUS user=alice enrolled=2 locked=0", "STATUS user=alice enrolled=1 locked=yes",
            "STATUS user=alice enrolled=1 enrolled=1 locked=0", "STATUS user=al%ZZ enrolled=1 locked=0",
            "STATUS user=alice enrolled=1 locked=0 recent=%4",
        ])
    func badStatus(line: String) {
        #expect(parsedReply(line) == nil)
    }

    @Test(
        "verbs without fields",
        arguments: [
            ("NOT_ENROLLED", PL_VERB_NOT_ENROLLED), ("DENIED", PL_VERB_DENIED), ("BUSY", PL_VERB_BUSY),
            ("ERROR message=bad_user", PL_VERB_ERROR), ("ERROR", PL_VERB_ERROR),
        ])
    func plainVerbs(line: String, verb: pl_verb) throws {
        let reply = try #require(parsedReply(line))
        #expect(reply.verb == verb)
    }

    @Test(
        "unknown verbs and garbage are rejected",
        arguments: [
            "PONG version=1", "HELLO", "fail remaining=3", "FAILED remaining=3", "garbage", "\u{1b}[2J",
            "FAIL remaining=3\u{0}", "STATUS user=\u{e9} enrolled=1 locked=0", "=", " ",
        ])
    func garbage(line: String) {
        #expect(parsedReply(line) == nil)
    }

    @Test("a line of 4096 bytes or more is rejected, 4095 is read")
    func oversized() {
        let longest = "ERROR message=" + String(repeating: "x", count: 4095 - 14)
        #expect(longest.utf8.count == 4095)
        #expect(parsedReply(longest)?.verb == PL_VERB_ERROR)
        #expect(parsedReply(longest + "x") == nil)
        #expect(parsedReply("OK" + String(repeating: " ", count: 5000)) == nil)
    }

    @Test("a rejected line leaves no verb behind")
    func rejectedLeavesNone() {
        var reply = pl_reply()
        reply.verb = PL_VERB_OK
        let rc = pl_parse_reply("OKAY", 4, &reply)
        #expect(rc == -1)
        #expect(reply.verb == PL_VERB_NONE)
    }
}
