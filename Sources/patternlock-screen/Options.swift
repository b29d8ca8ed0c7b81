// SPDX-License-Identifier: Apache-2.0
import PatternLock
import PatternLockScreen

/// The command line (docs/patternlock-screen.1).
struct Options {
    var daemonize = false
    /// Background colour, 0xRRGGBB.
    var color: UInt32 = 0x1B1D22
    var image: String?
    var hidePath = false
    var layout: KeypadLayout = .phone
    var readyFD: Int32?
    var debug = false

    static let usage = """
        Usage: patternlock-screen [options]

        Locks a Wayland session (ext-session-lock-v1) and shows a 3×3 grid of dots.
        Draw your pattern with a finger or the pointer to unlock, type its dots on
        the keys 1-9 and press Enter, or type your password and press Enter. By
        touch alone, tap "Use password" under the grid: the screen draws its own
        keyboard (your compositor's keymap) with the password field.
        Checking goes through PAM (the service "patternlock-screen", which includes
        common-auth): pam_patternlock asks for the pattern, pam_unix for the password.

        Options:
          -f, --daemonize        return once the screen is locked (for swayidle before-sleep)
          -c, --color RRGGBB     background colour (default 1b1d22)
          -i, --image PATH       background image (PNG), scaled to fill each screen
              --hide-path        do not show the path while drawing (for watched screens)
              --layout phone|numpad
                                 the keys the digits 1-9 stand for: phone (1 2 3 on top,
                                 the default) or numpad (7 8 9 on top, as on a numeric keypad)
              --ready-fd FD      write a newline to FD once the screen is locked
          -d, --debug            say each event on stderr (never a pattern or password)
              --help             show this help
              --version          show the version

        Wrong pattern: the dots turn red and the module says how many attempts are
        left; after the fifth, the password field shows. Tap Esc on the screen's
        keyboard (or press Escape) on an empty password field to go back to the
        grid without using a password attempt.

        Exit status: 0 unlocked; 1 the compositor refused the lock (another locker
        is running) or an error; 2 the compositor has no ext-session-lock-v1.
        If patternlock-screen dies, the session stays locked: start it again.

        Example, in sway's config:
          exec swayidle -w timeout 300 'patternlock-screen -f' before-sleep 'patternlock-screen -f'
        """

    struct UsageError: Error {
        let message: String
    }

    enum Parsed {
        case run(Options)
        case help
        case version
    }

    static func parse(_ args: [String]) throws(UsageError) -> Parsed {
        var o = Options()
        var cursor = OptionCursor(args)
        while let arg = cursor.next() {
            func v() throws(UsageError) -> String {
                guard let value = cursor.value() else {
                    throw UsageError(message: "The option \(arg) needs a value; see patternlock-screen --help.")
                }
                return value
            }
            switch arg {
            case "-f", "--daemonize": o.daemonize = true
            case "-c", "--color":
                let text = try v()
                let hex = text.hasPrefix("#") ? String(text.dropFirst()) : text
                guard hex.count == 6, let c = UInt32(hex, radix: 16) else {
                    throw UsageError(
                        message: "The colour \"\(text)\" is not six hex digits RRGGBB (for example 1b1d22 or ff8800).")
                }
                o.color = c
            case "-i", "--image": o.image = try v()
            case "--hide-path": o.hidePath = true
            case "--layout":
                let text = try v()
                guard let l = KeypadLayout(rawValue: text) else {
                    throw UsageError(message: "The layout \"\(text)\" is not phone or numpad.")
                }
                o.layout = l
            case "--ready-fd":
                let text = try v()
                guard let fd = Int32(text), fd >= 0 else {
                    throw UsageError(message: "The --ready-fd value \"\(text)\" is not a file descriptor number.")
                }
                o.readyFD = fd
            case "-d", "--debug": o.debug = true
            case "-h", "--help": return .help
            case "--version": return .version
            default:
                throw UsageError(message: "Unknown option \"\(cursor.current)\"; see patternlock-screen --help.")
            }
        }
        return .run(o)
    }
}
