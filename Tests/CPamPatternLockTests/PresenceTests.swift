// SPDX-License-Identifier: Apache-2.0
import CPamPatternLock
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// One row of the decision table: what logind and PAM say, and the verdict.
struct PresenceCase: CustomStringConvertible, Sendable {
    var name: String
    var logind = true
    var inSession = false
    var remote: Int32 = 0
    var seat = false
    var vt = false
    var tty = false
    var greeter = false
    var gdmReauth = false
    var service: String? = "sudo"
    var pamTTY: String? = nil
    var rhost: String? = nil
    var options: [String] = []
    var verdict: pl_presence_verdict

    var description: String { name }
}

@Suite("Who is asked")
struct PresenceTests {
    static let table: [PresenceCase] = [
        // (a) In a logind session: local with a seat, VT or tty asks; remote never.
        PresenceCase(
            name: "sudo in a local graphical session", inSession: true, seat: true, vt: true,
            pamTTY: "/dev/pts/0", verdict: PL_PRESENCE_ASK),
        PresenceCase(
            name: "su on a text console", inSession: true, seat: true, vt: true, tty: true, service: "su",
            pamTTY: "/dev/tty2", verdict: PL_PRESENCE_ASK),
        PresenceCase(
            name: "a local pty session without a seat (login on a container console)", inSession: true, tty: true,
            pamTTY: "/dev/pts/3", verdict: PL_PRESENCE_ASK),
        PresenceCase(
            name: "polkit-agent-helper-1 in a local session (no PAM_TTY)", inSession: true, seat: true, vt: true,
            service: "polkit-1", verdict: PL_PRESENCE_ASK),
        PresenceCase(
            name: "a screen locker in a Wayland session", inSession: true, seat: true, vt: true, service: "swaylock",
            verdict: PL_PRESENCE_ASK),
        PresenceCase(
            name: "sudo inside an SSH session", inSession: true, remote: 1, tty: true, pamTTY: "/dev/pts/1",
            verdict: PL_PRESENCE_REMOTE_SESSION),
        PresenceCase(
            name: "su inside an SSH session", inSession: true, remote: 1, tty: true, service: "su",
            pamTTY: "/dev/pts/1", verdict: PL_PRESENCE_REMOTE_SESSION),
        PresenceCase(
            name: "a session whose locality logind cannot tell", inSession: true, remote: -1, seat: true,
            verdict: PL_PRESENCE_REMOTE_SESSION),
        PresenceCase(
            name: "a local session with no seat, VT or tty (cron's)", inSession: true, service: "cron",
            verdict: PL_PRESENCE_NO_TERMINAL),
        // (b) PAM_RHOST of another host wins over logind.
        PresenceCase(
            name: "a local session but PAM_RHOST of another host", inSession: true, seat: true, rhost: "203.0.113.7",
            verdict: PL_PRESENCE_REMOTE_HOST),
        PresenceCase(
            name: "sshd authenticating", service: "sshd", pamTTY: "ssh", rhost: "127.0.0.1",
            verdict: PL_PRESENCE_REMOTE_HOST),
        PresenceCase(
            name: "xsecurelock (PAM_RHOST localhost, a display)", inSession: true, seat: true, vt: true,
            service: "common-auth", pamTTY: ":5", rhost: "localhost", verdict: PL_PRESENCE_ASK),
        // In no session: only a login service on a terminal of this machine.
        PresenceCase(name: "console login before its session", service: "login", pamTTY: "/dev/tty1", verdict: PL_PRESENCE_ASK),
        PresenceCase(name: "login on a pty", service: "login", pamTTY: "/dev/pts/4", rhost: "", verdict: PL_PRESENCE_ASK),
        PresenceCase(name: "login with tty1 without /dev", service: "login", pamTTY: "tty1", verdict: PL_PRESENCE_ASK),
        PresenceCase(name: "gdm on a display", service: "gdm-password", pamTTY: ":0", verdict: PL_PRESENCE_ASK),
        PresenceCase(name: "lightdm on display :1.0", service: "lightdm", pamTTY: ":1.0", verdict: PL_PRESENCE_ASK),
        PresenceCase(name: "greetd on a VT", service: "greetd", pamTTY: "/dev/tty7", verdict: PL_PRESENCE_ASK),
        PresenceCase(
            name: "login from telnetd (remote PAM_RHOST)", service: "login", pamTTY: "/dev/pts/2",
            rhost: "198.51.100.2", verdict: PL_PRESENCE_REMOTE_HOST),
        PresenceCase(name: "login with no tty", service: "login", verdict: PL_PRESENCE_NO_SESSION),
        PresenceCase(name: "login on a serial console", service: "login", pamTTY: "ttyS0", verdict: PL_PRESENCE_NO_SESSION),
        PresenceCase(name: "login on another host's display", service: "login", pamTTY: "host:0", verdict: PL_PRESENCE_NO_SESSION),
        PresenceCase(name: "saslauthd (no session, no tty)", service: "smtp", verdict: PL_PRESENCE_NO_SESSION),
        PresenceCase(name: "xrdp-sesman", service: "xrdp-sesman", verdict: PL_PRESENCE_NO_SESSION),
        PresenceCase(name: "dovecot for webmail", service: "dovecot", rhost: "127.0.0.1", verdict: PL_PRESENCE_NO_SESSION),
        PresenceCase(name: "sudo in no session, even on a pty", pamTTY: "/dev/pts/0", verdict: PL_PRESENCE_NO_SESSION),
        PresenceCase(
            name: "sudo made a login service", pamTTY: "/dev/pts/0", options: ["login_services=login,sudo"],
            verdict: PL_PRESENCE_ASK),
        PresenceCase(
            name: "login_services= empty: no login service", service: "login", pamTTY: "/dev/tty1",
            options: ["login_services="], verdict: PL_PRESENCE_NO_SESSION),
        PresenceCase(
            name: "services= is for hosts without logind only", pamTTY: "/dev/pts/0", options: ["services=sudo"],
            verdict: PL_PRESENCE_NO_SESSION),
        // Without logind: the services= list alone.
        PresenceCase(name: "no logind, no option", logind: false, pamTTY: "/dev/pts/0", verdict: PL_PRESENCE_NO_LOGIND),
        PresenceCase(
            name: "no logind, no option, login on a VT", logind: false, service: "login", pamTTY: "/dev/tty1",
            verdict: PL_PRESENCE_NO_LOGIND),
        PresenceCase(
            name: "no logind, listed", logind: false, options: ["services=sudo,su,login"], verdict: PL_PRESENCE_ASK_LISTED),
        PresenceCase(
            name: "no logind, not listed", logind: false, service: "smtp", options: ["services=sudo,su,login"],
            verdict: PL_PRESENCE_NOT_LISTED),
        PresenceCase(
            name: "no logind, a prefix of a listed name is not listed", logind: false, service: "su",
            options: ["services=sudo"], verdict: PL_PRESENCE_NOT_LISTED),
        PresenceCase(
            name: "no logind, listed but remote", logind: false, rhost: "203.0.113.7", options: ["services=sudo"],
            verdict: PL_PRESENCE_REMOTE_HOST),
        PresenceCase(
            name: "no logind, no PAM_SERVICE", logind: false, service: nil, options: ["services=sudo"],
            verdict: PL_PRESENCE_NOT_LISTED),
        // allow_remote asks everyone, as documented.
        PresenceCase(
            name: "allow_remote: sshd", service: "sshd", pamTTY: "ssh", rhost: "203.0.113.7", options: ["allow_remote"],
            verdict: PL_PRESENCE_ASK_ALLOWED),
        PresenceCase(
            name: "allow_remote: saslauthd", service: "smtp", options: ["allow_remote"], verdict: PL_PRESENCE_ASK_ALLOWED),
        PresenceCase(
            name: "allow_remote: no logind", logind: false, options: ["allow_remote"], verdict: PL_PRESENCE_ASK_ALLOWED),
        // With password_at_login too, a new session's login is still the password's.
        PresenceCase(
            name: "allow_remote, password_at_login: console login", service: "login", pamTTY: "/dev/tty1",
            options: ["allow_remote", "password_at_login"], verdict: PL_PRESENCE_NEW_LOGIN),
        PresenceCase(
            name: "allow_remote, password_at_login: a greeter's session", inSession: true, seat: true, vt: true,
            greeter: true, service: "lightdm", pamTTY: ":0", options: ["allow_remote", "password_at_login"],
            verdict: PL_PRESENCE_NEW_LOGIN),
        PresenceCase(
            name: "allow_remote, password_at_login: sshd", service: "sshd", pamTTY: "ssh", rhost: "203.0.113.7",
            options: ["allow_remote", "password_at_login"], verdict: PL_PRESENCE_ASK_ALLOWED),
        PresenceCase(
            name: "allow_remote, password_at_login: sudo in a session", inSession: true, seat: true, vt: true,
            pamTTY: "/dev/pts/0", options: ["allow_remote", "password_at_login"], verdict: PL_PRESENCE_ASK_ALLOWED),
        // password_at_login: a new session gets the password (for the keyring); one already open, the pattern.
        PresenceCase(
            name: "password_at_login: console login before its session", service: "login", pamTTY: "/dev/tty1",
            options: ["password_at_login"], verdict: PL_PRESENCE_NEW_LOGIN),
        PresenceCase(
            name: "password_at_login: login on a pty", service: "login", pamTTY: "/dev/pts/4",
            options: ["password_at_login"], verdict: PL_PRESENCE_NEW_LOGIN),
        PresenceCase(
            name: "password_at_login: gdm on a display", service: "gdm-password", pamTTY: ":0",
            options: ["password_at_login"], verdict: PL_PRESENCE_NEW_LOGIN),
        PresenceCase(
            name: "password_at_login: a greeter's session", inSession: true, seat: true, vt: true, greeter: true,
            service: "lightdm", pamTTY: ":0", options: ["password_at_login"], verdict: PL_PRESENCE_NEW_LOGIN),
        PresenceCase(
            name: "a greeter's session without password_at_login", inSession: true, seat: true, vt: true, greeter: true,
            service: "lightdm", pamTTY: ":0", verdict: PL_PRESENCE_ASK),
        PresenceCase(
            name: "password_at_login: sudo in a local session", inSession: true, seat: true, vt: true,
            pamTTY: "/dev/pts/0", options: ["password_at_login"], verdict: PL_PRESENCE_ASK),
        PresenceCase(
            name: "password_at_login: su on a console session", inSession: true, tty: true, service: "su",
            pamTTY: "/dev/pts/3", options: ["password_at_login"], verdict: PL_PRESENCE_ASK),
        PresenceCase(
            name: "password_at_login: login run inside a session", inSession: true, tty: true, service: "login",
            pamTTY: "/dev/pts/3", options: ["password_at_login"], verdict: PL_PRESENCE_ASK),
        PresenceCase(
            name: "password_at_login: xsecurelock in the session", inSession: true, seat: true, vt: true,
            service: "xsecurelock", pamTTY: ":5", rhost: "localhost", options: ["password_at_login"],
            verdict: PL_PRESENCE_ASK),
        PresenceCase(
            name: "password_at_login: polkit agent in the session", inSession: true, seat: true, vt: true,
            service: "polkit-1", options: ["password_at_login"], verdict: PL_PRESENCE_ASK),
        PresenceCase(
            name: "password_at_login: a daemon is still not asked", service: "smtp", options: ["password_at_login"],
            verdict: PL_PRESENCE_NO_SESSION),
        PresenceCase(
            name: "password_at_login: a remote session is still remote", inSession: true, remote: 1, tty: true,
            service: "sudo", pamTTY: "/dev/pts/1", options: ["password_at_login"], verdict: PL_PRESENCE_REMOTE_SESSION),
        // GDM unlocking a session already open (GNOME's unlock dialog): from inside the session GDM
        // started, or from outside one it did not, where the probe takes the user's active graphical
        // session if the user has no remote one. PAM_TTY is GDM's first VT either way.
        PresenceCase(
            name: "GDM unlocking a local seated session", inSession: true, seat: true, gdmReauth: true,
            service: "gdm-password", pamTTY: "/dev/tty1", verdict: PL_PRESENCE_ASK),
        PresenceCase(
            name: "GDM unlocking a local seated session, password_at_login: not a login", inSession: true, seat: true,
            gdmReauth: true, service: "gdm-password", options: ["password_at_login"], verdict: PL_PRESENCE_ASK),
        PresenceCase(
            name: "GDM unlocking a remote-desktop session", inSession: true, remote: 1, seat: false, gdmReauth: true,
            service: "gdm-password", rhost: "0.0.0.0", verdict: PL_PRESENCE_REMOTE_HOST),
        PresenceCase(
            name: "GDM unlocking a remote session (no PAM_RHOST)", inSession: true, remote: 1, gdmReauth: true,
            service: "gdm-password", verdict: PL_PRESENCE_REMOTE_SESSION),
        PresenceCase(
            name: "GDM unlocking a session without a seat (headless)", inSession: true, gdmReauth: true,
            service: "gdm-password", verdict: PL_PRESENCE_NO_TERMINAL),
        PresenceCase(
            name: "GDM unlocking, no session of the user to take (none active, or a remote one)", gdmReauth: true,
            service: "gdm-password", pamTTY: "/dev/tty1", verdict: PL_PRESENCE_REAUTH_NO_SESSION),
        PresenceCase(
            name: "GDM unlocking, no session to take, password_at_login", gdmReauth: true, service: "gdm-password",
            pamTTY: "/dev/tty1", options: ["password_at_login"], verdict: PL_PRESENCE_REAUTH_NO_SESSION),
        PresenceCase(
            name: "a login at GDM's greeter is a login as before", service: "gdm-password", pamTTY: "/dev/tty1",
            verdict: PL_PRESENCE_ASK),
        PresenceCase(
            name: "password_at_login: a login at GDM's greeter is a new login", service: "gdm-password",
            pamTTY: "/dev/tty1", options: ["password_at_login"], verdict: PL_PRESENCE_NEW_LOGIN),
        PresenceCase(
            name: "password_at_login, no logind: a login service is a new login", logind: false, service: "login",
            pamTTY: "/dev/tty1", options: ["services=sudo,su,login", "password_at_login"],
            verdict: PL_PRESENCE_NEW_LOGIN),
        PresenceCase(
            name: "password_at_login, no logind: sudo is asked", logind: false, pamTTY: "/dev/pts/0",
            options: ["services=sudo,su,login", "password_at_login"], verdict: PL_PRESENCE_ASK_LISTED),
        PresenceCase(
            name: "password_at_login, no logind: login_services= decides", logind: false, service: "su",
            options: ["services=sudo,su,login", "login_services=login,su", "password_at_login"],
            verdict: PL_PRESENCE_NEW_LOGIN),
    ]

    @Test(
        "grid=auto: the full grid on a terminal device, compact elsewhere",
        arguments: [
            ("/dev/tty1", true), ("tty2", true), ("/dev/pts/0", true), ("pts/3", true), ("/dev/ttyS0", true),
            ("ttyS0", true), ("/dev/console", true), (":0", false), (":5", false), (":1.0", false), ("host:0", false),
            ("ssh", false), ("", false), ("/dev/", false), ("tty", false), ("pts/", false), ("console", false),
        ])
    func gridAuto(tty: String, terminal: Bool) {
        #expect(pl_tty_is_terminal(tty) == terminal)
        #expect(pl_grid_choose(PL_GRID_AUTO, tty) == (terminal ? PL_GRID_FULL : PL_GRID_COMPACT))
        for fixed in [PL_GRID_FULL, PL_GRID_COMPACT, PL_GRID_NONE] {
            #expect(pl_grid_choose(fixed, tty) == fixed)
        }
    }

    @Test("grid=auto without PAM_TTY (a polkit agent, a Wayland locker) is compact")
    func gridAutoUnset() {
        #expect(!pl_tty_is_terminal(nil))
        #expect(pl_grid_choose(PL_GRID_AUTO, nil) == PL_GRID_COMPACT)
    }

    @Test("the decision table", arguments: table)
    func decide(_ c: PresenceCase) {
        var config = parsedConfig(c.options).config
        let verdict = withOptionalCString(c.service) { service in
            withOptionalCString(c.pamTTY) { tty in
                withOptionalCString(c.rhost) { rhost in
                    var p = pl_presence(
                        logind: c.logind, in_session: c.inSession, session_remote: c.remote, session_seat: c.seat,
                        session_vt: c.vt, session_tty: c.tty, session_greeter: c.greeter, gdm_reauth: c.gdmReauth, user_known: c.gdmReauth,
                        user_uid: 1000, service: service, tty: tty, rhost: rhost,
                        hostname: "myhost")
                    return pl_presence_decide(&p, &config)
                }
            }
        }
        #expect(verdict == c.verdict, "\(c.name)")
        let asks = [PL_PRESENCE_ASK, PL_PRESENCE_ASK_ALLOWED, PL_PRESENCE_ASK_LISTED].contains(verdict)
        #expect(pl_presence_asks(verdict) == asks)
    }

    @Test("every verdict has words for the log")
    func reasons() {
        let all = [
            PL_PRESENCE_ASK, PL_PRESENCE_ASK_ALLOWED, PL_PRESENCE_ASK_LISTED, PL_PRESENCE_REMOTE_HOST,
            PL_PRESENCE_REMOTE_SESSION, PL_PRESENCE_NO_TERMINAL, PL_PRESENCE_NO_SESSION, PL_PRESENCE_NOT_LISTED,
            PL_PRESENCE_NO_LOGIND, PL_PRESENCE_NEW_LOGIN, PL_PRESENCE_REAUTH_NO_SESSION,
        ]
        let words = all.map { String(cString: pl_presence_reason($0)) }
        #expect(Set(words).count == all.count)
        #expect(!words.contains("unknown"))
    }

    @Test(
        "local terminals: VTs, ptys and this machine's X displays",
        arguments: [
            ("/dev/tty1", true), ("tty1", true), ("tty63", true), ("/dev/pts/0", true), ("pts/12", true), (":0", true),
            (":1.0", true), (":10", true), ("/dev/tty", false), ("tty", false), ("ttyS0", false), ("/dev/ttyUSB0", false),
            ("/dev/console", false), ("console", false), ("pts/", false), ("/dev/pts/x", false), (":", false),
            (":0.", false), (":.0", false), (":0x", false), ("host:0", false), ("localhost:10.0", false), ("ssh", false),
            ("cron", false), ("", false), ("/dev/tty1 ", false), ("/dev//tty1", false),
        ])
    func localTerminal(tty: String, local: Bool) {
        #expect(pl_local_terminal(tty) == local)
    }

    @Test("no PAM_TTY is no terminal")
    func noTerminal() {
        #expect(!pl_local_terminal(nil))
    }

    @Test(
        "a service is listed only by its whole name",
        arguments: [
            ("sudo,su,login", "su", true), ("sudo,su,login", "login", true), ("sudo,su,login", "sudo", true),
            ("sudo,su,login", "sud", false), ("sudo,su,login", "logins", false), ("sudo", "sudo-i", false),
            ("", "sudo", false), ("sudo", "", false), ("gdm-password", "gdm", false),
        ])
    func listed(list: String, name: String, expected: Bool) {
        #expect(pl_service_listed(list, name) == expected)
    }
}

/// Calls body with a C string for value, or NULL for nil.
private func withOptionalCString<R>(_ value: String?, _ body: (UnsafePointer<CChar>?) -> R) -> R {
    guard let value else { return body(nil) }
    return value.withCString { body($0) }
}
