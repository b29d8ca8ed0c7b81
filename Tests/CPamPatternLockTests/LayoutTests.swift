// SPDX-License-Identifier: Apache-2.0
import CPamPatternLock
import PatternLock
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// What `pl_layout_to_phone` makes of typed keys.
private func phoneDigits(_ typed: String, _ layout: pl_layout) -> String {
    var bytes = Array(typed.utf8CString)
    bytes.withUnsafeMutableBufferPointer { pl_layout_to_phone(layout, $0.baseAddress) }
    return bytes.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
}

@Suite("Keypad layouts")
struct LayoutTests {
    @Test("on a numeric keypad each key stands for the dot it sits on")
    func numpadKeys() {
        // numpad 7 8 9 / 4 5 6 / 1 2 3 over phone 1 2 3 / 4 5 6 / 7 8 9
        #expect(phoneDigits("123456789", PL_LAYOUT_NUMPAD) == "789456123")
    }

    @Test("the same L drawn on either keypad is the same pattern")
    func sameShape() {
        // Down the left column and along the bottom row: 14789 on a phone.
        #expect(phoneDigits("74123", PL_LAYOUT_NUMPAD) == "14789")
    }

    @Test("the phone layout leaves the keys as typed")
    func phoneUnchanged() {
        #expect(phoneDigits("14789", PL_LAYOUT_PHONE) == "14789")
    }

    @Test("what is not a key 1 to 9 is left for the daemon to refuse")
    func otherBytes() {
        #expect(phoneDigits("0a1 9-\u{e9}", PL_LAYOUT_NUMPAD) == "0a7 3-\u{e9}")
        #expect(phoneDigits("", PL_LAYOUT_NUMPAD) == "")
        pl_layout_to_phone(PL_LAYOUT_NUMPAD, nil)
    }

    @Test("each layout's rows are its keys, top row first")
    func rows() {
        #expect(String(cString: pl_layout_rows(PL_LAYOUT_PHONE)) == "  1 2 3\n  4 5 6\n  7 8 9")
        #expect(String(cString: pl_layout_rows(PL_LAYOUT_NUMPAD)) == "  7 8 9\n  4 5 6\n  1 2 3")
    }

    @Test("the module and the daemon map every key alike", arguments: [PL_LAYOUT_PHONE, PL_LAYOUT_NUMPAD])
    func sameMapping(layout: pl_layout) {
        let swift: KeypadLayout = layout == PL_LAYOUT_NUMPAD ? .numpad : .phone
        for key in "0123456789x" {
            #expect(phoneDigits(String(key), layout) == swift.phoneDigits(String(key)), "key \(key)")
        }
    }
}
