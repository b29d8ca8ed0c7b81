// SPDX-License-Identifier: Apache-2.0
import CPamPatternLock
import Testing

@Suite("Requests")
struct RequestTests {
    func encoded(_ value: String, size: Int = 256) -> String? {
        formatted(size: size) { pl_percent_encode($0, $1, value, value.utf8.count) }
    }

    @Test(
        "percent-encoding keeps the unreserved set",
        arguments: [
            ("alice", "alice"), ("A-z0.9_~", "A-z0.9_~"), ("/dev/pts/0", "%2Fdev%2Fpts%2F0"),
            ("a b", "a%20b"), ("x=y&z", "x%3Dy%26z"), ("%", "%25"), ("", ""), ("caf\u{e9}", "caf%C3%A9"),
            ("a\nb", "a%0Ab"), ("bob@example", "bob%40example"), ("host$", "host%24"),
        ])
    func percentEncoding(raw: String, expected: String) {
        #expect(encoded(raw) == expected)
    }

    @Test("percent-encoding that does not fit fails")
    func encodingOverflow() {
        #expect(encoded("abc", size: 4) == "abc")
        #expect(encoded("abcd", size: 4) == nil)
        #expect(encoded("/", size: 3) == nil)
        #expect(encoded("/", size: 4) == "%2F")
    }

    @Test("STATUS request")
    func statusRequest() {
        #expect(formatted { pl_format_status_request($0, $1, "alice") } == "STATUS user=alice\n")
        #expect(formatted { pl_format_status_request($0, $1, "bob@corp") } == "STATUS user=bob%40corp\n")
    }

    @Test("VERIFY request carries the PAM context, empty when unset")
    func verifyRequest() {
        let full = formatted(size: 1024) {
            pl_format_verify_request($0, $1, "alice", "1235", "sudo", "/dev/pts/0", "", "alice")
        }
        #expect(full == "VERIFY user=alice pattern=1235 service=sudo tty=%2Fdev%2Fpts%2F0 rhost= ruser=alice\n")
        let bare = formatted(size: 1024) {
            pl_format_verify_request($0, $1, "alice", "1 2", nil, nil, nil, nil)
        }
        #expect(bare == "VERIFY user=alice pattern=1%202 service= tty= rhost= ruser=\n")
    }

    @Test("long context values are cut so the worst request still fits")
    func worstCaseFits() throws {
        let user = String(repeating: "@", count: 64)
        let entry = String(repeating: "/", count: 64)
        let context = String(repeating: "\u{e9}", count: 200)
        var caller = pl_caller()
        caller.uid = UInt32.max
        setField(&caller.session, String(repeating: "\u{e9}", count: 8))
        setField(&caller.seat, String(repeating: "/", count: 16))
        let line = try #require(
            formatted(size: 1024) {
                pl_format_verify_request_from($0, $1, user, entry, context, context, context, context, &caller)
            })
        #expect(line.utf8.count <= 1024)
        #expect(line.hasSuffix("\n"))
        let fields = line.dropLast().split(separator: " ")
        // Cut on a character boundary: each value is whole "%C3%A9" pairs.
        for field in fields.dropFirst(3).prefix(4) {
            let value = field.split(separator: "=", omittingEmptySubsequences: false)[1]
            #expect(value.count % 6 == 0)
            #expect(value.count > 0)
        }
        #expect(fields.suffix(3).map(String.init) == ["caller=4294967295", "session=%C3%A9%C3%A9%C3%A9", "seat=%2F%2F%2F%2F%2F%2F"])
    }

    @Test("the caller goes with STATUS and VERIFY: its uid, and its session and seat when it has them")
    func callerFields() {
        var caller = pl_caller()
        caller.uid = 1001
        #expect(formatted { pl_format_status_request_from($0, $1, "alice", &caller) } == "STATUS user=alice caller=1001\n")
        setField(&caller.session, "4")
        setField(&caller.seat, "seat0")
        #expect(
            formatted { pl_format_status_request_from($0, $1, "alice", &caller) }
                == "STATUS user=alice caller=1001 session=4 seat=seat0\n")
        setField(&caller.seat, "pts/3")
        #expect(
            formatted(size: 1024) { pl_format_verify_request_from($0, $1, "alice", "1235", "sudo", nil, nil, "bob", &caller) }
                == "VERIFY user=alice pattern=1235 service=sudo tty= rhost= ruser=bob caller=1001 session=4 seat=pts%2F3\n")
        #expect(formatted { pl_format_status_request_from($0, $1, "alice", nil) } == "STATUS user=alice\n")
    }

    @Test("a request that does not fit is refused and wiped")
    func verifyOverflow() {
        var buffer = [CChar](repeating: 0x41, count: 40)
        let n = pl_format_verify_request(&buffer, buffer.count, "alice", "123456789", "sudo", nil, nil, nil)
        #expect(n == -1)
        #expect(buffer.allSatisfy { $0 == 0 })
    }
}
