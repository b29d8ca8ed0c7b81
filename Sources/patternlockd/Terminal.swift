// SPDX-License-Identifier: Apache-2.0
import CPatternLockShims
import PatternLock
import PatternLockDaemon
import PatternLockWire
#if canImport(Glibc)
import Glibc
#endif

/// Reads patterns: from the terminal with echo off when stdin is one, otherwise
/// one line of stdin per pattern (so scripts and tests can drive the commands).
enum PatternInput {
    static var isTerminal: Bool { isatty(0) == 1 }

    // The terminal settings to restore if the user presses Ctrl-C mid-prompt.
    nonisolated(unsafe) private static var saved = termios()
    nonisolated(unsafe) private static var echoOff = false

    /// One pattern; nil at end of input. The process is made non-dumpable first, so
    /// a crash from here on leaves no core with the pattern in it.
    static func read(prompt: String) -> String? {
        holdsSecrets()
        guard isTerminal else { return readLine(strippingNewline: true) }
        var t = termios()
        guard tcgetattr(0, &t) == 0 else {
            print(prompt, terminator: "")
            fflush(nil)
            return readLine(strippingNewline: true)
        }
        // Echo off before the prompt shows, as getpass does: a pattern typed the
        // moment the prompt appears is neither echoed nor flushed away.
        saved = t
        t.c_lflag &= ~tcflag_t(ECHO)
        t.c_lflag |= tcflag_t(ECHONL)
        echoOff = tcsetattr(0, TCSAFLUSH, &t) == 0
        print(prompt, terminator: "")
        fflush(nil)
        signal(SIGINT) { _ in
            if PatternInput.echoOff { _ = tcsetattr(0, TCSAFLUSH, &PatternInput.saved) }
            _ = write(1, "\n", 1)
            _exit(130)
        }
        let line = readLine(strippingNewline: true)
        if echoOff { _ = tcsetattr(0, TCSAFLUSH, &saved); echoOff = false }
        signal(SIGINT, SIG_DFL)
        return line
    }

    /// Asks the kernel for no core dump of this process (PR_SET_DUMPABLE 0): a core
    /// would hold every pattern typed so far, and a `core_pattern` pipe hands it to
    /// a collector such as systemd-coredump. Said once; a failure is said on stderr
    /// and the command goes on (the pattern was going to be read anyway).
    static func holdsSecrets() {
        guard !undumpable else { return }
        undumpable = true
        if pl_set_undumpable() != 0 {
            printError("Warning: cannot turn off core dumps for this command (\(Errno.current)); a crash could leave the pattern in one.")
        }
    }
    nonisolated(unsafe) private static var undumpable = false

    /// Shows the grid the user types on, as its keys are laid out (terminal only).
    static func showGrid(title: String, layout: KeypadLayout = .phone) {
        guard isTerminal else { return }
        print(title)
        print(layout.grid)
    }
}
