// SPDX-License-Identifier: Apache-2.0
import PatternLock
import PatternLockWire

/// One input through every parser that reads bytes an attacker can choose: the
/// daemon's request parser (any local user can connect), the client's reply
/// parser, the record file parser, the PHC string parser and the pattern rules.
/// Besides "never crash", each checks that what it accepted survives a round
/// trip through its own encoder unchanged.
func fuzzOne(_ data: UnsafeRawBufferPointer) {
    let bytes = Array(data)
    fuzzPercentEncoding(bytes)
    fuzzRequest(bytes)
    guard let text = String(validating: bytes, as: UTF8.self) else { return }
    fuzzReply(text)
    fuzzReplyEncoding(text)
    fuzzRecord(text)
    fuzzCredential(text)
    fuzzPattern(text)
}

/// A broken invariant: libFuzzer keeps the input as a crash-* file.
func violated(_ what: String, _ input: some StringProtocol) -> Never {
    fatalError("invariant broken: \(what) — input \(String(reflecting: String(input)))")
}

/// What the daemon does with a request line: `try Request(try Line(parsing: bytes))`.
func fuzzRequest(_ bytes: [UInt8]) {
    let line: Line
    do {
        line = try Line(parsing: bytes)
    } catch {
        // Only framing errors close the connection, and only for what framing forbids.
        if error == .tooLong && bytes.count < Line.maxRequestBytes { violated("tooLong for a short line", "\(bytes)") }
        if error == .nulByte && !bytes.contains(0) { violated("nulByte without a NUL", "\(bytes)") }
        return
    }
    let encoded = line.encoded()
    guard noFramingBytes(encoded) else { violated("encoded line holds LF, CR or NUL", encoded) }
    guard (try? Line(parsing: Array(encoded.utf8), maxBytes: .max)) == line else {
        violated("Line round trip", encoded)
    }
    guard let request = try? Request(line) else { return }
    let again = request.line.encoded()
    guard noFramingBytes(again) else { violated("encoded request holds LF, CR or NUL", again) }
    guard let back = try? Request(try Line(parsing: Array(again.utf8), maxBytes: .max)), back == request else {
        violated("Request round trip", again)
    }
}

/// What the Swift client does with a reply line: `Reply(line:)`.
func fuzzReply(_ text: String) {
    guard let reply = Reply(line: text) else { return }
    let line = reply.line
    guard noFramingBytes(line) else { violated("encoded reply holds LF, CR or NUL", line) }
    // Re-encoding may grow a value (a raw '/' becomes %2F) past the reply limit.
    if line.utf8.count < Line.maxReplyBytes, Reply(line: line) != reply {
        violated("Reply round trip", line)
    }
}

/// What the daemon sends: free text in a reply field comes back as it went out.
func fuzzReplyEncoding(_ text: String) {
    // A reason word the policy owns parses as its refusal: the one spelling of it.
    // An empty reason is no reply at all (the module refuses it too).
    let invalid: [Reply] =
        text.isEmpty ? [] : [text == "denylisted" ? .refused(.denylisted) : .invalid(InvalidReason(word: text))]
    for reply in [Reply.error(ErrorCode(rawValue: text)), .user(text)] + invalid {
        let line = reply.line
        guard noFramingBytes(line) else { violated("reply field not encoded", line) }
        if line.utf8.count < Line.maxReplyBytes, Reply(line: line) != reply {
            violated("Reply field round trip", line)
        }
    }
}

/// A record file as the store reads it.
func fuzzRecord(_ text: String) {
    guard let record = try? UserRecord(serialized: text) else { return }
    guard (try? UserRecord(serialized: record.serialized)) == record else {
        violated("UserRecord round trip", record.serialized)
    }
}

/// The PHC string inside a record: strict parsing means one spelling per credential.
func fuzzCredential(_ text: String) {
    guard let credential = try? Credential(phc: text) else { return }
    guard credential.phc == text else { violated("PHC string not canonical", text) }
}

/// Typed dots: a pattern is 4–9 distinct dots and normalizing is idempotent.
func fuzzPattern(_ text: String) {
    let pattern: Pattern
    do {
        pattern = try Pattern(typed: text)
    } catch {
        let reason = InvalidReason(error)
        guard reason.patternError != nil, InvalidReason(word: reason.word) == reason else {
            violated("reason without a parse", reason.word)
        }
        return
    }
    let dots = pattern.dots
    guard (Pattern.minimumDots...9).contains(dots.count), Set(dots).count == dots.count,
        dots.allSatisfy({ (1...9).contains($0) })
    else { violated("pattern out of the grid rules", text) }
    guard (try? Pattern(typed: pattern.digits)) == pattern else { violated("normalization not idempotent", text) }
}

/// Any bytes survive percent-encoding, which only ever emits the safe set.
func fuzzPercentEncoding(_ bytes: [UInt8]) {
    let encoded = PercentEncoding.encode(bytes)
    guard encoded.utf8.allSatisfy({ isSafe($0) }) else { violated("encoder emitted an unsafe byte", encoded) }
    guard PercentEncoding.decodeBytes(encoded.utf8) == bytes else { violated("percent round trip", encoded) }
}

private func isSafe(_ c: UInt8) -> Bool {
    switch c {
    case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
        UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
        UInt8(ascii: "~"), UInt8(ascii: "%"):
        return true
    default:
        return false
    }
}

private func noFramingBytes(_ s: String) -> Bool {
    !s.utf8.contains(where: { $0 == 0x0A || $0 == 0x0D || $0 == 0 })
}
