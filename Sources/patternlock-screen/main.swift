// SPDX-License-Identifier: Apache-2.0
import CCairo
import CWaylandClient
import Glibc
import PatternLockPainting
import PatternLockScreen

// patternlock-screen: a Wayland lock screen (ext-session-lock-v1) with the 3×3
// pattern grid. See Options.usage and docs/patternlock-screen.1.

// First of all, in the screen and in its PAM child alike (posix_spawn's exec
// makes the child dumpable again): no core dump may hold a pattern or a password
// (the child holds libpam's and the modules' copies), whatever core_pattern is.
if pls_no_core_dumps() != 0 {
    say("cannot turn core dumps off (\(String(cString: strerror(errno)))); going on.")
}
let arguments = Array(CommandLine.arguments.dropFirst())
if arguments == [pamChildWord] { runPamChild() }

func fail(_ sentence: String, _ status: Int32) -> Never {
    say(sentence)
    exit(status)
}

let options: Options
do {
    switch try Options.parse(arguments) {
    case .help:
        print(Options.usage)
        exit(0)
    case .version:
        print("patternlock-screen \(PatternLockVersion.current)")
        exit(0)
    case .run(let o): options = o
    }
} catch {
    fail(error.message, 2)
}

// Nothing on this screen may be swapped out: the typed answers live in locked
// buffers of their own (SecretField); core dumps are off (above).
signal(SIGPIPE, SIG_IGN)

var image: OpaquePointer?
if let path = options.image {
    guard let s = cairo_image_surface_create_from_png(path), cairo_surface_status(s) == CAIRO_STATUS_SUCCESS else {
        fail("cannot read the image \(path) as PNG; give a PNG file to --image.", 2)
    }
    image = s
}

if let fd = options.readyFD, fcntl(fd, F_GETFD) < 0 {
    fail("--ready-fd \(fd) is not an open file descriptor.", 2)
}

let user: String = {
    guard let pw = getpwuid(getuid()), let name = pw.pointee.pw_name else { return "" }
    return String(cString: name)
}()

// --daemonize: the parent returns once the child has the lock (0), or with the
// child's own status when it could not lock.
var daemonPipe: Int32 = -1
if options.daemonize {
    var fds: [Int32] = [-1, -1]
    guard pipe(&fds) == 0 else { fail("cannot make a pipe: \(String(cString: strerror(errno))).", 1) }
    let pid = pls_fork()
    if pid < 0 { fail("cannot fork: \(String(cString: strerror(errno))).", 1) }
    if pid > 0 {
        close(fds[1])
        var byte: UInt8 = 0
        var n: Int
        repeat { n = read(fds[0], &byte, 1) } while n < 0 && errno == EINTR
        if n == 1 { exit(0) }
        var status: Int32 = 0
        _ = waitpid(pid, &status, 0)
        exit((status & 0x7F) == 0 ? (status >> 8) & 0xFF : 1)
    }
    close(fds[0])
    _ = fcntl(fds[1], F_SETFD, FD_CLOEXEC)
    setsid()
    daemonPipe = fds[1]
}

guard let display = wl_display_connect(nil) else {
    let name = getenv("WAYLAND_DISPLAY").map { String(cString: $0) } ?? "wayland-0"
    fail(
        "cannot connect to the Wayland compositor at \(name) (\(String(cString: strerror(errno)))); run patternlock-screen inside a Wayland session, with WAYLAND_DISPLAY and XDG_RUNTIME_DIR set.",
        1)
}

let app = App(options: options, display: display, user: user, image: image)
if let fd = options.readyFD { app.readyFDs.append(fd) }
if daemonPipe >= 0 { app.readyFDs.append(daemonPipe) }
app.askGlobals()
// The globals, then the outputs' scale and name events.
_ = wl_display_roundtrip(display)
guard app.lockManager != nil else {
    fail(
        "this compositor does not offer ext-session-lock-v1, so it cannot lock the session safely and nothing was locked; use a compositor that has it, such as sway 1.8 or later or labwc 0.8.",
        2)
}
guard app.globals?.compositor != nil, app.globals?.shm != nil else {
    fail("this compositor offers no wl_compositor or wl_shm, which the lock screen draws with; nothing was locked.", 1)
}
_ = wl_display_roundtrip(display)
app.startLock()
app.loop()
