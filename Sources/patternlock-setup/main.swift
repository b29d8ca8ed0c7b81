// SPDX-License-Identifier: Apache-2.0
import CPatternLockShims
import CWaylandClient
import Glibc
import PatternLock
import PatternLockDaemon
import PatternLockWire

// First of all: no core dump of a process that will hold a pattern, and no
// other process of the user may read its memory.
_ = pls_no_core_dumps()

let options: SetupOptions
switch SetupOptions.parse(Array(CommandLine.arguments.dropFirst())) {
case .run(let o): options = o
case .exit(let text, let code):
    if code == 0 { print(text) } else { say(text) }
    exit(code)
}

let asRoot = geteuid() == 0
if options.user != nil && !asRoot {
    say("Only root sets another user's pattern (--user); run patternlock-setup without it to set your own.")
    exit(2)
}
// As root it sets only the user it is told to: run through sudo, pkexec, doas
// or run0 it would otherwise set root's own pattern for a person who meant theirs.
guard options.user != nil || !asRoot else {
    say(
        "patternlock-setup sets your own pattern: run it as yourself, not as root. An administrator sets a user's pattern with: sudo patternlockd enroll USER (or root's own with --user root)."
    )
    exit(2)
}
guard let user = options.user ?? Accounts.currentUserName else {
    say("Cannot find your user name in the password database; nothing was changed.")
    exit(2)
}

// What the daemon knows of this user: a change needs the current pattern. When
// nothing drawn could help, the window (or stderr, without one) says who can.
var changing = false
var problem: String?
do throws(ClientError) {
    let reply = try DaemonConnection.request(.status(user: user), socket: options.address, timeout: 10)
    guard case .status(let s) = reply else { throw ClientWording.failure(for: reply, user: user) }
    changing = s.enrolled && !asRoot  // root replaces a pattern without the current one
    if options.remove && !s.enrolled && !s.corrupt {
        problem = "You have no unlock pattern, so there is nothing to remove. Set one with: patternlock-setup"
    }
    if !asRoot && (s.corrupt || s.locked) {
        let reply: Reply = s.locked ? .locked(retryAfter: s.retryAfter) : .error(.recordUnreadable)
        problem = ClientWording.failure(for: reply, user: user, current: true).description
    }
} catch {
    problem = error.description
}
if let problem { say(problem) }

guard let display = wl_display_connect(nil) else {
    if problem == nil {
        say(
            "patternlock-setup draws in a window of your Wayland desktop, and none was found (WAYLAND_DISPLAY is not set or its socket is gone). On a terminal, set the pattern with: patternlockd enroll"
        )
    }
    exit(2)
}
let app = SetupApp(display: display, options: options, user: user, changing: changing, problem: problem)
app.run()
