// SPDX-License-Identifier: Apache-2.0
import Glibc
import PatternLock
import PatternLockDaemon
import PatternLockPainting
import PatternLockScreen

/// The command line (docs/patternlock-setup.1).
struct SetupOptions {
    var socket: String?
    /// Root only: whose pattern (an administrator's drawing; no current pattern, no password).
    var user: String?
    var layout: KeypadLayout = .phone
    var debug = false
    /// Remove the pattern: the current one drawn, then REMOVE.
    var remove = false

    static let usage = """
        Usage: patternlock-setup [options]

        Sets, or changes, your unlock pattern by drawing it in a window, as a phone
        does: draw a pattern over the 3×3 dots with a finger or the pointer (or type
        its dots on the keys 1-9 and press Enter), see at once whether it is one of
        the patterns people choose most (the line turns red, and the window says
        why) or acceptable (green), continue, draw it again to confirm, and it is
        set. Nothing drawn here is counted as an attempt, except the current pattern
        when you change one. A change asks for the current pattern first.

        Your first pattern also needs your password, once: polkit asks for it in
        this window (or through your desktop's own authentication agent, where it
        runs one), with a masked field and an on-screen keyboard to tap it on.
        Nothing is stored until both drawings agree and the daemon has accepted
        them; cancel at any time.

        With --remove, the window asks for your current pattern and removes it:
        from then on your password is asked where the pattern was.

        Options:
              --socket PATH      the daemon's socket (default: $PATTERNLOCK_SOCKET,
                                 else \(DaemonAddress.defaultPath))
              --layout phone|numpad
                                 the keys the digits 1-9 stand for: phone (1 2 3 on top,
                                 the default) or numpad (7 8 9 on top)
              --remove           remove your pattern: draw the current one to confirm
              --user NAME        as root only: set NAME's pattern (neither the current
                                 pattern nor a password is asked, as patternlockd
                                 enroll NAME); make demo draws its pattern this way
          -d, --debug            say what the window shows on stderr (never a pattern)
              --help             show this help
              --version          show the version

        Keys: 1-9 draw, Enter ends the dots typed and then continues, Backspace
        clears them, Escape cancels (or redraws once a pattern is recorded).

        Exit status: 0 the pattern was set (or removed); 1 cancelled, nothing changed; 2 an
        error (the daemon, the desktop or your account), said on stderr.
        On a terminal, patternlockd enroll does the same with typed digits.
        """

    var address: DaemonAddress { DaemonAddress.resolve(socket: socket) }

    enum Parsed {
        case run(SetupOptions)
        case exit(String, Int32)
    }

    static func parse(_ args: [String]) -> Parsed {
        var o = SetupOptions()
        var cursor = OptionCursor(args)
        while let arg = cursor.next() {
            func value() -> String? { cursor.value() }
            switch arg {
            case "--socket":
                guard let v = value(), !v.isEmpty else {
                    return .exit("The option --socket needs a path; see patternlock-setup --help.", 2)
                }
                o.socket = v
            case "--user":
                guard let v = value(), UserName.isValid(v) else {
                    return .exit("The option --user needs a user name; see patternlock-setup --help.", 2)
                }
                o.user = v
            case "--layout":
                guard let v = value(), let l = KeypadLayout(rawValue: v) else {
                    return .exit("The option --layout takes phone or numpad; see patternlock-setup --help.", 2)
                }
                o.layout = l
            case "--remove": o.remove = true
            case "-d", "--debug": o.debug = true
            case "-h", "--help": return .exit(usage, 0)
            case "--version": return .exit("patternlock-setup \(PatternLockVersion.current)", 0)
            default:
                return .exit("Unknown option \"\(cursor.current)\"; see patternlock-setup --help.", 2)
            }
        }
        if o.remove && o.user != nil {
            return .exit(
                "--remove removes your own pattern, drawn; root removes a user's with: patternlockd remove USER", 2)
        }
        return .run(o)
    }
}

/// Writes a line to stderr: `patternlock-setup: ` and `text`.
func say(_ text: String) { sayLine("patternlock-setup", text) }
